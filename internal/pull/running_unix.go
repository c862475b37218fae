//go:build unix

package pull

import (
	"errors"
	"syscall"
)

// running reports whether a process with this id runs (or may: one of
// another user's that cannot be signalled counts as running).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

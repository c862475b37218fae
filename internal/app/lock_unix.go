//go:build unix

package app

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDataDir takes the data dir for this process: two loupes writing one
// data dir would corrupt it, so the second is refused while the first runs.
// The lock goes with the process, however it ends.
func lockDataDir(dir string) (*os.File, error) {
	f, err := openLockFile(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &DataDirInUseError{Dir: dir}
		}
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	return f, nil
}

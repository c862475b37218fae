//go:build unix

package functions

import (
	"os/exec"
	"syscall"
)

// interruptGroup starts cmd in a process group of its own and makes its
// context's end send SIGINT to the whole group, as Ctrl-C in a terminal
// would: go build stops together with the compilers and linker it runs.
func interruptGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
}

package functions

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd's process when loupe dies, however
// it dies (kill -9 included), so no functions process outlives it holding
// its port. The kernel sends the signal when the thread that started the
// process ends; Go keeps its threads for the life of the process unless a
// goroutine locked to one ends, which the goroutine starting it is not.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

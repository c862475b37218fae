package functions

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd's process when loupe dies, however
// it dies (kill -9 included), so no functions process outlives it holding
// its port.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

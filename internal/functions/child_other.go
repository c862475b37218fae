//go:build !linux

package functions

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal:
// there the functions process is stopped only by loupe's own shutdown.
func dieWithParent(*exec.Cmd) {}

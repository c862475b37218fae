//go:build !unix

package functions

import (
	"os/exec"
	"syscall"
)

// interruptGroup leaves cmd as it is where there are no process groups: its
// context's end kills the process alone.
func interruptGroup(*exec.Cmd) {}

// signalName describes a signal as the runtime does.
func signalName(sig syscall.Signal) string { return sig.String() }

//go:build !unix

package functions

import "os/exec"

// interruptGroup leaves cmd as it is where there are no process groups: its
// context's end kills the process alone.
func interruptGroup(*exec.Cmd) {}

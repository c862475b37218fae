//go:build !unix

package hub

import "os"

// alive reports whether a process with pid exists: where there is no
// signal 0, finding the process is the test.
func alive(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}

//go:build !unix

package server

// fileLimit reports no limit where there is no RLIMIT_NOFILE (Windows).
func fileLimit() (uint64, bool) { return 0, false }

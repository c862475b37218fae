//go:build !unix

package app

import "os"

// lockDataDir opens the data dir's lock file; without flock it does not
// keep a second loupe out of the data dir.
func lockDataDir(dir string) (*os.File, error) { return openLockFile(dir) }

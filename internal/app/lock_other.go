//go:build !unix

package app

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDataDir opens the data dir's lock file; without flock it does not
// keep a second loupe out of the data dir.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return f, nil
}

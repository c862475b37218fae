package app

import (
	"fmt"
	"os"
	"path/filepath"
)

// openLockFile creates the data dir when needed and opens its lock file.
func openLockFile(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return f, nil
}

// DataDirInUseError is the refusal of a data dir that another loupe holds.
type DataDirInUseError struct{ Dir string }

func (e *DataDirInUseError) Error() string {
	return fmt.Sprintf("data dir %s is in use by another loupe; give this one its own --data-dir, or --in-memory", e.Dir)
}

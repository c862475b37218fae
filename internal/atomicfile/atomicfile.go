// Package atomicfile replaces files so that readers and crashes see the old
// content or the new, never a mix: write a temporary file beside the target,
// sync it, rename it over the target, then sync the folder.
package atomicfile

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data. The temporary file is created in tmpDir
// (which must be on the same file system), or beside path when tmpDir is "".
func Write(path string, data []byte, tmpDir string) error {
	return WriteFunc(path, tmpDir, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path with what fill writes (through a buffer), as
// Write does; when fill fails path is left as it was.
func WriteFunc(path, tmpDir string, fill func(io.Writer) error) error {
	if tmpDir == "" {
		tmpDir = filepath.Dir(path)
	}
	tmp, err := os.CreateTemp(tmpDir, filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		_ = dir.Sync()
		dir.Close()
	}
	return nil
}

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
	return replace(path, tmpDir, true, writeAll(data))
}

// WriteFunc replaces path with what fill writes (through a buffer), as
// Write does; when fill fails path is left as it was.
func WriteFunc(path, tmpDir string, fill func(io.Writer) error) error {
	return replace(path, tmpDir, true, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// WriteUnsynced replaces path with data as Write does but syncs nothing:
// readers and a killed process see the old content or the new, while a
// crash of the machine may lose the change. For data that lives no longer
// than the process (loupe --in-memory).
func WriteUnsynced(path string, data []byte, tmpDir string) error {
	return replace(path, tmpDir, false, writeAll(data))
}

// writeAll is a fill that writes data in one call.
func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// replace writes a temporary file in tmpDir (beside path when "") with fill
// and renames it over path; with sync set, the file is synced before the
// rename and the folder after it.
func replace(path, tmpDir string, sync bool, fill func(io.Writer) error) error {
	if tmpDir == "" {
		tmpDir = filepath.Dir(path)
	}
	tmp, err := os.CreateTemp(tmpDir, filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		_ = dir.Sync()
		dir.Close()
	}
	return nil
}

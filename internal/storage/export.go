package storage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ExportDir is the folder of an export that holds the objects: its buckets/
// folder mirrors the store's (one folder per bucket, each object stored under
// its path-escaped name beside a .meta JSON file of its metadata).
const ExportDir = "storage_export"

// Export implements server.Exporter.
func (s *Service) Export(_ context.Context, dir string) error {
	return copyTree(filepath.Join(s.store.root, "buckets"), filepath.Join(dir, ExportDir, "buckets"))
}

// Import implements server.Importer: the buckets become the export's.
func (s *Service) Import(_ context.Context, dir string) error {
	src := filepath.Join(dir, ExportDir, "buckets")
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	dst := filepath.Join(s.store.root, "buckets")
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return copyTree(src, dst)
}

// Open implements server.Opener: it loads --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.ImportDir == "" {
		return nil
	}
	return s.Import(ctx, s.env.ImportDir)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

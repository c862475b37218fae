package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ExportDir is the folder of an export that holds the objects: its buckets/
// folder mirrors the store's (one folder per bucket, each object stored under
// its path-escaped name beside a .meta JSON file of its metadata).
const ExportDir = "storage_export"

// ExportTo copies the store's objects into dir/storage_export.
func (s *Store) ExportTo(dir string) error {
	return copyTree(filepath.Join(s.root, "buckets"), filepath.Join(dir, ExportDir, "buckets"))
}

// ImportFrom replaces the store's buckets with those of dir/storage_export
// (nothing changes without it). The export is copied beside the store first
// and swapped in whole, so an import that fails part-way (a file missing or
// unreadable, the disk full) leaves the store as it was.
func (s *Store) ImportFrom(dir string) error {
	src := filepath.Join(dir, ExportDir, "buckets")
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	staged, err := os.MkdirTemp(filepath.Join(s.root, "tmp"), "import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staged)
	if err := copyTree(src, filepath.Join(staged, "buckets")); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dst, old := filepath.Join(s.root, "buckets"), filepath.Join(staged, "replaced")
	if err := os.Rename(dst, old); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(staged, "buckets"), dst); err != nil {
		_ = os.Rename(old, dst)
		return err
	}
	return nil
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
		return CopyFile(path, target)
	})
}

// CopyFile copies the file src to dst.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// linkOrCopy makes dst a symbolic link to src, or a copy of it where links
// cannot be made.
func linkOrCopy(src, dst string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	if os.Symlink(abs, dst) == nil {
		return nil
	}
	return CopyFile(src, dst)
}

// ExportedObject is one object of an export in loupe's layout: its metadata
// and the file holding its content.
type ExportedObject struct {
	Object
	Content string
}

// ReadExport lists root/storage_export in loupe's layout: every bucket (an
// empty one too) and every object, sorted by bucket and name. A root without
// storage_export gives an error that is fs.ErrNotExist.
func ReadExport(root string) (buckets []string, objects []ExportedObject, err error) {
	dir := filepath.Join(root, ExportDir, "buckets")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range entries {
		if !b.IsDir() {
			continue
		}
		bucket, err := url.PathUnescape(b.Name())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: bucket folder %q: %w", dir, b.Name(), err)
		}
		buckets = append(buckets, bucket)
		files, err := os.ReadDir(filepath.Join(dir, b.Name()))
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			escaped, ok := strings.CutSuffix(f.Name(), ".meta")
			if !ok {
				continue
			}
			p := filepath.Join(dir, b.Name(), escaped)
			data, err := os.ReadFile(metaPath(p))
			if err != nil {
				return nil, nil, err
			}
			var o Object
			if err := json.Unmarshal(data, &o); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", metaPath(p), err)
			}
			content := contentPath(p, o.Generation)
			if _, err := os.Stat(content); err != nil {
				content = p
			}
			if _, err := os.Stat(content); err != nil {
				return nil, nil, fmt.Errorf("%s: no content for %s/%s", dir, o.Bucket, o.Name)
			}
			objects = append(objects, ExportedObject{Object: o, Content: content})
		}
	}
	sort.Strings(buckets)
	sort.Slice(objects, func(i, j int) bool {
		if objects[i].Bucket != objects[j].Bucket {
			return objects[i].Bucket < objects[j].Bucket
		}
		return objects[i].Name < objects[j].Name
	})
	return buckets, objects, nil
}

// LinkExport writes buckets and objects as root/storage_export in loupe's
// layout for a store to import (Store.ImportFrom): each object's content is
// a symbolic link to its Content file (a copy where the system makes no
// links), so the content is copied once, by the import, and the files
// linked to must stay until then.
func LinkExport(root string, buckets []string, objects []ExportedObject) error {
	dir := filepath.Join(root, ExportDir, "buckets")
	for _, b := range buckets {
		if !ValidBucket(b) {
			return fmt.Errorf("invalid bucket name %q", b)
		}
		if err := os.MkdirAll(filepath.Join(dir, url.PathEscape(b)), 0o755); err != nil {
			return err
		}
	}
	for _, o := range objects {
		if !ValidBucket(o.Bucket) || ValidateName(o.Name) != nil {
			return fmt.Errorf("invalid object %q in bucket %q", o.Name, o.Bucket)
		}
		p := filepath.Join(dir, url.PathEscape(o.Bucket), url.PathEscape(o.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := linkOrCopy(o.Content, contentPath(p, o.Generation)); err != nil {
			return err
		}
		meta, err := json.Marshal(&o.Object)
		if err != nil {
			return err
		}
		if err := os.WriteFile(metaPath(p), meta, 0o644); err != nil {
			return err
		}
	}
	return nil
}

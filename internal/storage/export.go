package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ExportDir is the folder of an export that holds the objects: its objects/
// folder mirrors the store's (layout.go). Exports written before the
// store's files were named by ids hold buckets/ instead (one folder per
// escaped bucket name, each object under its escaped name beside a .meta
// file), which imports convert.
const ExportDir = "storage_export"

// IsExport reports whether dir holds a Storage export in loupe's layout.
func IsExport(dir string) bool {
	for _, d := range []string{objectsDir, legacyDir} {
		if info, err := os.Stat(filepath.Join(dir, ExportDir, d)); err == nil && info.IsDir() {
			return true
		}
	}
	return false
}

// ExportTo copies the store's objects into dir/storage_export.
func (s *Store) ExportTo(dir string) error {
	return copyTree(filepath.Join(s.root, objectsDir), filepath.Join(dir, ExportDir, objectsDir))
}

// ImportFrom replaces the store's buckets with those of dir/storage_export
// (nothing changes without it). The export is copied beside the store
// first (converted, when it is of the legacy layout) and swapped in whole,
// so an import that fails part-way (a file missing or unreadable, the disk
// full) leaves the store as it was.
func (s *Store) ImportFrom(dir string) error {
	src, legacy := filepath.Join(dir, ExportDir, objectsDir), filepath.Join(dir, ExportDir, legacyDir)
	_, err := os.Stat(src)
	_, lerr := os.Stat(legacy)
	if errors.Is(err, fs.ErrNotExist) && errors.Is(lerr, fs.ErrNotExist) {
		return nil
	}
	staged, err := os.MkdirTemp(s.tmp(), "import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staged)
	if lerr == nil {
		err = convertLegacy(legacy, filepath.Join(staged, objectsDir), s.tmp(), CopyFile)
	} else {
		err = copyTree(src, filepath.Join(staged, objectsDir))
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dst, old := filepath.Join(s.root, objectsDir), filepath.Join(staged, "replaced")
	if err := os.Rename(dst, old); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(staged, objectsDir), dst); err != nil {
		_ = os.Rename(old, dst)
		return err
	}
	syncDir(s.root)
	return s.load()
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

// CopyFile copies the file src to dst, synced.
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
	if err := out.Sync(); err != nil {
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

// ReadExport lists root/storage_export in loupe's layout (either): every
// bucket (an empty one too) and every object, sorted by bucket and name. A
// root without storage_export gives an error that is fs.ErrNotExist.
func ReadExport(root string) (buckets []string, objects []ExportedObject, err error) {
	dir, legacy := filepath.Join(root, ExportDir, objectsDir), filepath.Join(root, ExportDir, legacyDir)
	_, err = os.Stat(dir)
	switch _, lerr := os.Stat(legacy); {
	case err == nil:
		buckets, objects, err = readObjects(dir)
	case errors.Is(err, fs.ErrNotExist) && lerr == nil:
		buckets, objects, err = readLegacy(legacy)
	}
	if err != nil {
		return nil, nil, err
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

// readObjects reads the buckets and objects of an objects/ folder.
func readObjects(dir string) (buckets []string, objects []ExportedObject, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range entries {
		if !b.IsDir() {
			continue
		}
		bdir := filepath.Join(dir, b.Name())
		bucket, err := readBucketInfo(bdir)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", bdir, err)
		}
		buckets = append(buckets, bucket)
		files, err := os.ReadDir(bdir)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			if oid, ok := strings.CutSuffix(f.Name(), ".meta"); ok {
				p := filepath.Join(bdir, oid)
				o, err := readExported(metaPath(p), bucket, oid, func(gen int64) string { return contentPath(p, gen) })
				if err != nil {
					return nil, nil, err
				}
				objects = append(objects, o)
			}
		}
	}
	return buckets, objects, nil
}

// readLegacy reads the buckets and objects of a legacy buckets/ folder.
func readLegacy(dir string) (buckets []string, objects []ExportedObject, err error) {
	buckets, files, err := scanLegacy(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	src := map[string]string{} // path in the store's layout → file
	for _, f := range files {
		src[f.dst] = f.src
	}
	for _, f := range files {
		if rel, ok := strings.CutSuffix(f.dst, ".meta"); ok {
			bucket, oid := filepath.Dir(rel), filepath.Base(rel)
			name := bucketOf(buckets, bucket)
			o, err := readExported(f.src, name, oid, func(gen int64) string { return src[contentPath(rel, gen)] })
			if err != nil {
				return nil, nil, err
			}
			objects = append(objects, o)
		}
	}
	return buckets, objects, nil
}

// bucketOf is the bucket of buckets whose id is bid.
func bucketOf(buckets []string, bid string) string {
	for _, b := range buckets {
		if id(b) == bid {
			return b
		}
	}
	return ""
}

// readExported reads an exported object's metadata file, which must name an
// object of bucket whose id is oid, and finds its content with content.
func readExported(meta, bucket, oid string, content func(generation int64) string) (ExportedObject, error) {
	data, err := os.ReadFile(meta)
	if err != nil {
		return ExportedObject{}, err
	}
	var o Object
	if err := json.Unmarshal(data, &o); err != nil {
		return ExportedObject{}, fmt.Errorf("%s: %w", meta, err)
	}
	if o.Bucket != bucket || id(o.Name) != oid {
		return ExportedObject{}, fmt.Errorf("%s: its metadata names %s/%s", meta, o.Bucket, o.Name)
	}
	file := content(o.Generation)
	if _, err := os.Stat(file); file == "" || err != nil {
		return ExportedObject{}, fmt.Errorf("%s: no content for %s/%s", filepath.Dir(meta), o.Bucket, o.Name)
	}
	return ExportedObject{Object: o, Content: file}, nil
}

// LinkExport writes buckets and objects as root/storage_export in loupe's
// layout for a store to import (Store.ImportFrom): each object's content is
// a symbolic link to its Content file (a copy where the system makes no
// links), so the content is copied once, by the import, and the files
// linked to must stay until then.
func LinkExport(root string, buckets []string, objects []ExportedObject) error {
	dir := filepath.Join(root, ExportDir, objectsDir)
	made := map[string]bool{}
	bucketDir := func(b string) (string, error) {
		if !ValidBucket(b) {
			return "", fmt.Errorf("invalid bucket name %q", b)
		}
		d := filepath.Join(dir, id(b))
		if !made[b] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return "", err
			}
			data, _ := json.Marshal(bucketInfo{Name: b})
			if err := os.WriteFile(filepath.Join(d, bucketFile), data, 0o644); err != nil {
				return "", err
			}
			made[b] = true
		}
		return d, nil
	}
	for _, b := range buckets {
		if _, err := bucketDir(b); err != nil {
			return err
		}
	}
	for _, o := range objects {
		d, err := bucketDir(o.Bucket)
		if err != nil {
			return err
		}
		if ValidateName(o.Name) != nil {
			return fmt.Errorf("invalid object %q in bucket %q", o.Name, o.Bucket)
		}
		p := filepath.Join(d, id(o.Name))
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

package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/loupe-dev/loupe/internal/atomicfile"
)

// The store's files (and an export's storage_export/, which mirrors them):
//
//	objects/{bucket id}/bucket.json            {"name": bucket}
//	objects/{bucket id}/{object id}.meta       the object's metadata (JSON)
//	objects/{bucket id}/{object id}#{gen}      the content of generation gen
//
// An id is the SHA-256 of the bucket's or the object's name, in hex: no
// user's name is ever part of a file name, so a name of up to 1,024 bytes,
// names that differ only in case, and names no file system allows all work
// on every file system. The names live in the metadata; the store keeps an
// index of them in memory, read at open, for listings.
//
// Stores (and exports) written before this layout kept each bucket under
// buckets/{escaped bucket}/ with files named by the escaped object name; a
// store is migrated when it opens, an export converted when it is imported.
const (
	objectsDir = "objects"
	legacyDir  = "buckets"
	bucketFile = "bucket.json"
)

// id is the file name of a bucket or object name.
func id(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// bucketInfo is bucket.json.
type bucketInfo struct {
	Name string `json:"name"`
}

// index holds the names of every bucket's objects, sorted, for listings.
type index struct {
	mu      sync.RWMutex
	buckets map[string][]string
}

func (x *index) reset() {
	x.mu.Lock()
	x.buckets = map[string][]string{}
	x.mu.Unlock()
}

func (x *index) addBucket(bucket string) {
	x.mu.Lock()
	if _, ok := x.buckets[bucket]; !ok {
		x.buckets[bucket] = nil
	}
	x.mu.Unlock()
}

func (x *index) add(bucket, name string) {
	x.mu.Lock()
	names := x.buckets[bucket]
	if i, found := slices.BinarySearch(names, name); !found {
		x.buckets[bucket] = slices.Insert(names, i, name)
	}
	x.mu.Unlock()
}

func (x *index) remove(bucket, name string) {
	x.mu.Lock()
	names := x.buckets[bucket]
	if i, found := slices.BinarySearch(names, name); found {
		x.buckets[bucket] = slices.Delete(names, i, i+1)
	}
	x.mu.Unlock()
}

// has reports whether bucket is known (made, or holding objects).
func (x *index) has(bucket string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.buckets[bucket]
	return ok
}

// bucketNames returns the sorted bucket names.
func (x *index) bucketNames() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.buckets))
	for b := range x.buckets {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}

// after calls keep with the names of bucket's objects that start with
// prefix and sort after start, in order, until keep returns false. Names
// are read a batch at a time, so the index is not held while keep runs.
func (x *index) after(bucket, prefix, start string, keep func(name string) bool) {
	const batchSize = 1024
	from := max(prefix, start)
	for {
		x.mu.RLock()
		names := x.buckets[bucket]
		i, _ := slices.BinarySearch(names, from)
		var batch []string
		for ; i < len(names) && len(batch) < batchSize && strings.HasPrefix(names[i], prefix); i++ {
			if names[i] > start {
				batch = append(batch, names[i])
			}
		}
		x.mu.RUnlock()
		for _, n := range batch {
			if !keep(n) {
				return
			}
		}
		if len(batch) < batchSize {
			return
		}
		from, start = batch[len(batch)-1]+"\x00", batch[len(batch)-1]
	}
}

// writeBucketInfo records a bucket's name in its folder.
func writeBucketInfo(dir, bucket, tmp string) error {
	data, _ := json.Marshal(bucketInfo{Name: bucket})
	return atomicfile.Write(filepath.Join(dir, bucketFile), data, tmp)
}

// readBucketInfo reads a bucket folder's name.
func readBucketInfo(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, bucketFile))
	if err != nil {
		return "", err
	}
	var b bucketInfo
	if err := json.Unmarshal(data, &b); err != nil || !ValidBucket(b.Name) {
		return "", fmt.Errorf("%s: not a bucket's name", bucketFile)
	}
	return b.Name, nil
}

// load reads the index from the objects folder and removes the content
// files no metadata names: generations a crash left between renaming their
// content and their metadata into place, or after a newer generation's
// metadata but before the old content's removal. An object whose metadata
// cannot be read stays out of the index, its files kept for repair.
func (s *Store) load() error {
	s.index.reset()
	dirs, err := os.ReadDir(filepath.Join(s.root, objectsDir))
	if err != nil {
		return err
	}
	for _, d := range dirs {
		dir := filepath.Join(s.root, objectsDir, d.Name())
		bucket, err := readBucketInfo(dir)
		if err != nil {
			continue
		}
		s.index.addBucket(bucket)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		generation := map[string]string{} // object id → the generation its metadata names; "" when unreadable
		for _, e := range entries {
			oid, ok := strings.CutSuffix(e.Name(), ".meta")
			if !ok {
				continue
			}
			var o Object
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil || json.Unmarshal(data, &o) != nil || o.Bucket != bucket || id(o.Name) != oid {
				generation[oid] = ""
				continue
			}
			generation[oid] = strconv.FormatInt(o.Generation, 10)
			s.index.add(bucket, o.Name)
		}
		for _, e := range entries {
			oid, gen, ok := strings.Cut(e.Name(), "#")
			if !ok {
				continue
			}
			if want, named := generation[oid]; !named || (want != "" && want != gen) {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	return nil
}

// migrateLegacy moves a store of the layout before ids (buckets/) into
// objects/: the new folder is built in tmp/ with links to the old files
// (copies where links cannot be made) and renamed into place whole, then
// buckets/ is removed. A crash before the rename leaves buckets/ to migrate
// again; after it, only buckets/ to remove.
func (s *Store) migrateLegacy() error {
	legacy, objects := filepath.Join(s.root, legacyDir), filepath.Join(s.root, objectsDir)
	if _, err := os.Stat(legacy); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	entries, err := os.ReadDir(objects)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		staged := filepath.Join(s.root, "tmp", "migrate")
		if err := convertLegacy(legacy, staged, s.tmp(), linkFile); err != nil {
			return fmt.Errorf("migrate the storage data folder: %w", err)
		}
		if err := os.Remove(objects); err != nil {
			return err
		}
		if err := os.Rename(staged, objects); err != nil {
			return err
		}
		syncDir(s.root)
	}
	return os.RemoveAll(legacy)
}

// legacyFile is a file of the legacy layout and its path in the store's
// (relative to objects/).
type legacyFile struct {
	src, dst string
}

// scanLegacy lists the buckets of the legacy layout at src and where each of
// their files goes in the store's layout: every file of an object, its
// metadata (readable or not, so a damaged one stays for repair) and every
// generation of its content.
func scanLegacy(src string) (buckets []string, files []legacyFile, err error) {
	dirs, err := os.ReadDir(src)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range dirs {
		if !b.IsDir() {
			continue
		}
		bucket, err := url.PathUnescape(b.Name())
		if err != nil || !ValidBucket(bucket) {
			return nil, nil, fmt.Errorf("bucket folder %q: not an escaped bucket name", b.Name())
		}
		buckets = append(buckets, bucket)
		from := filepath.Join(src, b.Name())
		entries, err := os.ReadDir(from)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range entries {
			escaped, suffix := f.Name(), ""
			if e, ok := strings.CutSuffix(escaped, ".meta"); ok {
				escaped, suffix = e, ".meta"
			} else if e, gen, ok := strings.Cut(escaped, "#"); ok {
				escaped, suffix = e, "#"+gen
			} else {
				// Content from before generations had their own files.
				suffix = "#" + legacyGeneration(filepath.Join(from, escaped+".meta"))
			}
			name, err := url.PathUnescape(escaped)
			if err != nil {
				return nil, nil, fmt.Errorf("object file %q: not an escaped object name", f.Name())
			}
			files = append(files, legacyFile{src: filepath.Join(from, f.Name()), dst: filepath.Join(id(bucket), id(name)+suffix)})
		}
	}
	return buckets, files, nil
}

// convertLegacy writes the buckets of the legacy layout at src into dst in
// the store's layout, place putting each file at its new path.
func convertLegacy(src, dst, tmp string, place func(src, dst string) error) error {
	buckets, files, err := scanLegacy(src)
	if err != nil {
		return err
	}
	for _, b := range buckets {
		dir := filepath.Join(dst, id(b))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeBucketInfo(dir, b, tmp); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := place(f.src, filepath.Join(dst, f.dst)); err != nil {
			return err
		}
	}
	return nil
}

// legacyGeneration is the generation a legacy metadata file names, "0"
// when it cannot be read.
func legacyGeneration(meta string) string {
	var o Object
	if data, err := os.ReadFile(meta); err == nil && json.Unmarshal(data, &o) == nil {
		return strconv.FormatInt(o.Generation, 10)
	}
	return "0"
}

// linkFile makes dst a hard link to src, or a copy where links cannot be made.
func linkFile(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	return CopyFile(src, dst)
}

// syncDir syncs a folder, so the renames in it last.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

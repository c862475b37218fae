// Package storage is Cloud Storage's core: the Engine (engine.go) holds the
// on-disk object store, resumable upload sessions and the rules checks of
// every operation, and has no transport code; internal/storage/emulator
// serves it as the Firebase REST API (/v0) and the GCS JSON and XML APIs.
//
// Objects are streamed to a temporary file while their MD5 and CRC32C are
// computed, synced, then renamed into place under a name of their own
// generation; metadata lives beside each object in a JSON file written the
// same way and renamed last, naming the generation whose content is whole. So
// a reader, or a restart after a crash, sees the old object or the new one and
// never a mix; a crash leaves at most stray temporary files and content no
// metadata names, both removed at the next start. Files are named by a hash
// of the bucket's and the object's names (layout.go). Resumable upload
// sessions are kept under uploads/ and survive a restart (see session.go).
package storage

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/errs"
)

// Object is an object's metadata.
type Object struct {
	Bucket             string            `json:"bucket"`
	Name               string            `json:"name"`
	Size               int64             `json:"size"`
	ContentType        string            `json:"contentType,omitempty"`
	CacheControl       string            `json:"cacheControl,omitempty"`
	ContentDisposition string            `json:"contentDisposition,omitempty"`
	ContentEncoding    string            `json:"contentEncoding,omitempty"`
	ContentLanguage    string            `json:"contentLanguage,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	MD5                []byte            `json:"md5"`
	CRC32C             uint32            `json:"crc32c"`
	Generation         int64             `json:"generation"`
	Metageneration     int64             `json:"metageneration"`
	Created            time.Time         `json:"created"`
	Updated            time.Time         `json:"updated"`
}

// TokenKey is the custom metadata key holding download tokens.
const TokenKey = "firebaseStorageDownloadTokens"

// Tokens returns the object's download tokens.
func (o *Object) Tokens() []string {
	if o.Metadata[TokenKey] == "" {
		return nil
	}
	return strings.Split(o.Metadata[TokenKey], ",")
}

// Error kinds of the store.
var (
	ErrNotFound    = errors.New("object not found")
	ErrInvalidName = errors.New("invalid object name")
)

// ValidateName checks an object name: non-empty, at most 1024 bytes of UTF-8,
// no control characters, no "." or ".." segments.
func ValidateName(name string) error {
	switch {
	case name == "" || len(name) > 1024 || !utf8.ValidString(name):
		return ErrInvalidName
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return ErrInvalidName
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." || seg == ".." {
			return ErrInvalidName
		}
	}
	return nil
}

// ValidBucket reports whether b is a bucket name the store accepts.
func ValidBucket(b string) bool {
	return b != "" && len(b) <= 222 && !strings.ContainsAny(b, "/\\") && b != "." && b != ".." && utf8.ValidString(b)
}

// Store keeps objects under a root folder.
type Store struct {
	root string
	// mu is held shared by each change of one object and exclusively by
	// the changes of the whole store (Reset, ImportFrom, CreateBucket).
	mu sync.RWMutex
	// objectLocks serialise the generation numbers and renames of one
	// object (lockObject picks one by the name's hash), so that writers of
	// different objects sync their files in parallel.
	objectLocks [64]sync.Mutex
	index       index
	// volatile skips every sync: the store lives no longer than the
	// process (loupe --in-memory), and a killed process loses nothing that
	// the page cache holds.
	volatile bool
	// changed, when set, is told of each object written (finalized), whose
	// metadata changed (metadataUpdated) or deleted (deleted, with the
	// object as it was), once the change is on disk.
	changed func(change string, o Object)
}

// lockObject locks the object bucket/name against other changes of it and
// of the whole store, and returns the unlock.
func (s *Store) lockObject(bucket, name string) (unlock func()) {
	h := fnv.New32a()
	h.Write([]byte(bucket))
	h.Write([]byte{0})
	h.Write([]byte(name))
	m := &s.objectLocks[h.Sum32()%uint32(len(s.objectLocks))]
	s.mu.RLock()
	m.Lock()
	return func() {
		m.Unlock()
		s.mu.RUnlock()
	}
}

// OnChange has f told of each object change (see Store.changed); set it
// before the store is used.
func (s *Store) OnChange(f func(change string, o Object)) { s.changed = f }

// tell reports a change to the hook, if any.
func (s *Store) tell(change string, o *Object) {
	if s.changed != nil {
		s.changed(change, *o)
	}
}

// OpenStore opens (creating) a store, removes temporary files a crash left,
// migrates a store of the layout before ids, and reads the index.
func OpenStore(root string) (*Store, error) { return openStore(root, false) }

// OpenVolatileStore opens a store whose writes are never synced to disk,
// for a folder that is removed when the process ends.
func OpenVolatileStore(root string) (*Store, error) { return openStore(root, true) }

func openStore(root string, volatile bool) (*Store, error) {
	for _, d := range []string{objectsDir, "tmp", "uploads"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, fmt.Errorf("storage data folder: %w", err)
		}
	}
	tmp := filepath.Join(root, "tmp")
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
	s := &Store{root: root, volatile: volatile}
	if err := s.migrateLegacy(); err != nil {
		return nil, fmt.Errorf("storage data folder: %w", err)
	}
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("storage data folder: %w", err)
	}
	s.expireSessions()
	return s, nil
}

func (s *Store) tmp() string { return filepath.Join(s.root, "tmp") }

// bucketPath is a bucket's folder.
func (s *Store) bucketPath(bucket string) string {
	return filepath.Join(s.root, objectsDir, id(bucket))
}

// objectPath is the path an object's files start with.
func (s *Store) objectPath(bucket, name string) string {
	return filepath.Join(s.bucketPath(bucket), id(name))
}

func metaPath(p string) string { return p + ".meta" }

// contentPath is where one generation's content lives.
func contentPath(p string, generation int64) string {
	return p + "#" + strconv.FormatInt(generation, 10)
}

// BucketExists reports whether a bucket has been made or has held an object.
func (s *Store) BucketExists(bucket string) bool {
	return ValidBucket(bucket) && s.index.has(bucket)
}

// Buckets lists the buckets, sorted.
func (s *Store) Buckets() []string { return s.index.bucketNames() }

// CreateBucket makes an empty bucket.
func (s *Store) CreateBucket(bucket string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ensureBucket(bucket)
}

// ensureBucket makes bucket's folder, with its name, unless it exists; two
// writers of a new bucket's objects may both make it, to the same end.
func (s *Store) ensureBucket(bucket string) error {
	if s.index.has(bucket) {
		return nil
	}
	dir := s.bucketPath(bucket)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeBucketInfo(dir, bucket, s.tmp()); err != nil {
		return err
	}
	s.index.addBucket(bucket)
	return nil
}

// Get returns an object's metadata.
func (s *Store) Get(bucket, name string) (*Object, error) {
	if !ValidBucket(bucket) || ValidateName(name) != nil {
		return nil, ErrNotFound
	}
	data, err := os.ReadFile(metaPath(s.objectPath(bucket, name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var o Object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("metadata of %s/%s: %w", bucket, name, err)
	}
	if o.Bucket != bucket || o.Name != name {
		return nil, fmt.Errorf("metadata of %s/%s names %s/%s", bucket, name, o.Bucket, o.Name)
	}
	return &o, nil
}

// Open returns an object's metadata and its content, which the caller closes.
// Both are of the same generation, even while the object is being replaced.
func (s *Store) Open(bucket, name string) (*Object, *os.File, error) {
	return s.OpenRead(nil, bucket, name)
}

// OpenRead is Open for a caller that has just read the object's metadata
// (o, or nil): o's generation is opened without reading the metadata again,
// and only when that generation was replaced meanwhile is the current one
// read and returned.
func (s *Store) OpenRead(o *Object, bucket, name string) (*Object, *os.File, error) {
	p := s.objectPath(bucket, name)
	for attempt := 0; ; attempt++ {
		if o == nil {
			var err error
			if o, err = s.Get(bucket, name); err != nil {
				return nil, nil, err
			}
		}
		f, err := os.Open(contentPath(p, o.Generation))
		if errors.Is(err, fs.ErrNotExist) {
			if attempt < 3 {
				o = nil // replaced between reading metadata and content
				continue
			}
			return nil, nil, ErrNotFound
		}
		return o, f, err
	}
}

// Pending is an object being written: content goes to a temporary file.
type Pending struct {
	store *Store
	f     *os.File
	md5   hash.Hash
	crc   hash.Hash32
	size  int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewPending starts writing an object's content.
func (s *Store) NewPending() (*Pending, error) {
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	f, err := os.Create(filepath.Join(s.root, "tmp", hex.EncodeToString(id)))
	if err != nil {
		return nil, err
	}
	return &Pending{store: s, f: f, md5: md5.New(), crc: crc32.New(castagnoli)}, nil
}

// Write appends content, hashing it on the way.
func (p *Pending) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	p.md5.Write(b[:n])
	p.crc.Write(b[:n])
	p.size += int64(n)
	return n, err
}

// Size is the number of bytes written so far.
func (p *Pending) Size() int64 { return p.size }

// readFrom appends r's content. A read that fails (a client's body that
// broke off) is InvalidArgument; a write that fails (the disk) is Internal.
func (p *Pending) readFrom(r io.Reader) error {
	src := &readErr{r: r}
	if _, err := io.Copy(struct{ io.Writer }{p}, src); err != nil {
		if src.err != nil {
			return &errs.Error{Kind: errs.InvalidArgument, Message: "Upload interrupted.", Cause: err}
		}
		return internalError("store the upload", err)
	}
	return nil
}

// readErr remembers the error of its reader's Read.
type readErr struct {
	r   io.Reader
	err error
}

func (x *readErr) Read(b []byte) (int, error) {
	n, err := x.r.Read(b)
	if err != nil && err != io.EOF {
		x.err = err
	}
	return n, err
}

// Discard drops the content.
func (p *Pending) Discard() {
	p.f.Close()
	os.Remove(p.f.Name())
}

// Commit makes the content the object named in meta, replacing any previous
// generation: content first, then metadata, each synced and renamed.
func (p *Pending) Commit(meta Object) (*Object, error) {
	defer os.Remove(p.f.Name())
	if !p.store.volatile {
		if err := p.f.Sync(); err != nil {
			p.f.Close()
			return nil, err
		}
	}
	if err := p.f.Close(); err != nil {
		return nil, err
	}
	s := p.store
	defer s.lockObject(meta.Bucket, meta.Name)()
	now := time.Now().UTC()
	meta.Size, meta.MD5, meta.CRC32C = p.size, p.md5.Sum(nil), p.crc.Sum32()
	meta.Created, meta.Updated, meta.Metageneration = now, now, 1
	meta.Generation = now.UnixMicro()
	old, err := s.Get(meta.Bucket, meta.Name)
	if err == nil && old.Generation >= meta.Generation {
		meta.Generation = old.Generation + 1
	}
	target := s.objectPath(meta.Bucket, meta.Name)
	if err := s.ensureBucket(meta.Bucket); err != nil {
		return nil, err
	}
	if err := os.Rename(p.f.Name(), contentPath(target, meta.Generation)); err != nil {
		return nil, err
	}
	if err := s.writeMeta(&meta); err != nil {
		_ = os.Remove(contentPath(target, meta.Generation))
		return nil, err
	}
	s.index.add(meta.Bucket, meta.Name)
	if old != nil {
		_ = os.Remove(contentPath(target, old.Generation))
	}
	s.tell("finalized", &meta)
	return &meta, nil
}

func (s *Store) writeMeta(o *Object) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return s.replaceFile(metaPath(s.objectPath(o.Bucket, o.Name)), data)
}

// replaceFile replaces a file of the store whole (atomicfile), synced
// unless the store is volatile.
func (s *Store) replaceFile(path string, data []byte) error {
	if s.volatile {
		return atomicfile.WriteUnsynced(path, data, s.tmp())
	}
	return atomicfile.Write(path, data, s.tmp())
}

// Update changes an object's metadata with f and bumps its metageneration.
func (s *Store) Update(bucket, name string, f func(*Object)) (*Object, error) {
	defer s.lockObject(bucket, name)()
	o, err := s.Get(bucket, name)
	if err != nil {
		return nil, err
	}
	f(o)
	o.Metageneration++
	o.Updated = time.Now().UTC()
	if err := s.writeMeta(o); err != nil {
		return o, err
	}
	s.tell("metadataUpdated", o)
	return o, nil
}

// Reset removes every bucket, object and upload session.
func (s *Store) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index.reset()
	for _, d := range []string{objectsDir, "uploads"} {
		if err := os.RemoveAll(filepath.Join(s.root, d)); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(s.root, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes an object.
func (s *Store) Delete(bucket, name string) error {
	defer s.lockObject(bucket, name)()
	o, err := s.Get(bucket, name)
	if err != nil {
		return err
	}
	p := s.objectPath(bucket, name)
	if err := os.Remove(metaPath(p)); err != nil {
		return err
	}
	s.index.remove(bucket, name)
	_ = os.Remove(contentPath(p, o.Generation))
	s.tell("deleted", o)
	return nil
}

// List returns the objects of a bucket under prefix, sorted by name. With a
// delimiter, names that continue past it after the prefix are folded into
// prefixes. It returns at most max objects after pageToken (a name).
func (s *Store) List(bucket, prefix, delimiter, pageToken string, max int) (objects []*Object, prefixes []string, next string) {
	seen := map[string]bool{}
	s.index.after(bucket, prefix, pageToken, func(name string) bool {
		if delimiter != "" {
			if i := strings.Index(name[len(prefix):], delimiter); i >= 0 {
				p := name[:len(prefix)+i+len(delimiter)]
				if !seen[p] {
					seen[p] = true
					prefixes = append(prefixes, p)
				}
				return true
			}
		}
		if max > 0 && len(objects) == max {
			next = objects[len(objects)-1].Name
			return false
		}
		if o, err := s.Get(bucket, name); err == nil { // deleted meanwhile, or damaged: left out
			objects = append(objects, o)
		}
		return true
	})
	return objects, prefixes, next
}

// copyTo writes r into a new pending object; errors as Pending.readFrom's.
func (s *Store) copyTo(r io.Reader) (*Pending, error) {
	p, err := s.NewPending()
	if err != nil {
		return nil, internalError("store the upload", err)
	}
	if err := p.readFrom(r); err != nil {
		p.Discard()
		return nil, err
	}
	return p, nil
}

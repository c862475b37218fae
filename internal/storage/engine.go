package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// Access is one request for rules to judge.
type Access struct {
	Caller identity.Principal
	// Method is get, list, create, update or delete.
	Method       string
	Bucket, Name string
	Existing     *Object // nil when there is none
	Incoming     *Object // the object a write would leave (size, contentType, metadata)
}

// Authorizer judges requests by callers other than the owner; it returns an
// error to deny.
type Authorizer interface {
	Authorize(ctx context.Context, a Access) error
}

// Engine is Storage's core: the object store, resumable upload sessions,
// and the rules checks of every operation. It has no transport code: the
// Firebase and GCS adapters call it with the caller they authenticated.
type Engine struct {
	store     *Store
	authorize Authorizer
	mu        sync.Mutex
	uploads   map[string]*Upload
	startMu   sync.Mutex // one upload session starts at a time, within maxOpenUploads
}

// NewEngine opens (creating) the store under root.
func NewEngine(root string) (*Engine, error) { return newEngine(OpenStore(root)) }

// NewVolatileEngine opens an engine over a volatile store in root (see
// OpenVolatileStore): loupe --in-memory.
func NewVolatileEngine(root string) (*Engine, error) { return newEngine(OpenVolatileStore(root)) }

func newEngine(st *Store, err error) (*Engine, error) {
	if err != nil {
		return nil, err
	}
	return &Engine{store: st, uploads: map[string]*Upload{}}, nil
}

// SetAuthorizer sets who judges callers other than the owner (nil allows all).
func (e *Engine) SetAuthorizer(a Authorizer) { e.authorize = a }

// Store is the engine's object store.
func (e *Engine) Store() *Store { return e.store }

// Check judges a: the owner, and everyone when there are no rules, may.
func (e *Engine) Check(ctx context.Context, a Access) error {
	if a.Caller.Owner || e.authorize == nil {
		return nil
	}
	if err := e.authorize.Authorize(ctx, a); err != nil {
		verb := "READ"
		switch a.Method {
		case "list":
			verb = "LIST"
		case "create", "update", "delete":
			verb = "WRITE"
		}
		return errs.New(errs.PermissionDenied, "Permission denied. No "+verb+" permission.")
	}
	return nil
}

func notFound(msg string) error { return errs.New(errs.NotFound, msg) }

// internalError is a failure of the data dir (the disk, a damaged file),
// worded for clients without the server's paths: the operation and the
// system's reason. The cause stays for the log.
func internalError(op string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		// As Firestore and Auth answer a full disk: RESOURCE_EXHAUSTED
		// (429), and nothing of the write is kept.
		return &errs.Error{Kind: errs.ResourceExhausted, Message: "The disk of loupe's data dir is full; could not " + op + ".", Cause: err}
	}
	return &errs.Error{Kind: errs.Internal, Message: "Could not " + op + ": " + reason(err) + ".", Cause: err}
}

// reason is what went wrong in err, without the file names that errors of
// the os package carry.
func reason(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var je *json.SyntaxError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	case errors.As(err, &se):
		return se.Err.Error()
	case errors.As(err, &je):
		return "damaged metadata"
	}
	return "internal error"
}

// Get returns an object's metadata for caller. A missing object is judged
// too, so rules that deny the read answer "denied" rather than "missing".
func (e *Engine) Get(ctx context.Context, caller identity.Principal, bucket, name string) (*Object, error) {
	o, err := e.store.Get(bucket, name)
	if errors.Is(err, ErrNotFound) {
		if err := e.Check(ctx, Access{Caller: caller, Method: "get", Bucket: bucket, Name: name}); err != nil {
			return nil, err
		}
		return nil, notFound("Not Found.  Could not get object")
	}
	if err != nil {
		return nil, internalError("read the metadata of "+bucket+"/"+name, err)
	}
	if err := e.Check(ctx, Access{Caller: caller, Method: "get", Bucket: bucket, Name: name, Existing: o}); err != nil {
		return nil, err
	}
	return o, nil
}

// GetWithToken returns an object's metadata for a download by token: a
// token of the object lets anyone read it.
func (e *Engine) GetWithToken(bucket, name, token string) (*Object, error) {
	o, err := e.store.Get(bucket, name)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("Not Found.  Could not get object")
	}
	if err != nil {
		return nil, internalError("read the metadata of "+bucket+"/"+name, err)
	}
	if !slices.Contains(o.Tokens(), token) {
		return nil, errs.New(errs.PermissionDenied, "Permission denied. Invalid download token.")
	}
	return o, nil
}

// Open returns an object's metadata and content (no rules: callers have
// judged the read).
func (e *Engine) Open(bucket, name string) (*Object, *os.File, error) {
	return e.store.Open(bucket, name)
}

// OpenRead returns the content of o, whose read the caller has judged, and
// the metadata of the generation it is: o's, or, when o was replaced
// meanwhile, the current one (see Store.OpenRead).
func (e *Engine) OpenRead(o *Object) (*Object, *os.File, error) {
	return e.store.OpenRead(o, o.Bucket, o.Name)
}

// List lists a bucket for caller (judged as a list of prefix).
func (e *Engine) List(ctx context.Context, caller identity.Principal, bucket, prefix, delimiter, pageToken string, max int) ([]*Object, []string, string, error) {
	if err := e.Check(ctx, Access{Caller: caller, Method: "list", Bucket: bucket, Name: prefix}); err != nil {
		return nil, nil, "", err
	}
	objects, prefixes, next := e.store.List(bucket, prefix, delimiter, pageToken, max)
	return objects, prefixes, next, nil
}

// writeAccess is the access an upload of meta asks for: a create, with the
// object it would replace as the existing resource (as the emulator judges
// overwrites); metadata updates are the only "update".
func (e *Engine) writeAccess(caller identity.Principal, meta Object) Access {
	a := Access{Caller: caller, Method: "create", Bucket: meta.Bucket, Name: meta.Name, Incoming: &meta}
	if old, err := e.store.Get(meta.Bucket, meta.Name); err == nil {
		a.Existing = old
	}
	return a
}

// DefaultContentType is the content type of an object uploaded without one.
const DefaultContentType = "application/octet-stream"

func validObject(meta Object) error {
	if ValidateName(meta.Name) != nil || !ValidBucket(meta.Bucket) {
		return &errs.Error{Kind: errs.InvalidArgument, Message: fmt.Sprintf("Invalid object name: %q", meta.Name), Cause: ErrInvalidName}
	}
	return nil
}

// Create streams content into a new object for caller. The write is judged
// before the content arrives when its size is declared (size ≥ 0), and
// always with the size received before it is committed, so a client cannot
// pass a size limit by announcing less or nothing; refused content is removed.
func (e *Engine) Create(ctx context.Context, caller identity.Principal, meta Object, content io.Reader, size int64) (*Object, error) {
	if err := validObject(meta); err != nil {
		return nil, err
	}
	if meta.ContentType == "" {
		meta.ContentType = DefaultContentType
	}
	if size >= 0 {
		meta.Size = size
		if err := e.Check(ctx, e.writeAccess(caller, meta)); err != nil {
			return nil, err
		}
	}
	pending, err := e.store.copyTo(content)
	if err != nil {
		return nil, err
	}
	if pending.Size() != size {
		meta.Size = pending.Size()
		if err := e.Check(ctx, e.writeAccess(caller, meta)); err != nil {
			pending.Discard()
			return nil, err
		}
	}
	return e.commit(pending, meta)
}

// Copy makes a copy of the object srcBucket/srcName for caller, with edit
// giving the copy its bucket, name and metadata; judged as a read of the
// source and a create of the copy.
func (e *Engine) Copy(ctx context.Context, caller identity.Principal, srcBucket, srcName string, edit func(*Object)) (*Object, error) {
	src, err := e.Get(ctx, caller, srcBucket, srcName)
	if err != nil {
		return nil, err
	}
	meta := *src
	meta.Metadata = cloneMap(src.Metadata)
	edit(&meta)
	if err := validObject(meta); err != nil {
		return nil, err
	}
	if err := e.Check(ctx, e.writeAccess(caller, meta)); err != nil {
		return nil, err
	}
	_, f, err := e.store.Open(srcBucket, srcName)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("Not Found.  Could not get object")
	}
	if err != nil {
		return nil, internalError("read the source object", err)
	}
	defer f.Close()
	pending, err := e.store.copyTo(f)
	if err != nil {
		return nil, err
	}
	return e.commit(pending, meta)
}

// commit makes pending's content the object meta names: the one place an
// object is finalized (uploads, resumable uploads and copies).
func (e *Engine) commit(p *Pending, meta Object) (*Object, error) {
	o, err := p.Commit(meta)
	if err != nil {
		return nil, internalError("store the object", err)
	}
	return o, nil
}

// Update applies edit to an object's metadata for caller, judged as an
// update with the object before and after.
func (e *Engine) Update(ctx context.Context, caller identity.Principal, bucket, name string, edit func(*Object)) (*Object, error) {
	old, err := e.store.Get(bucket, name)
	if errors.Is(err, ErrNotFound) {
		if err := e.Check(ctx, Access{Caller: caller, Method: "update", Bucket: bucket, Name: name}); err != nil {
			return nil, err
		}
		return nil, notFound("Not Found.")
	}
	if err != nil {
		return nil, internalError("read the metadata", err)
	}
	next := *old
	next.Metadata = cloneMap(old.Metadata)
	edit(&next)
	if err := e.Check(ctx, Access{Caller: caller, Method: "update", Bucket: bucket, Name: name, Existing: old, Incoming: &next}); err != nil {
		return nil, err
	}
	return e.update(bucket, name, edit)
}

// update applies edit to an object's metadata and bumps its metageneration:
// the one place metadata changes (updates, download tokens, ACLs).
func (e *Engine) update(bucket, name string, edit func(*Object)) (*Object, error) {
	o, err := e.store.Update(bucket, name, edit)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("Not Found.")
	}
	if err != nil {
		return nil, internalError("update the metadata", err)
	}
	return o, nil
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Delete removes an object for caller: the one place an object is deleted.
// A missing object is judged too, so rules that deny answer "denied".
func (e *Engine) Delete(ctx context.Context, caller identity.Principal, bucket, name string) error {
	old, err := e.store.Get(bucket, name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return internalError("read the metadata", err)
	}
	if err := e.Check(ctx, Access{Caller: caller, Method: "delete", Bucket: bucket, Name: name, Existing: old}); err != nil {
		return err
	}
	if old == nil {
		return notFound("Not Found.")
	}
	err = e.store.Delete(bucket, name)
	if errors.Is(err, ErrNotFound) {
		return notFound("Not Found.")
	}
	if err != nil {
		return internalError("delete the object", err)
	}
	return nil
}

// NewToken is a new download token (or upload id): a random UUID.
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// EnsureToken gives o a download token when it has none.
func EnsureToken(o *Object) {
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if o.Metadata[TokenKey] == "" {
		o.Metadata[TokenKey] = NewToken()
	}
}

// AddToken adds a download token to an object (owner-level).
func (e *Engine) AddToken(bucket, name string) (*Object, error) {
	return e.setTokens(bucket, name, func(t []string) []string { return append(t, NewToken()) })
}

// DeleteToken removes a download token; the last one is replaced by a new one.
func (e *Engine) DeleteToken(bucket, name, token string) (*Object, error) {
	return e.setTokens(bucket, name, func(t []string) []string {
		t = slices.DeleteFunc(t, func(x string) bool { return x == token })
		if len(t) == 0 {
			t = []string{NewToken()}
		}
		return t
	})
}

func (e *Engine) setTokens(bucket, name string, f func([]string) []string) (*Object, error) {
	return e.update(bucket, name, func(o *Object) {
		tokens := f(o.Tokens())
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		o.Metadata[TokenKey] = strings.Join(tokens, ",")
	})
}

// WithToken returns o, given a download token first if it has none (as
// Firebase Storage does when an object's metadata is read).
func (e *Engine) WithToken(o *Object) (*Object, error) {
	if len(o.Tokens()) > 0 {
		return o, nil
	}
	return e.update(o.Bucket, o.Name, EnsureToken)
}

// Touch bumps an object's metageneration without changing its metadata, as
// a change GCS keeps elsewhere (an ACL) does (owner-level).
func (e *Engine) Touch(bucket, name string) (*Object, error) {
	return e.update(bucket, name, func(*Object) {})
}

// Reset removes every object and upload, as the official emulator's reset.
func (e *Engine) Reset() error {
	e.mu.Lock()
	for _, u := range e.uploads {
		if u.mu.TryLock() { // one busy with a request fails on its own
			if u.pending != nil {
				u.pending.Discard()
			}
			u.mu.Unlock()
		}
	}
	e.uploads = map[string]*Upload{}
	e.mu.Unlock()
	if err := e.store.Reset(); err != nil {
		return internalError("reset the store", err)
	}
	return nil
}

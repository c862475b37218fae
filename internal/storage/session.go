package storage

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// Resumable upload sessions live on disk so that they survive a restart of
// loupe, as GCS sessions survive a server's: uploads/{id} holds the bytes
// received so far and uploads/{id}.json the session (the object to create,
// who started it, and how it ended: finalized, refused or cancelled).
// Sessions expire after a week, as in GCS; expired ones are removed when the
// store opens.
//
// A session is active until it is finalized (final: the object, or the
// rules' refusal, which a repeated finalize answers again) or cancelled.
// Rules judge the upload once, at finalize, with the whole content, as the
// official emulator does: starting one is never refused by rules.

// sessionLifetime is how long an upload session can be resumed.
const sessionLifetime = 7 * 24 * time.Hour

// session is a resumable upload's state as stored.
type session struct {
	Meta Object `json:"meta"`
	GCS  bool   `json:"gcs,omitempty"` // a GCS JSON API session (else Firebase)
	// Caller is who started the upload: rules judge the finalize as them
	// when it carries no credential of its own.
	Caller    identity.Principal `json:"caller"`
	Done      *Object            `json:"done,omitempty"`      // the object, once finalized
	Refused   string             `json:"refused,omitempty"`   // the rules' denial at finalize
	Cancelled bool               `json:"cancelled,omitempty"` // cancelled by the client
}

// Upload states, as X-Goog-Upload-Status names them.
const (
	StatusActive    = "active"
	StatusFinal     = "final"
	StatusCancelled = "cancelled"
)

// Errors of commands that do not fit a session's state: each is
// FailedPrecondition (400 in both APIs).
var (
	ErrUploadNotActive      = errs.New(errs.FailedPrecondition, "The upload is not active.")
	ErrUploadNotCancellable = errs.New(errs.FailedPrecondition, "A finalized upload cannot be cancelled.")
)

// Upload is a resumable upload in progress: its state, its content and a
// lock that serialises its requests.
type Upload struct {
	mu sync.Mutex
	id string
	session
	pending  *Pending  // nil once done
	lastUsed time.Time // the start of its last request; guarded by Engine.mu
	released bool      // its file was closed while idle: load it again; guarded by mu
}

// Bounds of the sessions one client holds open: past maxOpenUploads active
// ones, starting another is refused; one without a request for
// uploadIdleAfter closes its file and stops counting (it is reopened from
// disk when the client comes back), so that stalled or abandoned uploads
// cannot take every file descriptor.
const (
	maxOpenUploads  = 32
	uploadIdleAfter = 2 * time.Minute
)

// uploadClient names who an upload's session counts against.
func uploadClient(p identity.Principal) string {
	if p.Owner {
		return "\x00owner"
	}
	return p.UID
}

// admitUpload releases idle sessions and reports whether caller may open
// another; e.mu is held.
func (e *Engine) admitUpload(caller identity.Principal, now time.Time) bool {
	open, client := 0, uploadClient(caller)
	for id, u := range e.uploads {
		mine := uploadClient(u.session.Caller) == client
		if !u.mu.TryLock() {
			if mine {
				open++ // a request is at it
			}
			continue
		}
		switch {
		case u.pending == nil: // finished
		case now.Sub(u.lastUsed) > uploadIdleAfter:
			u.pending.f.Close()
			u.released = true
			delete(e.uploads, id)
		case mine:
			open++
		}
		u.mu.Unlock()
	}
	return open < maxOpenUploads
}

// ID is the session's id.
func (u *Upload) ID() string { return u.id }

// Meta is the object the upload will create.
func (u *Upload) Meta() Object { return u.session.Meta }

// Done is the object once the upload is finalized, else nil.
func (u *Upload) Done() *Object { return u.session.Done }

// Caller is who started the upload.
func (u *Upload) Caller() identity.Principal { return u.session.Caller }

// Status is the session's state: StatusActive, StatusFinal (finalized or
// refused) or StatusCancelled.
func (u *Upload) Status() string {
	switch {
	case u.session.Done != nil || u.session.Refused != "":
		return StatusFinal
	case u.session.Cancelled:
		return StatusCancelled
	}
	return StatusActive
}

// Received is the number of content bytes received so far.
func (u *Upload) Received() int64 {
	switch {
	case u.session.Done != nil:
		return u.session.Done.Size
	case u.pending != nil:
		return u.pending.Size()
	}
	return 0
}

// Append adds content to an active session; on error the bytes that
// arrived stay (the client asks how many, and resumes from there). A body
// that breaks off is InvalidArgument; a write the disk refuses is Internal.
func (u *Upload) Append(r io.Reader) error {
	if u.Status() != StatusActive {
		return ErrUploadNotActive
	}
	return u.pending.readFrom(r)
}

// Unlock releases the session that Engine.Upload locked.
func (u *Upload) Unlock() { u.mu.Unlock() }

// validSessionID accepts the ids NewToken makes (hex digits and dashes).
func validSessionID(id string) bool {
	return len(id) == 36 && strings.Trim(id, "0123456789abcdef-") == ""
}

func (s *Store) sessionPath(id string) string { return filepath.Join(s.root, "uploads", id) }

func (s *Store) saveSession(id string, st session) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.replaceFile(s.sessionPath(id)+".json", data)
}

// createSession records a new session and opens its empty content file.
func (s *Store) createSession(id string, st session) (*Pending, error) {
	f, err := os.OpenFile(s.sessionPath(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create upload session: %w", err)
	}
	if err := s.saveSession(id, st); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("create upload session: %w", err)
	}
	return &Pending{store: s, f: f, md5: md5.New(), crc: crc32.New(castagnoli)}, nil
}

// loadSession reopens a stored session, hashing the content received so far;
// ErrNotFound when there is none.
func (s *Store) loadSession(id string) (*Upload, error) {
	if !validSessionID(id) {
		return nil, ErrNotFound
	}
	data, err := os.ReadFile(s.sessionPath(id) + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load upload session: %w", err)
	}
	u := &Upload{id: id}
	if err := json.Unmarshal(data, &u.session); err != nil {
		return nil, fmt.Errorf("load upload session %s: %w", id, err)
	}
	if u.Status() != StatusActive {
		return u, nil
	}
	f, err := os.OpenFile(s.sessionPath(id), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("load upload session: %w", err)
	}
	p := &Pending{store: s, f: f, md5: md5.New(), crc: crc32.New(castagnoli)}
	n, err := io.Copy(io.MultiWriter(p.md5, p.crc), f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load upload session: %w", err)
	}
	p.size = n
	u.pending = p
	return u, nil
}

// dropSession removes a session's files.
func (s *Store) dropSession(id string) {
	os.Remove(s.sessionPath(id))
	os.Remove(s.sessionPath(id) + ".json")
}

// expireSessions removes sessions older than sessionLifetime.
func (s *Store) expireSessions() {
	entries, _ := os.ReadDir(filepath.Join(s.root, "uploads"))
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > sessionLifetime {
			os.Remove(filepath.Join(s.root, "uploads", e.Name()))
		}
	}
}

// StartUpload begins a resumable upload of meta for caller. Only the name is
// checked now: rules judge the upload at finalize.
func (e *Engine) StartUpload(caller identity.Principal, meta Object, gcs bool) (*Upload, error) {
	if err := validObject(meta); err != nil {
		return nil, err
	}
	e.startMu.Lock()
	defer e.startMu.Unlock()
	e.mu.Lock()
	admitted := e.admitUpload(caller, time.Now())
	e.mu.Unlock()
	if !admitted {
		return nil, errs.New(errs.ResourceExhausted, fmt.Sprintf("Too many resumable uploads in progress (at most %d at once per client); finish or cancel some first.", maxOpenUploads))
	}
	u := &Upload{id: NewToken(), session: session{Meta: meta, GCS: gcs, Caller: caller}, lastUsed: time.Now()}
	p, err := e.store.createSession(u.id, u.session)
	if err != nil {
		return nil, internalError("start the upload", err)
	}
	u.pending = p
	e.mu.Lock()
	e.uploads[u.id] = u
	e.mu.Unlock()
	return u, nil
}

// Upload finds an upload session of the GCS API (gcs) or the Firebase API
// by id, reloading it from disk after a restart, and locks it; the caller
// unlocks it. Nil when there is none.
func (e *Engine) Upload(id string, gcs bool) *Upload {
	e.mu.Lock()
	u := e.uploads[id]
	if u != nil {
		u.lastUsed = time.Now()
	}
	e.mu.Unlock()
	if u == nil {
		// Reloading hashes what was received: do it outside the engine lock.
		loaded, err := e.store.loadSession(id)
		if err != nil {
			return nil
		}
		e.mu.Lock()
		if u = e.uploads[id]; u == nil {
			u = loaded
			u.lastUsed = time.Now()
			e.uploads[id] = u
		} else if loaded.pending != nil {
			loaded.pending.f.Close() // another request reloaded it first
		}
		e.mu.Unlock()
	}
	u.mu.Lock()
	if u.released { // closed while idle, before this request locked it
		u.mu.Unlock()
		return e.Upload(id, gcs)
	}
	if u.session.GCS != gcs {
		u.mu.Unlock()
		return nil
	}
	return u
}

// FinishUpload commits an active session's content as its object, judged
// as caller (the finalize's credential, or the session's Caller when it has
// none), with edit applied to the metadata (when not nil). A size announced
// at the start must match what arrived (else InvalidArgument, and the
// session stays active). A refusal ends the session: its content is removed
// and a repeated finalize is refused again. A finalized session answers its
// object again; a cancelled one ErrUploadNotActive.
func (e *Engine) FinishUpload(ctx context.Context, caller identity.Principal, u *Upload, edit func(*Object)) (*Object, error) {
	switch {
	case u.session.Done != nil:
		return u.session.Done, nil
	case u.session.Refused != "":
		return nil, errs.New(errs.PermissionDenied, u.session.Refused)
	case u.session.Cancelled:
		return nil, ErrUploadNotActive
	}
	meta := u.session.Meta
	if meta.Size > 0 && meta.Size != u.pending.Size() {
		return nil, errs.Errorf(errs.InvalidArgument, "Upload is %d bytes, not the %d announced.", u.pending.Size(), meta.Size)
	}
	if edit != nil {
		edit(&meta)
	}
	if meta.ContentType == "" {
		meta.ContentType = DefaultContentType
	}
	meta.Size = u.pending.Size()
	if err := e.Check(ctx, e.writeAccess(caller, meta)); err != nil {
		u.session.Refused = err.Error()
		e.endSession(u)
		return nil, err
	}
	o, err := e.commit(u.pending, meta)
	if err != nil {
		return nil, err
	}
	u.session.Done, u.pending = o, nil
	if err := e.store.saveSession(u.id, u.session); err != nil {
		return nil, internalError("finalize the upload", err)
	}
	return o, nil
}

// CancelUpload cancels an active session and removes its content;
// cancelling a cancelled one again does nothing. A finalized (or refused)
// session is ErrUploadNotCancellable.
func (e *Engine) CancelUpload(u *Upload) error {
	switch u.Status() {
	case StatusFinal:
		return ErrUploadNotCancellable
	case StatusCancelled:
		return nil
	}
	u.session.Cancelled = true
	e.endSession(u)
	return nil
}

// endSession removes an ended session's content and records how it ended,
// so later commands answer as the session's state says.
func (e *Engine) endSession(u *Upload) {
	if u.pending != nil {
		u.pending.Discard()
		u.pending = nil
	}
	if err := e.store.saveSession(u.id, u.session); err != nil {
		// Unrecorded, the session would come back active after a restart:
		// forget it instead (the client's next command finds no session).
		e.mu.Lock()
		delete(e.uploads, u.id)
		e.mu.Unlock()
		e.store.dropSession(u.id)
	}
}

package storage

import (
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

	"github.com/loupe-dev/loupe/internal/atomicfile"
)

// Resumable upload sessions live on disk so that they survive a restart of
// loupe, as GCS sessions survive a server's: uploads/{id} holds the bytes
// received so far and uploads/{id}.json the session (the object to create,
// and the object once finalized). Sessions expire after a week, as in GCS;
// expired ones are removed when the store opens.

// sessionLifetime is how long an upload session can be resumed.
const sessionLifetime = 7 * 24 * time.Hour

// session is a resumable upload's state as stored.
type session struct {
	Meta Object  `json:"meta"`
	GCS  bool    `json:"gcs,omitempty"`  // a GCS JSON API session (else Firebase)
	Done *Object `json:"done,omitempty"` // the object, once finalized
}

// upload is a resumable upload in progress: its state, its content and a lock
// that serialises its requests.
type upload struct {
	mu sync.Mutex
	id string
	session
	pending *Pending // nil once done
}

// validSessionID accepts the ids newToken makes (hex digits and dashes).
func validSessionID(id string) bool {
	return len(id) == 36 && strings.Trim(id, "0123456789abcdef-") == ""
}

func (s *Store) sessionPath(id string) string { return filepath.Join(s.root, "uploads", id) }

func (s *Store) saveSession(id string, st session) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.sessionPath(id)+".json", data, filepath.Join(s.root, "tmp"))
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
func (s *Store) loadSession(id string) (*upload, error) {
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
	u := &upload{id: id}
	if err := json.Unmarshal(data, &u.session); err != nil {
		return nil, fmt.Errorf("load upload session %s: %w", id, err)
	}
	if u.Done != nil {
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

// startSession begins a resumable upload of meta.
func (s *Service) startSession(meta Object, gcs bool) (*upload, error) {
	u := &upload{id: newToken(), session: session{Meta: meta, GCS: gcs}}
	p, err := s.store.createSession(u.id, u.session)
	if err != nil {
		return nil, err
	}
	u.pending = p
	s.mu.Lock()
	s.uploads[u.id] = u
	s.mu.Unlock()
	return u, nil
}

// session finds an upload session by id, reloading it from disk after a
// restart, and locks it; the caller unlocks it. Nil when there is none.
func (s *Service) session(id string) *upload {
	s.mu.Lock()
	u := s.uploads[id]
	s.mu.Unlock()
	if u == nil {
		// Reloading hashes what was received: do it outside the service lock.
		loaded, err := s.store.loadSession(id)
		if err != nil {
			return nil
		}
		s.mu.Lock()
		if u = s.uploads[id]; u == nil {
			u = loaded
			s.uploads[id] = u
		} else if loaded.pending != nil {
			loaded.pending.f.Close() // another request reloaded it first
		}
		s.mu.Unlock()
	}
	u.mu.Lock()
	return u
}

// finishSession commits the session's content as its object and records it.
func (s *Service) finishSession(u *upload, meta Object) (*Object, error) {
	o, err := u.pending.Commit(meta)
	if err != nil {
		return nil, fmt.Errorf("finalize upload: %w", err)
	}
	u.Done, u.pending = o, nil
	if err := s.store.saveSession(u.id, u.session); err != nil {
		return nil, fmt.Errorf("finalize upload: %w", err)
	}
	return o, nil
}

// cancelSession forgets a session and removes its content.
func (s *Service) cancelSession(u *upload) {
	s.mu.Lock()
	delete(s.uploads, u.id)
	s.mu.Unlock()
	if u.pending != nil {
		u.pending.f.Close()
	}
	s.store.dropSession(u.id)
}

package auth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/atomicfile"
)

// The log is accounts.log in the data dir: a line per change, the JSON
// array of its records, so that a change replays whole or not at all.
// Opening replays it (a torn last line, from a crash mid-append, is
// dropped) and rewrites it compacted: per project a reset, its users and
// its mail.
// Appends are group-committed: requests that arrive while a sync runs share
// the next one, and each is answered only once its records are synced.
const (
	logName = "accounts.log"
	// legacyName is the whole-file store of earlier versions, migrated on open.
	legacyName = "accounts.json"
	// compactAfter is the least number of records before the log is
	// compacted while serving (when it holds twice the live records).
	compactAfter = 10000
)

// record is one line of the log.
type record struct {
	Project string      `json:"project"`
	Reset   bool        `json:"reset,omitempty"`
	Put     *User       `json:"put,omitempty"`
	Delete  string      `json:"delete,omitempty"`
	Mail    *storedMail `json:"mail,omitempty"`
	Used    string      `json:"used,omitempty"`
}

// storedMail is a captured e-mail with what the API does not show.
type storedMail struct {
	OOBCode
	SentAt      time.Time `json:"sentAt"`
	ContinueURL string    `json:"continueUrl,omitempty"`
	LocalID     string    `json:"localId,omitempty"` // "" once used
}

func mailRecord(project string, m OOBCode, localID string) record {
	return record{Project: project, Mail: &storedMail{OOBCode: m, SentAt: m.SentAt, ContinueURL: m.ContinueURL, LocalID: localID}}
}

// apply replays one record.
func (s *store) apply(r record) {
	p := s.project(r.Project)
	switch {
	case r.Reset:
		p.clear()
		p.forget()
	case r.Put != nil:
		p.replace(r.Put.LocalID, r.Put)
	case r.Delete != "":
		p.replace(r.Delete, nil)
	case r.Mail != nil:
		m := r.Mail.OOBCode
		m.SentAt, m.ContinueURL = r.Mail.SentAt, r.Mail.ContinueURL
		p.mail = append(p.mail, m)
		if r.Mail.LocalID != "" {
			p.codes[m.OOBCode] = r.Mail.LocalID
		}
	case r.Used != "":
		delete(p.codes, r.Used)
	}
}

// wal is the open log.
type wal struct {
	path string

	mu       sync.Mutex
	synced   *sync.Cond
	f        *os.File
	pending  []byte // appended, not yet written
	appended uint64 // sequence number of the last append
	durable  uint64 // sequence number of the last synced append
	busy     bool   // a write and sync runs outside mu
	err      error  // the first write error: the log takes no more
	records  int    // records in the file and pending
	// minRecords is the size under which the log is never compacted while serving.
	minRecords int
}

// openWAL loads dir's log (or legacy file) into s and compacts it.
func openWAL(dir string, s *store) (*wal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("auth data folder: %w", err)
	}
	w := &wal{path: filepath.Join(dir, logName), minRecords: compactAfter}
	w.synced = sync.NewCond(&w.mu)
	legacy := filepath.Join(dir, legacyName)
	if err := replay(w.path, s); errors.Is(err, os.ErrNotExist) {
		if err := loadLegacy(legacy, s); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if err := w.compact(s); err != nil {
		return nil, err
	}
	if err := os.Remove(legacy); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("auth: remove %s: %w", legacy, err)
	}
	return w, nil
}

// replay applies every complete record of the log at path.
func replay(path string, s *store) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// No newline: a torn append, never acknowledged.
			return nil
		}
		if err != nil {
			return fmt.Errorf("auth: read %s: %w", path, err)
		}
		var recs []record
		if bytes.HasPrefix(line, []byte("{")) {
			// A single record, as the first version of the log wrote them.
			line = append(append([]byte("["), line...), ']')
		}
		if err := json.Unmarshal(line, &recs); err != nil {
			return fmt.Errorf("auth: %s line %d is corrupt: %w", path, n, err)
		}
		for _, rec := range recs {
			s.apply(rec)
		}
	}
}

// loadLegacy reads the whole-file store of earlier versions.
func loadLegacy(path string, s *store) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var projects map[string]struct {
		Users map[string]*User `json:"users"`
		Mail  []storedMail     `json:"mail"`
	}
	if err := json.Unmarshal(data, &projects); err != nil {
		return fmt.Errorf("auth: %s is corrupt: %w", path, err)
	}
	for name, lp := range projects {
		for _, u := range lp.Users {
			s.apply(record{Project: name, Put: u})
		}
		for _, m := range lp.Mail {
			s.apply(record{Project: name, Mail: &m})
		}
	}
	return nil
}

// encode writes one line of the log: the records of one change.
func encode(buf *bytes.Buffer, recs []record) error {
	if err := json.NewEncoder(buf).Encode(recs); err != nil {
		return fmt.Errorf("auth: encode log records: %w", err)
	}
	return nil
}

// compact replaces the log with s's current state; s.mu is held or s is
// not yet shared.
func (w *wal) compact(s *store) error {
	var buf bytes.Buffer
	names := make([]string, 0, len(s.projects))
	for name := range s.projects {
		names = append(names, name)
	}
	sort.Strings(names)
	n := 0
	for _, name := range names {
		p := s.projects[name]
		recs := []record{{Project: name, Reset: true}}
		for _, u := range p.sorted() {
			recs = append(recs, record{Project: name, Put: u})
		}
		for _, m := range p.mail {
			recs = append(recs, mailRecord(name, m, p.codes[m.OOBCode]))
		}
		for i := range recs {
			if err := encode(&buf, recs[i:i+1]); err != nil {
				return err
			}
		}
		n += len(recs)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.busy {
		w.synced.Wait()
	}
	if w.err != nil {
		return w.err
	}
	if err := atomicfile.Write(w.path, buf.Bytes(), ""); err != nil {
		return fmt.Errorf("auth: compact %s: %w", w.path, err)
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("auth: open %s: %w", w.path, err)
	}
	if w.f != nil {
		_ = w.f.Close()
	}
	w.f, w.pending, w.records = f, nil, n
	w.durable = w.appended
	w.synced.Broadcast()
	return nil
}

// append queues recs and returns the sequence number to wait for; the
// store's lock is held, so the log's order is the order of the changes.
func (w *wal) append(recs []record) (uint64, error) {
	var buf bytes.Buffer
	if err := encode(&buf, recs); err != nil {
		return 0, err
	}
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return 0, w.err
	}
	w.pending = append(w.pending, buf.Bytes()...)
	w.appended++
	w.records += len(recs)
	seq := w.appended
	w.mu.Unlock()
	return seq, nil
}

// bloated reports whether the log holds more than twice the live records.
func (w *wal) bloated(live int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.records > w.minRecords && w.records > 2*live
}

// wait returns once the append numbered seq is synced, writing and syncing
// everything pending itself when no other caller is.
func (w *wal) wait(seq uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.durable < seq && w.err == nil {
		if w.busy {
			w.synced.Wait()
			continue
		}
		w.busy = true
		f, data, upTo := w.f, w.pending, w.appended
		w.pending = nil
		w.mu.Unlock()
		_, err := f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		w.mu.Lock()
		w.busy = false
		if err != nil {
			w.err = fmt.Errorf("auth: append to %s: %w", w.path, err)
		} else if upTo > w.durable {
			w.durable = upTo
		}
		w.synced.Broadcast()
	}
	return w.err
}

// close syncs what is pending and closes the file.
func (w *wal) close() error {
	w.mu.Lock()
	seq := w.appended
	w.mu.Unlock()
	err := w.wait(seq)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		w.f = nil
	}
	return err
}

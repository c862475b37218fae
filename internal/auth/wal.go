package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/wal"
)

// The log is accounts.log in the data dir, a write-ahead log (internal/wal:
// checksummed records, group commit, a torn last record dropped at open): a
// record per change, the JSON array of its records, so that a change
// replays whole or not at all. Opening replays it and rewrites it
// compacted: per project a reset, its users and its mail.
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

// accountsLog is the open log, a wal.Log whose records are each the JSON
// array of one change's records.
type accountsLog struct {
	*wal.Log
	// minRecords is the size under which the log is never compacted while serving.
	minRecords int
}

// openWAL loads dir's log (or legacy file) into s and compacts it.
func openWAL(dir string, s *store) (*accountsLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("auth data folder: %w", err)
	}
	path, legacy := filepath.Join(dir, logName), filepath.Join(dir, legacyName)
	_, statErr := os.Stat(path)
	log, err := wal.Open(path, s.applyLine)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	w := &accountsLog{Log: log, minRecords: compactAfter}
	migrated := false
	if errors.Is(statErr, os.ErrNotExist) {
		err := loadLegacy(legacy, s)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Close()
			return nil, err
		}
		migrated = err == nil
	}
	// On a full disk the log stays as it is (a failed rewrite leaves it
	// whole): it holds every account, and loupe serves them; writes fail
	// with RESOURCE_EXHAUSTED until there is room. A legacy file must be
	// rewritten before it is removed.
	if err := w.compact(s); err != nil && (migrated || !errors.Is(err, syscall.ENOSPC)) {
		log.Close()
		return nil, err
	}
	if err := os.Remove(legacy); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Close()
		return nil, fmt.Errorf("auth: remove %s: %w", legacy, err)
	}
	return w, nil
}

// applyLine replays one record of the log: the records of one change.
func (s *store) applyLine(payload []byte) error {
	var recs []record
	if bytes.HasPrefix(payload, []byte("{")) {
		// A single record, as the first version of the log wrote them.
		payload = append(append([]byte("["), payload...), ']')
	}
	if err := json.Unmarshal(payload, &recs); err != nil {
		return err
	}
	for _, rec := range recs {
		s.apply(rec)
	}
	return nil
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

// encode returns the log record of one change: its records.
func encode(recs []record) ([]byte, error) {
	payload, err := json.Marshal(recs)
	if err != nil {
		return nil, fmt.Errorf("auth: encode log records: %w", err)
	}
	return payload, nil
}

// compact replaces the log with s's current state, one record per line;
// s.mu is held or s is not yet shared.
func (w *accountsLog) compact(s *store) error {
	names := make([]string, 0, len(s.projects))
	for name := range s.projects {
		names = append(names, name)
	}
	sort.Strings(names)
	var payloads [][]byte
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
			payload, err := encode(recs[i : i+1])
			if err != nil {
				return err
			}
			payloads = append(payloads, payload)
		}
	}
	if err := w.Rewrite(payloads); err != nil {
		return fmt.Errorf("auth: compact: %w", err)
	}
	return nil
}

// append queues the records of one change and returns the sequence number
// to wait for; the store's lock is held, so the log's order is the order of
// the changes.
func (w *accountsLog) append(recs []record) (uint64, error) {
	payload, err := encode(recs)
	if err != nil {
		return 0, err
	}
	return w.Append(payload)
}

// bloated reports whether the log holds more than twice the live records.
func (w *accountsLog) bloated(live int) bool {
	n := w.Records()
	return n > w.minRecords && n > 2*live
}

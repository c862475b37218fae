package database

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/wal"
)

// File names inside the data folder.
const (
	snapshotFile = "snapshot.log" // every namespace's tree when the log was last folded in
	logFile      = "writes.log"
	// compactAt is the log size above which Open folds the log into the snapshot.
	compactAt = 32 << 20
)

// record is one commit in the log (and one namespace in the snapshot): the
// data each written location holds after it, in export format, so that
// replaying is idempotent.
type record struct {
	NS     string     `json:"ns"`
	Time   int64      `json:"t,omitempty"`
	Writes []logWrite `json:"w"`
}

// logWrite is a location and its data: [path, value].
type logWrite [2]json.RawMessage

// commitLog is the write-ahead log of commits over a snapshot, both
// wal-framed files of records.
type commitLog struct {
	dir string
	wal *wal.Log
}

type replayFunc func(ns string, p Path, n *Node)

func replayRecord(fn replayFunc) func([]byte) error {
	return func(payload []byte) error {
		var rec record
		if err := json.Unmarshal(payload, &rec); err != nil {
			return err
		}
		for _, w := range rec.Writes {
			var path string
			if err := json.Unmarshal(w[0], &path); err != nil {
				return err
			}
			p, err := ParsePath(path)
			if err != nil {
				return err
			}
			n, err := ParseJSON(w[1], nil, nil)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			fn(rec.NS, p, n)
		}
		return nil
	}
}

// openCommitLog replays the snapshot and the log through fn, then opens the
// log for appending (wal.Open cuts off a torn last record).
func openCommitLog(dir string, fn replayFunc) (*commitLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("database data folder: %w", err)
	}
	if _, err := wal.Replay(filepath.Join(dir, snapshotFile), false, replayRecord(fn)); err != nil {
		return nil, fmt.Errorf("database snapshot: %w", err)
	}
	log, err := wal.Open(filepath.Join(dir, logFile), replayRecord(fn))
	if err != nil {
		return nil, fmt.Errorf("database data folder: %w", err)
	}
	return &commitLog{dir: dir, wal: log}, nil
}

func pathJSON(p Path) json.RawMessage { return AppendString(nil, p.String()) }

// recordOf is a commit's log record.
func recordOf(c *Commit) ([]byte, error) {
	rec := record{NS: c.NS, Time: c.Time.UnixMilli()}
	for _, ch := range c.Changes {
		rec.Writes = append(rec.Writes, logWrite{pathJSON(ch.Path), ch.After.ExportJSON()})
	}
	return json.Marshal(rec)
}

// append logs commits and returns once they are durable (one sync for all);
// on failure the log holds none of them.
func (l *commitLog) append(commits []*Commit) error {
	payloads := make([][]byte, 0, len(commits))
	for _, c := range commits {
		p, err := recordOf(c)
		if err != nil {
			return err
		}
		payloads = append(payloads, p)
	}
	return l.wal.Commit(payloads...)
}

// rewrite replaces the snapshot with roots and empties the log: the new
// snapshot is written and synced beside the old one and renamed over it,
// then the log is emptied (replaying the old log over the new snapshot is
// harmless, as records hold resulting data).
func (l *commitLog) rewrite(roots map[string]*Node) error {
	names := make([]string, 0, len(roots))
	for name := range roots {
		names = append(names, name)
	}
	sort.Strings(names)
	err := atomicfile.WriteFunc(filepath.Join(l.dir, snapshotFile), "", func(w io.Writer) error {
		for _, name := range names {
			if roots[name].IsEmpty() {
				continue
			}
			payload, err := json.Marshal(record{NS: name, Writes: []logWrite{{pathJSON(nil), roots[name].ExportJSON()}}})
			if err != nil {
				return err
			}
			if _, err := w.Write(wal.Frame(payload)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return l.wal.Rewrite(nil)
}

func (l *commitLog) size() int64 { return l.wal.Size() }

func (l *commitLog) close() error { return l.wal.Close() }

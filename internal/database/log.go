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
	// compactFloor is the log size below which the log is never folded
	// into the snapshot (a small tree would otherwise be rewritten on
	// every write).
	compactFloor = 1 << 20
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
	// snapshot is the size of the snapshot file.
	snapshot int64
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
	// A rewrite cut short by a crash leaves its temporary file behind.
	for _, name := range []string{snapshotFile, logFile} {
		stale, _ := filepath.Glob(filepath.Join(dir, name+".tmp-*"))
		for _, f := range stale {
			if err := os.Remove(f); err != nil {
				return nil, fmt.Errorf("database data folder: %w", err)
			}
		}
	}
	snapshot, err := wal.Replay(filepath.Join(dir, snapshotFile), false, replayRecord(fn))
	if err != nil {
		return nil, fmt.Errorf("database snapshot: %w", err)
	}
	log, err := wal.Open(filepath.Join(dir, logFile), replayRecord(fn))
	if err != nil {
		return nil, fmt.Errorf("database data folder: %w", err)
	}
	return &commitLog{dir: dir, wal: log, snapshot: snapshot}, nil
}

// due reports whether the log should be folded into the snapshot: once it
// is larger than the snapshot (and than compactFloor), so that the folder
// holds at most twice the data as it was last folded.
func (l *commitLog) due() bool {
	return l.wal.Size() > max(l.snapshot, compactFloor)
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
	var size int64
	err := atomicfile.WriteFunc(filepath.Join(l.dir, snapshotFile), "", func(w io.Writer) error {
		size = 0
		for _, name := range names {
			if roots[name].IsEmpty() {
				continue
			}
			payload, err := json.Marshal(record{NS: name, Writes: []logWrite{{pathJSON(nil), roots[name].ExportJSON()}}})
			if err != nil {
				return err
			}
			n, err := w.Write(wal.Frame(payload))
			if err != nil {
				return err
			}
			size += int64(n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.snapshot = size
	return l.wal.Rewrite(nil)
}

func (l *commitLog) close() error { return l.wal.Close() }

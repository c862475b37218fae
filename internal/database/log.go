package database

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/loupe-dev/loupe/internal/wal"
)

// File names inside the data folder.
const (
	logFile = "writes.log"
	// legacySnapshotFile is where older versions kept the tree as it was
	// when the log was last folded; it is read when present and removed by
	// the first fold.
	legacySnapshotFile = "snapshot.log"
	// compactFloor is the size of appended records below which the log is
	// never folded (a small tree would otherwise be rewritten on every
	// write).
	compactFloor = 1 << 20
)

// record is one commit in the log (or one namespace's whole tree, written
// when the log is folded: no time, one write at the root): the data each
// written location holds after it, in export format, so that replaying is
// idempotent.
type record struct {
	NS     string     `json:"ns"`
	Time   int64      `json:"t,omitempty"`
	Writes []logWrite `json:"w"`
}

// logWrite is a location and its data: [path, value].
type logWrite [2]json.RawMessage

// commitLog is the write-ahead log of commits, a wal.Log of records. Folding
// rewrites it, atomically, as one record per namespace holding its tree (the
// base), which later commits are appended to; a folder of older versions
// also holds a snapshot file, replayed before the log.
type commitLog struct {
	dir string
	wal *wal.Log
	// base is the size of the records the log was last folded into.
	base int64
	// legacy is set while an older version's snapshot file is present.
	legacy bool
}

type replayFunc func(ns string, p Path, n *Node)

// replay passes the writes of the record in payload to fn and reports
// whether it holds a tree written by a fold (a record without a time).
func replay(payload []byte, fn replayFunc) (folded bool, err error) {
	var rec record
	if err := json.Unmarshal(payload, &rec); err != nil {
		return false, err
	}
	for _, w := range rec.Writes {
		var path string
		if err := json.Unmarshal(w[0], &path); err != nil {
			return false, err
		}
		p, err := ParsePath(path)
		if err != nil {
			return false, err
		}
		n, err := ParseJSON(w[1], nil, nil)
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		fn(rec.NS, p, n)
	}
	return rec.Time == 0, nil
}

// openCommitLog replays an older version's snapshot and the log through
// fn, then opens the log for appending (wal.Open cuts off a torn last
// record).
func openCommitLog(dir string, fn replayFunc) (*commitLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("database data folder: %w", err)
	}
	// A rewrite cut short by a crash leaves its temporary file behind.
	for _, name := range []string{legacySnapshotFile, logFile} {
		stale, _ := filepath.Glob(filepath.Join(dir, name+".tmp-*"))
		for _, f := range stale {
			if err := os.Remove(f); err != nil {
				return nil, fmt.Errorf("database data folder: %w", err)
			}
		}
	}
	l := &commitLog{dir: dir}
	snapshot := filepath.Join(dir, legacySnapshotFile)
	if _, err := os.Stat(snapshot); err == nil {
		l.legacy = true
		if _, err := wal.Replay(snapshot, false, func(p []byte) error { _, err := replay(p, fn); return err }); err != nil {
			return nil, fmt.Errorf("database snapshot: %w", err)
		}
	}
	// The base is the run of folded records the log starts with.
	inBase := true
	log, err := wal.Open(filepath.Join(dir, logFile), func(p []byte) error {
		folded, err := replay(p, fn)
		if inBase = inBase && folded; inBase {
			l.base += int64(len(p) + wal.Overhead)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("database data folder: %w", err)
	}
	l.wal = log
	return l, nil
}

// due reports whether the log should be folded rather than have appended
// records of size bytes (framed): once the records appended since the last
// fold would be larger than the base (and than compactFloor), so that the
// folder holds at most twice the data as it was last folded.
func (l *commitLog) due(size int64) bool {
	return l.wal.Size()+size-l.base > max(l.base, compactFloor)
}

// appendRecord appends the JSON of a record of changes (time t, none when
// 0): the data each change's location holds after it.
func appendRecord(b []byte, ns string, t int64, changes []Change) []byte {
	b = append(b, `{"ns":`...)
	b = AppendString(b, ns)
	if t != 0 {
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, t, 10)
	}
	b = append(b, `,"w":[`...)
	for i, ch := range changes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = AppendString(b, ch.Path.String())
		b = append(b, ',')
		b = ch.After.AppendJSON(b, true)
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

// records are the log records of commits.
func records(commits []*Commit) [][]byte {
	payloads := make([][]byte, len(commits))
	for i, c := range commits {
		payloads[i] = appendRecord(nil, c.NS, c.Time.UnixMilli(), c.Changes)
	}
	return payloads
}

// framedSize is the size of payloads as records in the log.
func framedSize(payloads [][]byte) int64 {
	var n int64
	for _, p := range payloads {
		n += int64(len(p) + wal.Overhead)
	}
	return n
}

// append logs payloads (records) and returns once they are durable (one
// sync for all); on failure the log holds none of them.
func (l *commitLog) append(payloads [][]byte) error {
	return l.wal.Commit(payloads...)
}

// rewrite folds the log: it replaces it, atomically (wal.Rewrite), with a
// record per namespace holding roots' tree; an empty tree is left out
// unless an older version's snapshot could still hold data for it, which
// is then removed (should its removal not reach the disk before a crash,
// replaying the log over it comes to the same data).
func (l *commitLog) rewrite(roots map[string]*Node) error {
	names := make([]string, 0, len(roots))
	for name := range roots {
		names = append(names, name)
	}
	sort.Strings(names)
	var payloads [][]byte
	for _, name := range names {
		if roots[name].IsEmpty() && !l.legacy {
			continue
		}
		payloads = append(payloads, appendRecord(nil, name, 0, []Change{{After: roots[name]}}))
	}
	if err := l.wal.Rewrite(payloads); err != nil {
		return err
	}
	l.base = l.wal.Size()
	if l.legacy {
		if err := os.Remove(filepath.Join(l.dir, legacySnapshotFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the older snapshot: %w", err)
		}
		l.legacy = false
	}
	return nil
}

func (l *commitLog) close() error { return l.wal.Close() }

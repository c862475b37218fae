package firestore

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/wal"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// File names inside the data folder.
const (
	snapshotFile = "snapshot.jsonl" // older versions' snapshot, read when there is no snapshot.bin
	logFile      = "commits.log"
	// compactAt is the log size above which Open folds the log into the snapshot.
	compactAt = 32 << 20
)

// commitLog is the write-ahead log of commits, a wal.Log: each record is
// the JSON of a logRecord, a commit's resulting documents (binary protobuf,
// base64 in the JSON: "pb"; older logs hold protobuf JSON: "put") and
// deleted paths, so replaying is idempotent. The snapshot (snapshot.go)
// holds every document at the time the log was last folded into it.
type commitLog struct {
	dir string
	wal *wal.Log
}

type logRecord struct {
	Database string            `json:"db"`
	Time     time.Time         `json:"t"`
	Puts     []json.RawMessage `json:"put,omitempty"` // protobuf JSON, as older versions wrote
	Docs     [][]byte          `json:"pb,omitempty"`
	Dels     []string          `json:"del,omitempty"`
	// Fold, in the first record of a log the snapshot was last folded
	// from, is the time of the state the snapshot holds (no documents).
	Fold *time.Time `json:"fold,omitempty"`
}

// replayFunc installs documents read from the data folder (puts) and
// removes deleted paths; t is the latest commit time they carry.
type replayFunc func(database string, t time.Time, puts []encodedDoc, dels []string)

// replayFuncs receive what opening a data folder reads: the snapshot's
// documents, then each logged commit, and the time the snapshot holds the
// state of when the log says it.
type replayFuncs struct {
	snapshot, commit replayFunc
	fold             func(time.Time)
}

// encodedDocs returns the record's documents, encoded.
func (rec logRecord) encodedDocs() ([]encodedDoc, error) {
	raws := rec.Docs
	for _, js := range rec.Puts {
		doc := &pb.Document{}
		if err := protojson.Unmarshal(js, doc); err != nil {
			return nil, err
		}
		raw, err := proto.Marshal(doc)
		if err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	docs := make([]encodedDoc, len(raws))
	for i, raw := range raws {
		doc, err := parseEncodedDoc(raw)
		if err != nil {
			return nil, err
		}
		docs[i] = doc
	}
	return docs, nil
}

// replayRecord decodes one record's payload into replay (a fold mark into
// fold, when not nil).
func replayRecord(replay replayFunc, fold func(time.Time)) func(payload []byte) error {
	return func(payload []byte) error {
		var rec logRecord
		if err := json.Unmarshal(payload, &rec); err != nil {
			return err
		}
		if rec.Fold != nil {
			if fold != nil {
				fold(*rec.Fold)
			}
			return nil
		}
		puts, err := rec.encodedDocs()
		if err != nil {
			return err
		}
		replay(rec.Database, rec.Time, puts, rec.Dels)
		return nil
	}
}

// openCommitLog replays the snapshot and the log into replay, then opens the
// log for appending (wal.Open cuts off a torn last record).
func openCommitLog(dir string, replay replayFuncs) (*commitLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("firestore data folder: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, snapshotBinFile)); err == nil {
		if err := replaySnapshot(filepath.Join(dir, snapshotBinFile), replay.snapshot); err != nil {
			return nil, err
		}
	} else if _, err := wal.Replay(filepath.Join(dir, snapshotFile), false, replayRecord(replay.snapshot, nil)); err != nil {
		return nil, err
	}
	log, err := wal.Open(filepath.Join(dir, logFile), replayRecord(replay.commit, replay.fold))
	if err != nil {
		return nil, fmt.Errorf("firestore data folder: %w", err)
	}
	return &commitLog{dir: dir, wal: log}, nil
}

func recordOf(c Commit) ([]byte, error) {
	rec := logRecord{Database: c.Changes[0].Database, Time: c.Time}
	for _, ch := range c.Changes {
		if ch.New == nil {
			rec.Dels = append(rec.Dels, ch.Path)
			continue
		}
		raw := ch.encoded
		if raw == nil {
			var err error
			if raw, err = (storedDoc{doc: ch.New}).bytes(); err != nil {
				return nil, err
			}
		}
		rec.Docs = append(rec.Docs, raw)
	}
	return json.Marshal(rec)
}

// append logs commits and returns once they are durable (one fsync for
// all); on failure the log holds none of them (see wal.Log.Wait).
func (l *commitLog) append(commits []Commit) error {
	payloads := make([][]byte, 0, len(commits))
	for _, c := range commits {
		if len(c.Changes) == 0 {
			continue
		}
		payload, err := recordOf(c)
		if err != nil {
			return err
		}
		payloads = append(payloads, payload)
	}
	if len(payloads) == 0 {
		return nil
	}
	return l.wal.Commit(payloads...)
}

// rewrite replaces the snapshot with docs, the state at time at, and empties
// the log but for a mark of that time: first the new snapshot is written and
// synced beside the old one and renamed over it, then the log is emptied
// (replaying the old log over the new snapshot is harmless).
func (l *commitLog) rewrite(dbs map[string]*database, at time.Time) error {
	tmp, err := os.CreateTemp(l.dir, snapshotBinFile+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := writeSnapshot(w, dbs); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(l.dir, snapshotBinFile)); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(l.dir, snapshotFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if dir, err := os.Open(l.dir); err == nil { // the snapshot is in place before the log empties
		_ = dir.Sync()
		dir.Close()
	}
	mark, err := json.Marshal(logRecord{Time: at, Fold: &at})
	if err != nil {
		return err
	}
	return l.wal.Rewrite([][]byte{mark})
}

func (l *commitLog) size() int64 { return l.wal.Size() }

func (l *commitLog) close() error { return l.wal.Close() }

// pipeline makes commits durable in order and then publishes them to
// subscribers in the same order.
type pipeline struct {
	log *commitLog
	// engineMu is held by writers from applying a commit in memory to
	// queueing it.
	engineMu sync.Locker
	// durable records that the commits up to a time are on disk; undo
	// reverts the commits that are not, newest first.
	durable func(time.Time)
	undo    func([]Commit)
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []pendingCommit
	subs    map[int]func(Commit)
	subList []func(Commit) // the values of subs; nil when it must be rebuilt
	nextID  int
	closed  bool
	done    chan struct{}
}

type pendingCommit struct {
	commit    Commit
	done      chan error
	onDurable func() // called once it is durable, before done yields
	durable   bool   // already on disk: publish only
}

func newPipeline(log *commitLog, engineMu sync.Locker, durable func(time.Time), undo func([]Commit)) *pipeline {
	p := &pipeline{log: log, engineMu: engineMu, durable: durable, undo: undo, subs: map[int]func(Commit){}, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go p.run()
	return p
}

// enqueue queues a commit; the channel yields nil once it is durable, just
// after onDurable (when not nil) is called on the pipeline's goroutine.
func (p *pipeline) enqueue(c Commit, onDurable func()) <-chan error {
	done := make(chan error, 1)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		done <- errors.New("firestore is shutting down")
		return done
	}
	p.queue = append(p.queue, pendingCommit{commit: c, done: done, onDurable: onDurable})
	p.cond.Signal()
	p.mu.Unlock()
	return done
}

func (p *pipeline) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.queue) == 0 && p.closed {
			p.mu.Unlock()
			return
		}
		batch := p.queue
		p.queue = nil
		p.mu.Unlock()
		var err error
		if p.log != nil {
			commits := make([]Commit, 0, len(batch))
			for _, b := range batch {
				if !b.durable {
					commits = append(commits, b.commit)
				}
			}
			err = p.log.append(commits)
		}
		if err != nil {
			p.fail(batch, err)
			continue
		}
		p.durable(batch[len(batch)-1].commit.Time)
		for _, b := range batch {
			if b.onDurable != nil {
				b.onDurable()
			}
			b.done <- nil
		}
		p.mu.Lock()
		if p.subList == nil {
			p.subList = slices.Collect(maps.Values(p.subs))
		}
		subs := p.subList
		p.mu.Unlock()
		for _, b := range batch {
			if len(b.commit.Changes) == 0 {
				continue
			}
			for _, f := range subs {
				f(b.commit)
			}
		}
	}
}

// fail undoes a batch that could not be made durable, together with every
// commit queued behind it (each was applied on top of it), newest first, so
// that memory again holds exactly what is on disk; then it reports err to
// their writers. The engine lock keeps new commits out meanwhile.
func (p *pipeline) fail(batch []pendingCommit, err error) {
	p.engineMu.Lock()
	defer p.engineMu.Unlock()
	p.mu.Lock()
	var kept []pendingCommit
	failed := batch
	for _, q := range p.queue {
		if q.durable {
			kept = append(kept, q)
		} else {
			failed = append(failed, q)
		}
	}
	p.queue = kept
	p.mu.Unlock()
	var undo []Commit
	for i := len(failed) - 1; i >= 0; i-- {
		if !failed[i].durable {
			undo = append(undo, failed[i].commit)
		}
	}
	p.undo(undo)
	for _, f := range failed {
		f.done <- err
	}
}

func (p *pipeline) subscribe(f func(Commit)) func() {
	p.mu.Lock()
	id := p.nextID
	p.nextID++
	p.subs[id] = f
	p.subList = nil
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		if _, ok := p.subs[id]; ok {
			delete(p.subs, id)
			p.subList = nil
		}
		p.mu.Unlock()
	}
}

// publishOnly queues a commit that is already durable (an import) so that
// subscribers see it in order with the others.
func (p *pipeline) publishOnly(c Commit) {
	p.mu.Lock()
	p.queue = append(p.queue, pendingCommit{commit: c, done: make(chan error, 1), durable: true})
	p.cond.Signal()
	p.mu.Unlock()
}

// close drains the queue and stops the pipeline.
func (p *pipeline) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cond.Signal()
	p.mu.Unlock()
	<-p.done
}

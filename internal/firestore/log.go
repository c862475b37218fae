package firestore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
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

// commitLog is the write-ahead log of commits. Each line is
// "<crc32 of the JSON, 8 hex digits> <JSON record>\n"; a record holds a
// commit's resulting documents (binary protobuf, base64 in the JSON: "pb";
// older logs hold protobuf JSON: "put") and deleted paths, so replaying is
// idempotent. The snapshot (snapshot.go) holds every document at the time
// the log was last folded into it.
type commitLog struct {
	// mu serialises the pipeline's appends with an import's rewrite.
	mu  sync.Mutex
	dir string
	f   *os.File
	w   *bufio.Writer
	// good is the offset after the last durable record.
	good int64
	// broken is set when a failed append could not be cut back to good:
	// the file's tail is unknown, so every later append fails with it.
	broken error
}

type logRecord struct {
	Database string            `json:"db"`
	Time     time.Time         `json:"t"`
	Puts     []json.RawMessage `json:"put,omitempty"` // protobuf JSON, as older versions wrote
	Docs     [][]byte          `json:"pb,omitempty"`
	Dels     []string          `json:"del,omitempty"`
}

// replayFunc installs documents read from the data folder (puts) and
// removes deleted paths; t is the latest commit time they carry.
type replayFunc func(database string, t time.Time, puts []encodedDoc, dels []string)

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

// openCommitLog replays the snapshot and the log into replay, then opens the
// log for appending. A torn last line (a crash mid-write) is cut off; a
// corrupt line before it is an error.
func openCommitLog(dir string, replay replayFunc) (*commitLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("firestore data folder: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, snapshotBinFile)); err == nil {
		if err := replaySnapshot(filepath.Join(dir, snapshotBinFile), replay); err != nil {
			return nil, err
		}
	} else if _, err := replayFile(filepath.Join(dir, snapshotFile), replay, false); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, logFile)
	good, err := replayFile(logPath, replay, true)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("firestore data folder: %w", err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("firestore log: cut torn tail: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return &commitLog{dir: dir, f: f, w: bufio.NewWriterSize(f, 1<<20), good: good}, nil
}

// replayFile replays every record of path and returns the offset after the
// last good one. tolerateTail allows a broken final line.
func replayFile(path string, replay replayFunc, tolerateTail bool) (int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	var offset int64
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			if tolerateTail {
				return offset, nil
			}
			return 0, fmt.Errorf("%s is corrupt at byte %d: unterminated record", path, offset)
		}
		rec, err := decodeLine(data[:end])
		if err != nil {
			if tolerateTail && end == len(data)-1 {
				return offset, nil
			}
			return 0, fmt.Errorf("%s is corrupt at byte %d: %v", path, offset, err)
		}
		puts, err := rec.encodedDocs()
		if err != nil {
			return 0, fmt.Errorf("%s is corrupt at byte %d: %v", path, offset, err)
		}
		replay(rec.Database, rec.Time, puts, rec.Dels)
		offset += int64(end + 1)
		data = data[end+1:]
	}
	return offset, nil
}

func decodeLine(line []byte) (logRecord, error) {
	var rec logRecord
	if len(line) < 10 || line[8] != ' ' {
		return rec, errors.New("malformed record")
	}
	var sum uint32
	if _, err := fmt.Sscanf(string(line[:8]), "%08x", &sum); err != nil {
		return rec, errors.New("malformed checksum")
	}
	body := line[9:]
	if crc32.ChecksumIEEE(body) != sum {
		return rec, errors.New("checksum mismatch")
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return rec, err
	}
	return rec, nil
}

func encodeRecord(rec logRecord) ([]byte, error) {
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(body)+10)
	line = fmt.Appendf(line, "%08x ", crc32.ChecksumIEEE(body))
	line = append(line, body...)
	return append(line, '\n'), nil
}

func recordOf(c Commit) (logRecord, error) {
	rec := logRecord{Database: c.Changes[0].Database, Time: c.Time}
	for _, ch := range c.Changes {
		if ch.New == nil {
			rec.Dels = append(rec.Dels, ch.Path)
			continue
		}
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(ch.New)
		if err != nil {
			return rec, err
		}
		rec.Docs = append(rec.Docs, raw)
	}
	return rec, nil
}

// append writes commits and fsyncs once for all of them. When writing or
// syncing fails (a full disk, say), the log is cut back to its last durable
// record, so that a later append starts clean and a restart replays only
// what was acknowledged.
func (l *commitLog) append(commits []Commit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return l.broken
	}
	written, err := l.write(commits)
	if err != nil {
		l.cutBack()
		return err
	}
	l.good += written
	return nil
}

func (l *commitLog) write(commits []Commit) (int64, error) {
	var written int64
	for _, c := range commits {
		if len(c.Changes) == 0 {
			continue
		}
		rec, err := recordOf(c)
		if err != nil {
			return 0, err
		}
		line, err := encodeRecord(rec)
		if err != nil {
			return 0, err
		}
		if _, err := l.w.Write(line); err != nil {
			return 0, fmt.Errorf("write %s: %w", logFile, err)
		}
		written += int64(len(line))
	}
	if err := l.w.Flush(); err != nil {
		return 0, fmt.Errorf("write %s: %w", logFile, err)
	}
	if err := l.f.Sync(); err != nil {
		return 0, fmt.Errorf("sync %s: %w", logFile, err)
	}
	return written, nil
}

// cutBack drops whatever a failed append left after the last durable record.
func (l *commitLog) cutBack() {
	err := l.f.Truncate(l.good)
	if err == nil {
		_, err = l.f.Seek(l.good, io.SeekStart)
	}
	if err != nil {
		l.broken = fmt.Errorf("%s could not be cut back after a failed write; restart loupe: %w", logFile, err)
		return
	}
	l.w.Reset(l.f)
}

// rewrite replaces the snapshot with docs and empties the log: first the new
// snapshot is written and synced beside the old one and renamed over it, then
// the log is truncated (replaying the old log over the new snapshot is harmless).
func (l *commitLog) rewrite(dbs map[string]*database) error {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	if dir, err := os.Open(l.dir); err == nil {
		_ = dir.Sync()
		dir.Close()
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.Seek(0, io.SeekStart)
	l.w.Reset(l.f)
	l.good = 0
	if err == nil {
		l.broken = nil // the log is empty and whole again
	}
	return err
}

func (l *commitLog) size() int64 {
	info, err := l.f.Stat()
	if err != nil {
		return 0
	}
	return info.Size()
}

func (l *commitLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.Flush(); err != nil {
		l.f.Close()
		return err
	}
	return l.f.Close()
}

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
	commit  Commit
	done    chan error
	durable bool // already on disk: publish only
}

func newPipeline(log *commitLog, engineMu sync.Locker, durable func(time.Time), undo func([]Commit)) *pipeline {
	p := &pipeline{log: log, engineMu: engineMu, durable: durable, undo: undo, subs: map[int]func(Commit){}, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go p.run()
	return p
}

// enqueue queues a commit; the channel yields nil once it is durable.
func (p *pipeline) enqueue(c Commit) <-chan error {
	done := make(chan error, 1)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		done <- errors.New("firestore is shutting down")
		return done
	}
	p.queue = append(p.queue, pendingCommit{commit: c, done: done})
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
			b.commit.shared = &sharedResponses{}
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

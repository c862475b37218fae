// Package wal is loupe's write-ahead log, shared by Firestore's commit log
// and Auth's accounts log: an append-only file of records, each one line
//
//	<CRC-32 (IEEE) of the payload, 8 hex digits> <payload>\n
//
// so a payload must not hold a newline (JSON does not).
//
// Appends are group-committed: records appended while a write and sync run
// share the next one, and Wait returns only once a record is on disk. When
// a write or sync fails (a full disk, say), the file is cut back to its last
// durable record and every append waiting fails, so that the log holds only
// what was acknowledged and later appends start clean; if it cannot be cut
// back, the log refuses every later append.
//
// Opening replays every record; a damaged last record (a crash mid-append:
// no newline, or a checksum that does not match) is cut off, and a damaged
// record before it is a *CorruptError: nothing is dropped silently. Lines
// that start with '{' or '[' are records written before records carried
// checksums, replayed as they are.
package wal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// CorruptError is a damaged record that is not the last one.
type CorruptError struct {
	Path   string
	Offset int64 // of the record's first byte
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is corrupt at byte %d: %s", e.Path, e.Offset, e.Reason)
}

// Overhead is the bytes a record adds to its payload: the checksum, a
// space and the newline.
const Overhead = 10

// Frame returns payload as one record.
func Frame(payload []byte) []byte {
	return appendFrame(make([]byte, 0, len(payload)+Overhead), payload)
}

// appendFrame appends payload to line as one record.
func appendFrame(line, payload []byte) []byte {
	const hex = "0123456789abcdef"
	sum := crc32.ChecksumIEEE(payload)
	for shift := 28; shift >= 0; shift -= 4 {
		line = append(line, hex[sum>>shift&0xf])
	}
	line = append(line, ' ')
	line = append(line, payload...)
	return append(line, '\n')
}

// Unframe checks one record line (without its newline) and returns its
// payload.
func Unframe(line []byte) ([]byte, error) {
	if len(line) > 0 && (line[0] == '{' || line[0] == '[') {
		return line, nil // written before records carried checksums
	}
	if len(line) < 9 || line[8] != ' ' {
		return nil, errors.New("malformed record")
	}
	sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil {
		return nil, errors.New("malformed checksum")
	}
	payload := line[9:]
	if crc32.ChecksumIEEE(payload) != uint32(sum) {
		return nil, errors.New("checksum mismatch")
	}
	return payload, nil
}

// Replay calls fn with the payload of every record of the file at path, in
// order, and returns the offset after the last whole one. A damaged last
// record is passed over when tolerateTail (it was never acknowledged); any
// other damage, or an error from fn, is a *CorruptError. A missing file
// replays nothing.
func Replay(path string, tolerateTail bool, fn func(payload []byte) error) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var offset int64
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 && !tolerateTail {
				return 0, &CorruptError{path, offset, "unterminated record"}
			}
			return offset, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		payload, err := Unframe(line[:len(line)-1])
		if err != nil {
			if tolerateTail {
				if _, peekErr := r.Peek(1); errors.Is(peekErr, io.EOF) {
					return offset, nil
				}
			}
			return 0, &CorruptError{path, offset, err.Error()}
		}
		if err := fn(payload); err != nil {
			return 0, &CorruptError{path, offset, err.Error()}
		}
		offset += int64(len(line))
	}
}

// File is what a Log needs of its file.
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// chunkSize is the size of the buffers appends are framed into; a log
// keeps up to maxFree of them (16 MiB) between writes, so that appending
// copies each record once and allocates nothing.
const (
	chunkSize = 256 << 10
	maxFree   = 64
)

// Log is an open write-ahead log. It is safe for concurrent use.
type Log struct {
	path string

	mu     sync.Mutex
	synced *sync.Cond
	f      File
	// pending is what was appended and not yet written, in chunks of
	// chunkSize bytes (a larger record gets a chunk of its own); free are
	// written chunks kept for the next appends.
	pending  [][]byte
	free     [][]byte
	appended uint64 // sequence number of the last append
	durable  uint64 // sequence number of the last durable append
	failed   uint64 // appends up to this one failed with failure
	failure  error
	busy     bool  // a write and sync runs outside mu
	good     int64 // offset after the last durable record
	records  int   // records in the file and pending
	broken   error // set when a failed write could not be cut back
}

// Open replays the log at path through fn (see Replay), cuts off a
// damaged last record and opens the log for appending.
func Open(path string, fn func(payload []byte) error) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	records := 0
	good, err := Replay(path, true, func(p []byte) error {
		records++
		return fn(p)
	})
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: cut the damaged last record: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	l := &Log{path: path, f: f, good: good, records: records}
	l.synced = sync.NewCond(&l.mu)
	return l, nil
}

// Append queues records and returns the sequence number to Wait for.
// Appends are written in the order of the calls.
func (l *Log) Append(payloads ...[]byte) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return 0, l.broken
	}
	for _, p := range payloads {
		if bytes.IndexByte(p, '\n') >= 0 {
			return 0, errors.New("wal: a record must not hold a newline")
		}
	}
	for _, p := range payloads {
		l.frameLocked(p)
	}
	l.appended++
	l.records += len(payloads)
	return l.appended, nil
}

// frameLocked appends payload to the last pending chunk, or to a new one
// when it has no room; l.mu is held.
func (l *Log) frameLocked(payload []byte) {
	n := len(payload) + Overhead
	last := len(l.pending) - 1
	if last < 0 || cap(l.pending[last])-len(l.pending[last]) < n {
		var c []byte
		if k := len(l.free); k > 0 && n <= chunkSize {
			c, l.free = l.free[k-1], l.free[:k-1]
		} else {
			c = make([]byte, 0, max(n, chunkSize))
		}
		l.pending = append(l.pending, c)
		last++
	}
	l.pending[last] = appendFrame(l.pending[last], payload)
}

// Wait returns once the append numbered seq is durable, writing and
// syncing everything appended so far itself when no other caller is. It
// fails when that write or sync failed.
func (l *Log) Wait(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.durable < seq {
		if seq <= l.failed {
			return l.failure
		}
		if l.busy {
			l.synced.Wait()
			continue
		}
		if l.broken != nil {
			return l.broken
		}
		l.busy = true
		f, data, upTo := l.f, l.pending, l.appended
		l.pending = nil
		l.mu.Unlock()
		var err error
		written := int64(0)
		for _, c := range data {
			if _, err = f.Write(c); err != nil {
				break
			}
			written += int64(len(c))
		}
		if err == nil {
			err = f.Sync()
		}
		l.mu.Lock()
		l.busy = false
		if err != nil {
			l.failure = fmt.Errorf("append to %s: %w", l.path, err)
			l.cutBackLocked(data)
		} else {
			l.good += written
			l.durable = max(l.durable, upTo)
		}
		for _, c := range data {
			if cap(c) == chunkSize && len(l.free) < maxFree {
				l.free = append(l.free, c[:0])
			}
		}
		l.synced.Broadcast()
	}
	return nil
}

// Flush writes everything appended so far and waits until it is durable.
func (l *Log) Flush() error { return l.Wait(l.Appended()) }

// Appended is the sequence number of the last append: a reader that saw
// the state up to it waits for it to be durable before answering.
func (l *Log) Appended() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appended
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

// Commit appends records and waits until they are durable.
func (l *Log) Commit(payloads ...[]byte) error {
	seq, err := l.Append(payloads...)
	if err != nil {
		return err
	}
	return l.Wait(seq)
}

// cutBackLocked drops what the failed write of data left after the last
// durable record, and the appends queued behind it; l.mu is held.
func (l *Log) cutBackLocked(data [][]byte) {
	for _, c := range append(data, l.pending...) {
		l.records -= bytes.Count(c, []byte{'\n'})
	}
	l.pending = nil
	l.failed = l.appended
	err := l.f.Truncate(l.good)
	if err == nil {
		_, err = l.f.Seek(l.good, io.SeekStart)
	}
	if err != nil {
		l.broken = fmt.Errorf("%s could not be cut back after a failed write; restart loupe: %w", l.path, err)
	}
}

// Rewrite replaces the log's records with payloads (none: an empty log),
// atomically: the new file is written and synced beside the log, renamed
// over it and the folder synced (failing that: ErrRenameNotDurable). Pending
// appends are written first.
func (l *Log) Rewrite(payloads [][]byte) error {
	if err := l.Flush(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.busy {
		l.synced.Wait()
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.path), filepath.Base(l.path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	var size int64
	for _, p := range payloads {
		n, _ := w.Write(Frame(p))
		size += int64(n)
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.path)
	}
	if err != nil {
		tmp.Close()
		return fmt.Errorf("rewrite %s: %w", l.path, err)
	}
	// From here on the log is the new file, whether or not its name is
	// durable yet.
	_ = l.f.Close() // tmp's offset is past what was written: the end
	l.f, l.good, l.records, l.broken = tmp, size, len(payloads), nil
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		return fmt.Errorf("rewrite %s: %w: %w", l.path, ErrRenameNotDurable, err)
	}
	return nil
}

// ErrRenameNotDurable is a Rewrite whose new file is the log but whose
// rename may not survive a crash (the folder could not be synced): what
// only the new file holds must not be acknowledged.
var ErrRenameNotDurable = errors.New("the renamed log may not survive a crash")

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Records is the number of records the log holds, written or pending.
func (l *Log) Records() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.records
}

// Size is the size of the log's durable records in bytes.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.good
}

// SwapFile replaces the file the log writes to and returns the one it
// wrote to: a seam for tests that inject faults.
func (l *Log) SwapFile(f File) File {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.busy {
		l.synced.Wait()
	}
	old := l.f
	l.f, l.broken = f, nil
	return old
}

// Close writes what is pending and closes the file.
func (l *Log) Close() error {
	err := l.Flush()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		if cerr := l.f.Close(); err == nil {
			err = cerr
		}
		l.f = nil
	}
	return err
}

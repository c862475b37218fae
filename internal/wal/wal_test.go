package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// replayAll opens the log at path and returns its payloads.
func replayAll(t *testing.T, path string) (*Log, []string) {
	t.Helper()
	var got []string
	l, err := Open(path, func(p []byte) error { got = append(got, string(p)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return l, got
}

func TestLog_ReplaysWhatWasCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, got := replayAll(t, path)
	if len(got) != 0 {
		t.Fatalf("a new log replays %v", got)
	}
	if err := l.Commit([]byte(`{"a":1}`), []byte(`b`)); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit([]byte(`c`)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, got = replayAll(t, path)
	defer l.Close()
	if strings.Join(got, ",") != `{"a":1},b,c` || l.Records() != 3 {
		t.Errorf("replayed %v (%d records)", got, l.Records())
	}
	if _, err := l.Append([]byte("two\nlines")); err == nil {
		t.Error("a payload with a newline was accepted")
	}
}

func TestLog_CutsATornTail(t *testing.T) {
	for name, tail := range map[string]string{
		"no newline":              "0badc0de half a reco",
		"bad checksum, last line": "0badc0de whole but wrong\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.log")
			l, _ := replayAll(t, path)
			if err := l.Commit([]byte("a"), []byte("b")); err != nil {
				t.Fatal(err)
			}
			l.Close()
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(tail)
			f.Close()
			l, got := replayAll(t, path)
			if strings.Join(got, ",") != "a,b" {
				t.Errorf("replayed %v", got)
			}
			if err := l.Commit([]byte("c")); err != nil {
				t.Fatal(err)
			}
			l.Close()
			l, got = replayAll(t, path)
			l.Close()
			if strings.Join(got, ",") != "a,b,c" {
				t.Errorf("after appending past the cut tail: %v", got)
			}
		})
	}
}

func TestLog_RefusesADamagedRecordBeforeTheLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := replayAll(t, path)
	if err := l.Commit([]byte("first record"), []byte("second record")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(path)
	data[12] ^= 1
	os.WriteFile(path, data, 0o644)
	_, err := Open(path, func([]byte) error { return nil })
	var corrupt *CorruptError
	if !errors.As(err, &corrupt) || corrupt.Offset != 0 || !strings.Contains(err.Error(), path+" is corrupt at byte 0: checksum mismatch") {
		t.Errorf("open: %v, want a CorruptError at byte 0", err)
	}
}

func TestLog_ReplaysLinesWrittenBeforeChecksums(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	os.WriteFile(path, []byte(`[{"old":1}]`+"\n"+`{"old":2}`+"\n"), 0o644)
	l, got := replayAll(t, path)
	defer l.Close()
	if strings.Join(got, ",") != `[{"old":1}],{"old":2}` {
		t.Errorf("replayed %v", got)
	}
}

// faultyFile writes half of what it is given and then fails, as a disk
// that fills up mid-write does.
type faultyFile struct{ File }

func (f faultyFile) Write(p []byte) (int, error) {
	n, _ := f.File.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

func TestLog_AFailedWriteIsCutBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := replayAll(t, path)
	if err := l.Commit([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	good := l.SwapFile(nil)
	l.SwapFile(faultyFile{good})
	if err := l.Commit([]byte("a record the disk cannot hold")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("commit on a full disk: %v, want ENOSPC", err)
	}
	if info, _ := os.Stat(path); info.Size() != l.Size() || l.Records() != 1 {
		t.Errorf("after the failed write the file holds %d bytes, the log %d bytes and %d records", info.Size(), l.Size(), l.Records())
	}
	l.SwapFile(good)
	if err := l.Commit([]byte("after")); err != nil {
		t.Fatalf("commit once space is back: %v", err)
	}
	l.Close()
	l, got := replayAll(t, path)
	l.Close()
	if strings.Join(got, ",") != "kept,after" {
		t.Errorf("replayed %v", got)
	}
}

// countingFile counts syncs.
type countingFile struct {
	File
	syncs *atomic.Int64
}

func (f countingFile) Sync() error { f.syncs.Add(1); return f.File.Sync() }

func TestLog_GroupCommitSharesSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := replayAll(t, path)
	var syncs atomic.Int64
	l.SwapFile(countingFile{l.SwapFile(nil), &syncs})
	const writers = 64
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			if err := l.Commit([]byte(fmt.Sprint("r", i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	l.Close()
	if n := syncs.Load(); n >= writers {
		t.Logf("%d syncs for %d concurrent commits: none shared (a slow machine can do that)", n, writers)
	}
	l, got := replayAll(t, path)
	l.Close()
	if len(got) != writers {
		t.Errorf("replayed %d records, want %d", len(got), writers)
	}
}

func TestLog_RewriteReplacesTheRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := replayAll(t, path)
	for i := range 10 {
		if err := l.Commit([]byte(fmt.Sprint("old", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Rewrite([][]byte{[]byte("compacted")}); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if l.Records() != 2 {
		t.Errorf("records = %d, want 2", l.Records())
	}
	l.Close()
	l, got := replayAll(t, path)
	l.Close()
	if strings.Join(got, ",") != "compacted,new" {
		t.Errorf("replayed %v", got)
	}
	if tmp, _ := filepath.Glob(path + ".tmp-*"); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func FuzzUnframe(f *testing.F) {
	for _, seed := range []string{"", "x", `{"a":1}`, "[1]", "00000000 ", "0badc0de x", "zzzzzzzz payload"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		payload, err := Unframe(line) // never panics
		if err == nil && line[0] != '{' && line[0] != '[' && !bytes.Equal(Frame(payload)[:len(line)], line) {
			t.Errorf("Unframe(%q) = %q, which frames differently", line, payload)
		}
		if bytes.IndexByte(line, '\n') < 0 {
			got, err := Unframe(bytes.TrimSuffix(Frame(line), []byte("\n")))
			if err != nil || !bytes.Equal(got, line) {
				t.Errorf("Unframe(Frame(%q)) = %q, %v", line, got, err)
			}
		}
	})
}

// TestLog_RecordsLargerThanABuffer: records around and beyond the size of
// the buffers appends are framed into, one at a time and several in one
// append, replay whole and in order; a failed write of several buffers is
// cut back to the last durable record.
func TestLog_RecordsLargerThanABuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _ := replayAll(t, path)
	record := func(i, size int) []byte {
		return append([]byte(fmt.Sprint(i, ":")), bytes.Repeat([]byte{'a' + byte(i)}, size)...)
	}
	var want []string
	for i, size := range []int{10, chunkSize - 20, chunkSize, 3 * chunkSize, 5} {
		p := record(i, size)
		if err := l.Commit(p, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, string(p), string(p))
	}
	good := l.SwapFile(nil)
	l.SwapFile(faultyFile{good})
	if err := l.Commit(record(8, chunkSize), record(9, 2*chunkSize)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("commit on a full disk: %v, want ENOSPC", err)
	}
	if info, _ := os.Stat(path); info.Size() != l.Size() || l.Records() != len(want) {
		t.Errorf("after the failed write the file holds %d bytes, the log %d bytes and %d records", info.Size(), l.Size(), l.Records())
	}
	l.SwapFile(good)
	l.Close()
	l, got := replayAll(t, path)
	l.Close()
	if !slices.Equal(got, want) {
		t.Errorf("replayed %d records, want %d", len(got), len(want))
	}
}

// TestLog_AppendingAllocatesNothing: once a log has written, appending and
// waiting reuse its buffers (the one allocation is Append's variadic
// argument, which the checksum's assembly keeps off the stack).
func TestLog_AppendingAllocatesNothing(t *testing.T) {
	l, _ := replayAll(t, filepath.Join(t.TempDir(), "x.log"))
	defer l.Close()
	payload := bytes.Repeat([]byte("m"), 1024)
	commit := func() {
		seq, err := l.Append(payload)
		if err == nil {
			err = l.Wait(seq)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	commit()
	if n := testing.AllocsPerRun(20, commit); n > 1 {
		t.Errorf("%v allocations an append", n)
	}
}

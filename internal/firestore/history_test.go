package firestore

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// bigDoc is a write of a document of about 100 KB.
func bigDoc(id string, n int64) *pb.Write {
	w := setDoc(id, n)
	w.GetUpdate().Fields["body"] = &pb.Value{ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("x", 100_000)}}
	return w
}

func readAt(t *testing.T, e *Engine, id string, at time.Time) (*pb.Document, error) {
	t.Helper()
	docs, _, err := e.BatchGet(context.Background(), identity.Owner, []string{ixDB + "/documents/items/" + id}, Consistency{ReadTime: at})
	if err != nil {
		return nil, err
	}
	return docs[0], nil
}

// TestHistory_TrimmedOnATimer: old versions go once they leave the window,
// without a later commit to push them out.
func TestHistory_TrimmedOnATimer(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{HistoryWindow: 300 * time.Millisecond})
	defer e.Close()
	res, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{bigDoc("a", 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{bigDoc("a", 2)}, nil); err != nil {
		t.Fatal(err)
	}
	if doc, err := readAt(t, e, "a", res.Time); err != nil || doc.Fields["n"].GetIntegerValue() != 1 {
		t.Fatalf("read at the first commit: %v, %v", doc, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.mu.RLock()
		n, bytes := len(e.hist.commits), e.hist.bytes
		e.mu.RUnlock()
		if n == 0 && bytes == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the history still holds %d commits (%d bytes) long after the window", n, bytes)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := readAt(t, e, "a", res.Time); errs.KindOf(err) != errs.FailedPrecondition {
		t.Errorf("read beyond the window: %v, want FAILED_PRECONDITION", err)
	}
}

// TestHistory_Budget: past the byte budget the oldest commits are
// forgotten first, within the window; a read before the new horizon fails
// with a message that says why, while recent ones are served, and a
// read-only transaction's read time is kept until it ends.
func TestHistory_Budget(t *testing.T) {
	ctx := context.Background()
	const budget = 1 << 20
	e, _ := Open(Options{HistoryBudget: budget})
	defer e.Close()
	first, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{bigDoc("a", 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := e.BeginTransaction(ixDB, &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}})
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for i := 1; i <= 40; i++ { // 4 MB of old versions
		res, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{bigDoc("a", int64(i))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, res.Time)
	}
	// The transaction began at the first state: it pins it.
	docs, _, err := e.BatchGet(ctx, identity.Owner, []string{ixDB + "/documents/items/a"}, Consistency{Transaction: txn})
	if err != nil || docs[0].Fields["n"].GetIntegerValue() != 0 {
		t.Fatalf("read-only transaction read %v, %v; want n 0", docs, err)
	}
	if err := e.Rollback(ixDB, txn); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{bigDoc("a", 41)}, nil); err != nil {
		t.Fatal(err)
	}
	e.mu.RLock()
	bytes := e.hist.bytes
	e.mu.RUnlock()
	if bytes > budget {
		t.Errorf("the history holds %d bytes, over its budget of %d", bytes, budget)
	}
	_, err = readAt(t, e, "a", first.Time)
	if errs.KindOf(err) != errs.FailedPrecondition || !strings.Contains(err.Error(), "MiB of document versions") {
		t.Errorf("read before the budget's horizon: %v, want FAILED_PRECONDITION naming the budget", err)
	}
	if doc, err := readAt(t, e, "a", times[len(times)-2]); err != nil || doc.Fields["n"].GetIntegerValue() != 39 {
		t.Errorf("recent read: %v, %v; want n 39", doc, err)
	}
}

// TestHistory_RebuiltFromTheLog: after a restart the log's commits are
// history again, back to the database's first write (before it, nothing
// existed); after the log is folded into the snapshot, back to the fold.
func TestHistory_RebuiltFromTheLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Second)
	c1, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 2), setDoc("b", 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{{Operation: &pb.Write_Delete{Delete: ixDB + "/documents/items/a"}}}, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		at   time.Time
		want int64 // 0: missing
	}{{"a", start, 0}, {"a", c1.Time, 1}, {"b", c1.Time, 0}, {"a", c2.Time, 2}, {"b", c2.Time, 1}, {"a", time.Time{}, 0}} {
		doc, err := readAt(t, e, tc.id, tc.at)
		if err != nil || doc.GetFields()["n"].GetIntegerValue() != tc.want || (tc.want == 0) != (doc == nil) {
			t.Errorf("after a restart, %s at %v = %v, %v; want n %d", tc.id, tc.at, doc, err, tc.want)
		}
	}
	e.mu.Lock()
	err = e.log.rewrite(e.dbs, e.lastTime)
	fold := e.lastTime
	e.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := readAt(t, e, "a", c2.Time); errs.KindOf(err) != errs.FailedPrecondition {
		t.Errorf("read before the fold: %v, want FAILED_PRECONDITION", err)
	}
	if doc, err := readAt(t, e, "b", fold); err != nil || doc.GetFields()["n"].GetIntegerValue() != 1 {
		t.Errorf("read at the fold: %v, %v; want b n 1", doc, err)
	}
}

package firestore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/wal"
)

// gatedWriter holds every write until it is released, so that a commit
// stays between "applied in memory" and "on disk" as long as a test needs.
type gatedWriter struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGatedWriter() *gatedWriter {
	return &gatedWriter{started: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.started) })
	<-g.release
	return len(p), nil
}

// durableReader tells whether one kind of read sees items/a with n == want
// (and the collection c<want>, for listings of collections).
type durableReader struct {
	name string
	sees func(e *Engine, want int64) (bool, error)
}

func durableReaders() []durableReader {
	ctx := context.Background()
	a := ixDB + "/documents/items/a"
	items := func(where *pb.StructuredQuery_Filter) *pb.StructuredQuery {
		return &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}}, Where: where}
	}
	nIs := func(want int64) *pb.StructuredQuery_Filter {
		return fieldFilter("n", pb.StructuredQuery_FieldFilter_EQUAL, intValue(want))
	}
	inTxn := func(e *Engine, opts *pb.TransactionOptions, want int64) (bool, error) {
		id, err := e.BeginTransaction(ixDB, opts)
		if err != nil {
			return false, err
		}
		defer e.Rollback(ixDB, id)
		docs, _, err := e.BatchGet(ctx, identity.Owner, []string{a}, Consistency{Transaction: id})
		return err == nil && docs[0].GetFields()["n"].GetIntegerValue() == want, err
	}
	return []durableReader{
		{"Get", func(e *Engine, want int64) (bool, error) {
			doc, err := e.Get(ctx, identity.Owner, a)
			return doc.GetFields()["n"].GetIntegerValue() == want, err
		}},
		{"BatchGet", func(e *Engine, want int64) (bool, error) {
			docs, _, err := e.BatchGet(ctx, identity.Owner, []string{a}, Consistency{})
			return err == nil && docs[0].GetFields()["n"].GetIntegerValue() == want, err
		}},
		{"RunQuery", func(e *Engine, want int64) (bool, error) {
			docs, _, err := e.RunQuery(ctx, identity.Owner, ixDB+"/documents", items(nIs(want)), Consistency{})
			return len(docs) == 1, err
		}},
		{"count", func(e *Engine, want int64) (bool, error) {
			out, _, err := e.Aggregate(ctx, identity.Owner, ixDB+"/documents", items(nIs(want)), []*pb.StructuredAggregationQuery_Aggregation{
				{Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}, Alias: "c"},
			}, Consistency{})
			return out["c"].GetIntegerValue() == 1, err
		}},
		{"count of a collection", func(e *Engine, want int64) (bool, error) {
			q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "c" + string(rune('0'+want))}}}
			out, _, err := e.Aggregate(ctx, identity.Owner, ixDB+"/documents", q, []*pb.StructuredAggregationQuery_Aggregation{
				{Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}, Alias: "c"},
			}, Consistency{})
			return out["c"].GetIntegerValue() == 1, err
		}},
		{"sum", func(e *Engine, want int64) (bool, error) {
			out, _, err := e.Aggregate(ctx, identity.Owner, ixDB+"/documents", items(nil), []*pb.StructuredAggregationQuery_Aggregation{
				{Operator: &pb.StructuredAggregationQuery_Aggregation_Sum_{Sum: &pb.StructuredAggregationQuery_Aggregation_Sum{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}}}, Alias: "s"},
			}, Consistency{})
			return out["s"].GetIntegerValue() == want, err
		}},
		{"read-write transaction", func(e *Engine, want int64) (bool, error) {
			return inTxn(e, nil, want)
		}},
		{"read-only transaction", func(e *Engine, want int64) (bool, error) {
			return inTxn(e, &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}}, want)
		}},
		{"ListDocuments", func(e *Engine, want int64) (bool, error) {
			docs, _, err := e.ListDocuments(ctx, identity.Owner, ixDB+"/documents", "items", 0, "", false, Consistency{})
			return len(docs) == 1 && docs[0].GetFields()["n"].GetIntegerValue() == want, err
		}},
		{"CollectionIDs", func(e *Engine, want int64) (bool, error) {
			ids, _, err := e.CollectionIDs(identity.Owner, ixDB+"/documents", 0, "")
			return slices.Contains(ids, "c"+string(rune('0'+want))), err
		}},
		{"Listen", func(e *Engine, want int64) (bool, error) {
			got := make(chan bool, 1)
			var once sync.Once
			var seen bool
			s := e.NewListenStream(identity.Owner, func(r *pb.ListenResponse, _ bool) error {
				if doc := r.GetDocumentChange().GetDocument(); doc != nil {
					seen = seen || doc.GetFields()["n"].GetIntegerValue() == want
				}
				if r.GetTargetChange().GetTargetChangeType() == pb.TargetChange_CURRENT {
					once.Do(func() { got <- seen })
				}
				return nil
			})
			defer s.Close()
			s.Receive(&pb.ListenRequest{Database: ixDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{TargetId: 1,
				TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{a}}}}}})
			return <-got, nil
		}},
	}
}

// durableCommit is the commit that sets items/a to n and creates c<n>/x.
func durableCommit(e *Engine, n int64) error {
	x := &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: ixDB + "/documents/c" + string(rune('0'+n)) + "/x"}}}
	_, err := e.Commit(context.Background(), identity.Owner, ixDB, []*pb.Write{setDoc("a", n), x}, nil)
	return err
}

// checkReaders fails the test unless every reader sees n == want and none
// sees n == never.
func checkReaders(t *testing.T, e *Engine, when string, want, never int64) {
	t.Helper()
	for _, r := range durableReaders() {
		if ok, err := r.sees(e, never); err != nil || ok {
			t.Errorf("%s: %s sees n = %d (err %v)", when, r.name, never, err)
		}
		if ok, err := r.sees(e, want); err != nil || !ok {
			t.Errorf("%s: %s does not see n = %d (err %v)", when, r.name, want, err)
		}
	}
}

// TestEngine_ReadersSeeOnlyDurableCommits holds a commit between memory and
// disk and then fails its fsync, while readers of every kind poll: none may
// see it, before or after it fails. A commit whose fsync succeeds becomes
// visible to every reader once its writer has its answer.
func TestEngine_ReadersSeeOnlyDurableCommits(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	if err := durableCommit(e, 1); err != nil {
		t.Fatal(err)
	}
	checkReaders(t, e, "before", 1, 2) // also builds the index on n

	// Readers poll all along, looking for the commit that will fail.
	stop := make(chan struct{})
	var polls sync.WaitGroup
	readers := durableReaders()
	polled := make([]atomic.Int64, len(readers)) // finished polls per reader
	for i, r := range readers {
		polls.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if ok, _ := r.sees(e, 2); ok {
					t.Errorf("polling: %s saw n = 2, a commit not yet durable", r.name)
					return
				}
				polled[i].Add(1)
			}
		})
	}

	// The next commit's write is held, and its fsync then fails.
	gate := newGatedWriter()
	logFile := e.log.wal.SwapFile(nil)
	e.log.wal.SwapFile(&gatedFile{File: logFile, gate: gate, failSync: true})
	failed := make(chan error, 1)
	go func() { failed <- durableCommit(e, 2) }()
	<-gate.started
	started := make([]int64, len(readers))
	for i := range polled {
		started[i] = polled[i].Load()
	}
	checkReaders(t, e, "while the commit awaits its fsync", 1, 2)
	// A create of the document the held commit creates is a read too: it
	// must not fail with ALREADY_EXISTS on a state that is then undone.
	created := make(chan error, 1)
	go func() {
		_, err := e.Commit(context.Background(), identity.Owner, ixDB, []*pb.Write{{
			Operation:       &pb.Write_Update{Update: &pb.Document{Name: ixDB + "/documents/c2/x"}},
			CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}},
		}}, nil)
		created <- err
	}()
	select {
	case err := <-created:
		t.Errorf("a create answered (%v) before the commit it conflicts with was durable", err)
	case <-time.After(50 * time.Millisecond):
	}
	// Every polling reader finished a poll while the commit was held, so
	// the polls above looked where the commit could have shown.
	for i, r := range readers {
		for deadline := time.Now().Add(time.Minute); polled[i].Load() < started[i]+2; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("polling: %s finished no poll while the commit was held", r.name)
			}
		}
	}
	close(gate.release)
	if err := <-failed; errs.KindOf(err) != errs.Unavailable {
		t.Fatalf("commit whose fsync failed: %v, want UNAVAILABLE", err)
	}
	if err := <-created; errs.KindOf(err) == errs.AlreadyExists {
		t.Errorf("create: %v, but the document it found was undone", err)
	}
	checkReaders(t, e, "after the fsync failed", 1, 2)
	close(stop)
	polls.Wait()

	// Put the log back; a commit held before its write is invisible until
	// it is durable, and visible to all once its writer has the answer.
	gate = newGatedWriter()
	e.log.wal.SwapFile(&gatedFile{File: logFile, gate: gate})
	acked := make(chan error, 1)
	go func() { acked <- durableCommit(e, 3) }()
	<-gate.started
	checkReaders(t, e, "while a commit awaits its write", 1, 3)
	close(gate.release)
	if err := <-acked; err != nil {
		t.Fatal(err)
	}
	checkReaders(t, e, "once the commit is acknowledged", 3, 2)

	e.Close()
	e, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	checkReaders(t, e, "after a restart", 3, 2)
}

// gatedFile writes to the log's file once its gate is released; its
// Sync fails when failSync.
type gatedFile struct {
	wal.File
	gate     *gatedWriter
	failSync bool
}

func (g *gatedFile) Write(p []byte) (int, error) {
	if _, err := g.gate.Write(p); err != nil {
		return 0, err
	}
	return g.File.Write(p)
}

func (g *gatedFile) Sync() error {
	if g.failSync {
		return errors.New("injected fsync failure")
	}
	return g.File.Sync()
}

package firestore

import (
	"context"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// TestEngine_AbandonedTransactionReleasesItsLocks: a transaction that
// holds a lock and then goes silent loses it once another waits for
// longer than abandonAfter; its commit then fails with ABORTED.
func TestEngine_AbandonedTransactionReleasesItsLocks(t *testing.T) {
	defer func(d time.Duration) { abandonAfter = d }(abandonAfter)
	abandonAfter = 200 * time.Millisecond
	ctx := context.Background()
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a := ixDB + "/documents/items/a"
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 1)}, nil); err != nil {
		t.Fatal(err)
	}
	abandoned, err := e.BeginTransaction(ixDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.BatchGet(ctx, identity.Owner, []string{a}, Consistency{Transaction: abandoned}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 2)}, nil); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < abandonAfter {
		t.Errorf("the write waited %v, less than the %v an abandoned lock is kept", waited, abandonAfter)
	}
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 3)}, abandoned); errs.KindOf(err) != errs.Aborted {
		t.Errorf("commit of the abandoned transaction: %v, want ABORTED", err)
	}
	if doc, _ := e.Get(ctx, identity.Owner, a); doc.GetFields()["n"].GetIntegerValue() != 2 {
		t.Errorf("n = %v, want the waiting write's 2", doc.GetFields()["n"])
	}
}

// TestEngine_RolledBackTransactionReleasesItsLocks: rollback frees the
// locks at once, and read-only transactions take none.
func TestEngine_RolledBackTransactionReleasesItsLocks(t *testing.T) {
	ctx := context.Background()
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a := ixDB + "/documents/items/a"
	ro, _ := e.BeginTransaction(ixDB, &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}})
	rw, _ := e.BeginTransaction(ixDB, nil)
	for _, id := range [][]byte{ro, rw} {
		if _, _, err := e.BatchGet(ctx, identity.Owner, []string{a}, Consistency{Transaction: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Rollback(ixDB, rw); err != nil {
		t.Fatal(err)
	}
	if !e.locks.empty() {
		t.Fatal("locks are held after the only read-write transaction rolled back")
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 1)}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write waited for a rolled back transaction")
	}
}

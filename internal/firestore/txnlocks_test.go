package firestore_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// Read-write transactions from the server SDKs lock what they read, as in
// production: conflicting transactions wait rather than fail, and ABORTED
// is the exception (issue 18).

// incrementAll runs clients × each counter increments, one transaction
// each, with the SDK's default attempts, and returns how many attempts the
// transactions took in all.
func incrementAll(ctx context.Context, clients []*firestore.Client, ref string, each int) (attempts int64, err error) {
	var wg sync.WaitGroup
	var firstErr atomic.Value
	var tries atomic.Int64
	for _, c := range clients {
		wg.Go(func() {
			doc := c.Doc(ref)
			for range each {
				err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
					tries.Add(1)
					snap, err := tx.Get(doc)
					if err != nil {
						return err
					}
					n, _ := snap.DataAt("n")
					return tx.Set(doc, map[string]any{"n": n.(int64) + 1})
				})
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return tries.Load(), err
	}
	return tries.Load(), nil
}

func TestConformance_TransactionsWaitForEachOther(t *testing.T) {
	ctx := context.Background()
	inst, first := start(t)
	clients := []*firestore.Client{first}
	for range 7 {
		clients = append(clients, newClient(t, inst))
	}
	if _, err := first.Doc("counters/c").Set(ctx, map[string]any{"n": 0}); err != nil {
		t.Fatal(err)
	}
	attempts, err := incrementAll(ctx, clients, "counters/c", 50)
	if err != nil {
		t.Fatalf("an increment failed after %d attempts in all: %v", attempts, err)
	}
	snap, err := first.Doc("counters/c").Get(ctx)
	if err != nil || snap.Data()["n"] != int64(400) {
		t.Fatalf("n = %v (%v), want 400", snap.Data()["n"], err)
	}
	if attempts != 400 {
		t.Errorf("400 increments took %d attempts: a transaction was aborted rather than made to wait", attempts)
	}
}

func TestConformance_TransactionLockHoldsOffWrites(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	other := newClient(t, inst)
	doc := c.Doc("locked/a")
	if _, err := doc.Set(ctx, map[string]any{"by": "start"}); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	written := make(chan error, 1)
	attempts := 0
	err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		attempts++
		if _, err := tx.Get(doc); err != nil {
			return err
		}
		if attempts == 1 {
			close(read)
			go func() {
				_, err := other.Doc("locked/a").Set(ctx, map[string]any{"by": "plain write"})
				written <- err
			}()
			select {
			case err := <-written:
				t.Errorf("a plain write went through (err %v) while a transaction held the document", err)
			case <-time.After(300 * time.Millisecond):
			}
		}
		return tx.Set(doc, map[string]any{"by": "transaction"})
	})
	if err != nil || attempts != 1 {
		t.Fatalf("transaction: %v after %d attempts, want one attempt", err, attempts)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if snap, _ := doc.Get(ctx); snap.Data()["by"] != "plain write" {
		t.Errorf("final value %v: the plain write should land after the transaction", snap.Data())
	}
}

func TestConformance_OlderTransactionWins(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	young := newClient(t, inst)
	x, y := c.Doc("ww/x"), c.Doc("ww/y")
	for _, d := range []*firestore.DocumentRef{x, y} {
		if _, err := d.Set(ctx, map[string]any{"n": 0}); err != nil {
			t.Fatal(err)
		}
	}
	oldHasX, youngHasY := make(chan struct{}), make(chan struct{})
	var oldAttempts, youngAttempts int
	var wg sync.WaitGroup
	wg.Go(func() { // older: x, then y
		err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
			oldAttempts++
			if _, err := tx.Get(x); err != nil {
				return err
			}
			if oldAttempts == 1 {
				close(oldHasX)
				<-youngHasY
			}
			if _, err := tx.Get(y); err != nil {
				return err
			}
			if oldAttempts == 1 {
				time.Sleep(200 * time.Millisecond) // time for the younger one to try to commit first
			}
			return tx.Set(y, map[string]any{"n": 1, "by": "old"})
		})
		if err != nil {
			t.Errorf("older transaction: %v", err)
		}
	})
	<-oldHasX
	err := young.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error { // younger: y, then x
		youngAttempts++
		if _, err := tx.Get(young.Doc("ww/y")); err != nil {
			return err
		}
		if youngAttempts == 1 {
			close(youngHasY)
			time.Sleep(100 * time.Millisecond) // the older one now waits for y
		}
		if _, err := tx.Get(young.Doc("ww/x")); err != nil {
			return err
		}
		return tx.Set(young.Doc("ww/x"), map[string]any{"n": 1, "by": "young"})
	})
	wg.Wait()
	if err != nil {
		t.Fatalf("younger transaction: %v", err)
	}
	if oldAttempts != 1 || youngAttempts != 2 {
		t.Errorf("attempts: older %d, younger %d; want the older to win at once and the younger to retry once", oldAttempts, youngAttempts)
	}
}

// BenchmarkServe_TransactionCounter: 8 Go SDK clients each increment one
// shared counter 50 times in transactions, on a real `loupe serve` with a
// data dir; it reports increments per second.
func BenchmarkServe_TransactionCounter(b *testing.B) {
	ctx := context.Background()
	inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: os.Getenv("LOUPE_BENCH_IN_MEMORY") != ""})
	b.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	var clients []*firestore.Client
	for range 8 {
		c, err := firestore.NewClient(ctx, project)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	for i := range b.N {
		if _, err := clients[0].Doc(fmt.Sprintf("counters/b%d", i)).Set(ctx, map[string]any{"n": 0}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		ref := fmt.Sprintf("counters/b%d", i)
		if attempts, err := incrementAll(ctx, clients, ref, 50); err != nil {
			b.Fatalf("after %d attempts: %v", attempts, err)
		}
		snap, err := clients[0].Doc(ref).Get(ctx)
		if err != nil || snap.Data()["n"] != int64(400) {
			b.Fatalf("n = %v (%v), want 400", snap.Data()["n"], err)
		}
	}
	b.ReportMetric(float64(400*b.N)/time.Since(start).Seconds(), "increments/s")
}

package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"
)

// firestoreFigures are what the Firestore workload measures.
type firestoreFigures struct {
	seqPerSec, concPerSec float64       // commits of one document
	queryP50, snapshotP50 time.Duration // equality query over the collection; write → listener
}

// firestoreWorkload drives the Go Firestore client against the emulator that
// FIRESTORE_EMULATOR_HOST names: after 20 commits to warm up, sequential
// commits, commits from 64
// goroutines, an equality query over docs documents (10 match), and the
// time from a write to its snapshot on a document listener.
func firestoreWorkload(ctx context.Context, project string, seq, conc, docs, samples int) (firestoreFigures, error) {
	var f firestoreFigures
	client, err := firestore.NewClient(ctx, project)
	if err != nil {
		return f, err
	}
	defer client.Close()
	run := fmt.Sprint(time.Now().UnixNano())
	for i := 0; i < 20; i++ { // warm up: a JVM's first commits run before its JIT
		if _, err := client.Collection("warm-"+run).Doc(fmt.Sprint(i)).Set(ctx, map[string]any{"n": i}); err != nil {
			return f, fmt.Errorf("warm-up commit: %w", err)
		}
	}

	began := time.Now()
	for i := 0; i < seq; i++ {
		if _, err := client.Collection("seq-"+run).Doc(fmt.Sprint(i)).Set(ctx, map[string]any{"n": i}); err != nil {
			return f, fmt.Errorf("sequential commit: %w", err)
		}
	}
	f.seqPerSec = float64(seq) / time.Since(began).Seconds()

	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	began = time.Now()
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(conc); i = next.Add(1) {
				if _, err := client.Collection("conc-"+run).Doc(fmt.Sprint(i)).Set(ctx, map[string]any{"n": i}); err != nil {
					errs <- fmt.Errorf("concurrent commit: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	f.concPerSec = float64(conc) / time.Since(began).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		return f, err
	}

	bw := client.BulkWriter(ctx)
	coll := client.Collection("query-" + run)
	for i := 0; i < docs; i++ {
		if _, err := bw.Set(coll.Doc(fmt.Sprint(i)), map[string]any{"group": i % (docs / 10), "n": i}); err != nil {
			return f, fmt.Errorf("fill the query collection: %w", err)
		}
	}
	bw.End()
	var lat []time.Duration
	for i := 0; i < samples; i++ {
		t := time.Now()
		got, err := coll.Where("group", "==", i%(docs/10)).Documents(ctx).GetAll()
		if err != nil {
			return f, fmt.Errorf("query: %w", err)
		}
		if len(got) != 10 {
			return f, fmt.Errorf("query: %d documents, want 10", len(got))
		}
		lat = append(lat, time.Since(t))
	}
	f.queryP50 = p50(lat)

	doc := client.Collection("listen-" + run).Doc("d")
	if _, err := doc.Set(ctx, map[string]any{"n": -1}); err != nil {
		return f, err
	}
	it := doc.Snapshots(ctx)
	defer it.Stop()
	if _, err := it.Next(); err != nil {
		return f, fmt.Errorf("listen: %w", err)
	}
	lat = lat[:0]
	for i := 0; i < samples; i++ {
		t := time.Now()
		if _, err := doc.Set(ctx, map[string]any{"n": i}); err != nil {
			return f, err
		}
		for {
			snap, err := it.Next()
			if err != nil {
				return f, fmt.Errorf("listen: %w", err)
			}
			if n, _ := snap.DataAt("n"); n == int64(i) {
				break
			}
		}
		lat = append(lat, time.Since(t))
	}
	f.snapshotP50 = p50(lat)
	return f, nil
}

package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// sightings records the highest value readers saw of each counter document.
type sightings struct {
	mu   sync.Mutex
	seen map[string]int64
}

func (s *sightings) saw(path string, n int64) {
	s.mu.Lock()
	s.seen[path] = max(s.seen[path], n)
	s.mu.Unlock()
}

// TestCrash_ReadersSeeOnlyWhatSurvives kills loupe with SIGKILL while
// writers bump counters and readers poll them with gets, queries and
// transactions: after each restart every counter holds at least the highest
// value any reader saw, since a reader must never see a commit before it is
// durable. Several rounds on one data dir; -long runs 10.
func TestCrash_ReadersSeeOnlyWhatSurvives(t *testing.T) {
	rounds, writers, readers := 3, 8, 4
	if *long {
		rounds = 10
	}
	dir := t.TempDir()
	seen := &sightings{seen: map[string]int64{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	counters := make([]string, writers)
	for w := range writers {
		counters[w] = fmt.Sprintf("seen/w%d", w)
	}
	for round := range rounds {
		inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
		c := connect(t, inst)
		checkSightings(t, c, seen, round)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := range writers {
			seen.mu.Lock()
			n := seen.seen[counters[w]] + 1
			seen.mu.Unlock()
			wg.Go(func() {
				ref := c.fs.Doc(counters[w])
				for ctx.Err() == nil {
					if _, err := ref.Set(ctx, map[string]any{"n": n}); err == nil {
						n++
					}
				}
			})
		}
		for r := range readers {
			wg.Go(func() { pollCounters(ctx, c.fs, counters, r, seen) })
		}
		time.Sleep(time.Duration(400+rng.IntN(800)) * time.Millisecond)
		inst.Kill()
		cancel()
		wg.Wait()
		c.close()
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	c := connect(t, inst)
	defer c.close()
	checkSightings(t, c, seen, rounds)
}

// pollCounters reads the counters until ctx ends, each reader its own way
// (a get, a query, a transaction), and records what it saw.
func pollCounters(ctx context.Context, fs *firestore.Client, counters []string, kind int, seen *sightings) {
	record := func(s *firestore.DocumentSnapshot) {
		if n, err := s.DataAt("n"); err == nil {
			seen.saw(s.Ref.Parent.ID+"/"+s.Ref.ID, n.(int64))
		}
	}
	for i := 0; ctx.Err() == nil; i++ {
		switch kind % 3 {
		case 0:
			if s, err := fs.Doc(counters[i%len(counters)]).Get(ctx); err == nil {
				record(s)
			}
		case 1:
			if docs, err := fs.Collection("seen").Where("n", ">", 0).Documents(ctx).GetAll(); err == nil {
				for _, s := range docs {
					record(s)
				}
			}
		case 2:
			var got []*firestore.DocumentSnapshot
			err := fs.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
				s, err := tx.Get(fs.Doc(counters[i%len(counters)]))
				got = []*firestore.DocumentSnapshot{s}
				return err
			}, firestore.ReadOnly)
			if err == nil {
				record(got[0])
			}
		}
	}
}

// checkSightings fails the test when a counter holds less than a reader saw.
func checkSightings(t *testing.T, c *clients, seen *sightings, round int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for path, want := range seen.seen {
		s, err := c.fs.Doc(path).Get(ctx)
		if err != nil {
			t.Fatalf("round %d: read %s: %v", round, path, err)
		}
		if n, _ := s.DataAt("n"); n.(int64) < want {
			t.Errorf("round %d: %s holds n = %d after the restart, but a reader saw %d before the kill", round, path, n, want)
		}
	}
}

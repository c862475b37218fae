package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// sightings records the highest value readers saw of each counter document,
// and how much work each round did: acknowledged writes, and sightings by
// each kind of reader.
type sightings struct {
	mu     sync.Mutex
	seen   map[string]int64
	acked  int
	byKind [3]int
}

func (s *sightings) saw(kind int, path string, n int64) {
	s.mu.Lock()
	s.seen[path] = max(s.seen[path], n)
	s.byKind[kind]++
	s.mu.Unlock()
}

func (s *sightings) ack() {
	s.mu.Lock()
	s.acked++
	s.mu.Unlock()
}

// busy reports whether this round has had acknowledged writes and a
// sighting by every kind of reader, and resets the counts when it has.
func (s *sightings) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acked == 0 || slices.Contains(s.byKind[:], 0) {
		return false
	}
	s.acked, s.byKind = 0, [3]int{}
	return true
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
		inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
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
						seen.ack()
					}
				}
			})
		}
		for r := range readers {
			wg.Go(func() { pollCounters(ctx, c.fs, counters, r, seen) })
		}
		// Kill only once writes were acknowledged and every kind of reader
		// saw a counter, so the check after the restart has something to check.
		waitForWork(t, fmt.Sprintf("round %d: acknowledged writes and sightings by gets, queries and transactions", round), seen.busy)
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
			seen.saw(kind%3, s.Ref.Parent.ID+"/"+s.Ref.ID, n.(int64))
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
	if round > 0 && len(seen.seen) == 0 {
		t.Fatalf("round %d: no reader saw any counter, so there is nothing to check", round)
	}
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

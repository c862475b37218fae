package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"firebase.google.com/go/v4/db"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// dbLedger records every Realtime Database write loupe acknowledged.
type dbLedger struct {
	mu       sync.Mutex
	counters map[string]int  // worker → last acknowledged value
	pushed   map[string]bool // "log/<key>"
	pairs    map[string]bool // pair ids written with one multi-path update
	// acked counts the sets, pushes and updates acknowledged since busy
	// last answered true.
	acked [3]int
}

// busy reports whether a set, a push and an update were each acknowledged
// since its last true answer.
func (led *dbLedger) busy() bool {
	led.mu.Lock()
	defer led.mu.Unlock()
	if slices.Contains(led.acked[:], 0) {
		return false
	}
	led.acked = [3]int{}
	return true
}

// dbWorker sets its counter, pushes log entries and writes pairs until ctx
// ends, recording what was acknowledged.
func (led *dbLedger) dbWorker(ctx context.Context, c *db.Client, round, w int) {
	for i := 1; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("w%d", w)
		value := round*100000 + i
		if err := c.NewRef("counters/"+name).Set(ctx, value); err == nil {
			led.mu.Lock()
			led.counters[name] = value
			led.acked[0]++
			led.mu.Unlock()
		}
		if ref, err := c.NewRef("log").Push(ctx, map[string]any{"w": w, "i": i}); err == nil {
			led.mu.Lock()
			led.pushed[ref.Key] = true
			led.acked[1]++
			led.mu.Unlock()
		}
		id := fmt.Sprintf("r%dw%di%d", round, w, i)
		if err := c.NewRef("/").Update(ctx, map[string]any{"pairs/" + id + "/a": i, "pairs/" + id + "/b": i}); err == nil {
			led.mu.Lock()
			led.pairs[id] = true
			led.acked[2]++
			led.mu.Unlock()
		}
	}
}

// verify checks that every acknowledged write is there and no pair is half
// written.
func (led *dbLedger) verify(t *testing.T, c *db.Client) {
	t.Helper()
	ctx := context.Background()
	var counters map[string]int
	if err := c.NewRef("counters").Get(ctx, &counters); err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := c.NewRef("log").GetShallow(ctx, &log); err != nil {
		t.Fatal(err)
	}
	var pairs map[string]map[string]int
	if err := c.NewRef("pairs").Get(ctx, &pairs); err != nil {
		t.Fatal(err)
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	for name, v := range led.counters {
		if counters[name] < v {
			t.Errorf("counter %s = %d, but %d was acknowledged", name, counters[name], v)
		}
	}
	for key := range led.pushed {
		if _, ok := log[key]; !ok {
			t.Errorf("pushed entry %s was acknowledged and is gone", key)
		}
	}
	for id := range led.pairs {
		if len(pairs[id]) != 2 {
			t.Errorf("pair %s was acknowledged and holds %v", id, pairs[id])
		}
	}
	for id, p := range pairs {
		if len(p) != 2 {
			t.Errorf("pair %s is half written: %v", id, p)
		}
	}
}

// TestCrash_DatabaseKillUnderLoad kills loupe with SIGKILL at random moments
// while Realtime Database writers (sets, pushes, multi-path updates) run
// through the Go Admin SDK, and checks after every restart that every
// acknowledged write is there and no update is half applied.
func TestCrash_DatabaseKillUnderLoad(t *testing.T) {
	rounds, workers := 3, 4
	if *long {
		rounds, workers = 20, 8
	}
	dir := t.TempDir()
	led := &dbLedger{counters: map[string]int{}, pushed: map[string]bool{}, pairs: map[string]bool{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := range rounds {
		inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
		c := loupetest.Database(t, inst, "crash")
		led.verify(t, c)
		if t.Failed() {
			t.Fatalf("round %d: the data dir lost acknowledged writes", round)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() { led.dbWorker(ctx, c, round, w) })
		}
		// Kill only once this round had a set, a push and an update
		// acknowledged, so every restart has new writes to check.
		waitForWork(t, fmt.Sprintf("round %d: an acknowledged set, push and multi-path update", round), led.busy)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		inst.Kill()
		cancel()
		wg.Wait()
		led.mu.Lock()
		t.Logf("round %d killed; acknowledged so far: %d counters, %d pushes, %d pairs", round, len(led.counters), len(led.pushed), len(led.pairs))
		led.mu.Unlock()
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	led.verify(t, loupetest.Database(t, inst, "crash"))
	if len(led.pushed) == 0 || len(led.pairs) == 0 {
		t.Fatal("no write was acknowledged: the test tested nothing")
	}
}

// folderSize is the bytes of the files in dir.
func folderSize(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

// TestCrash_DatabaseFolderStaysSmallUnderOverwrites overwrites a 1 MiB
// value again and again and checks after each acknowledged write that the
// Realtime Database's data folder holds at most twice the tree (the write
// log is folded into the snapshot while loupe runs, not only when it
// starts), then kills loupe with SIGKILL while writers overwrite it and
// checks that it starts with the last acknowledged value and the folder
// still that small.
func TestCrash_DatabaseFolderStaysSmallUnderOverwrites(t *testing.T) {
	dir := t.TempDir()
	dbDir := filepath.Join(dir, "database")
	// The tree's size as stored: {"big": value} plus the record's frame.
	const slack = 4 << 10
	value := func(i int) string { return fmt.Sprintf("%06d%s", i, strings.Repeat("v", 1<<20)) }
	inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	c := loupetest.Database(t, inst, "compact")
	ctx := context.Background()
	big := c.NewRef("big")
	for i := range 40 {
		if err := big.Set(ctx, value(i)); err != nil {
			t.Fatal(err)
		}
		if size := folderSize(t, dbDir); size > 2*(1<<20+slack) {
			t.Fatalf("after %d overwrites of 1 MiB the data folder holds %d KiB", i+1, size>>10)
		}
	}
	// Kill while two writers overwrite the value.
	var mu sync.Mutex
	acked := map[int]bool{}
	ctx2, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 1000 * (w + 1); ctx2.Err() == nil; i++ {
				if big.Set(ctx2, value(i)) == nil {
					mu.Lock()
					acked[i] = true
					mu.Unlock()
				}
			}
		})
	}
	waitForWork(t, "overwrites acknowledged", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 10 })
	inst.Kill()
	cancel()
	wg.Wait()
	inst = loupetest.Start(t, loupetest.Options{DataDir: dir})
	var got string
	if err := loupetest.Database(t, inst, "compact").NewRef("big").Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscanf(got[:6], "%d", &n); err != nil || len(got) != 6+1<<20 {
		t.Fatalf("after the crash the value is %d bytes starting %q", len(got), got[:min(len(got), 6)])
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range acked {
		if i/1000 == n/1000 && i > n {
			t.Errorf("after the crash the value is write %d, but write %d of the same writer was acknowledged", n, i)
		}
	}
	if size := folderSize(t, dbDir); size > 2*(1<<20+slack) {
		t.Errorf("after the crash the data folder holds %d KiB", size>>10)
	}
}

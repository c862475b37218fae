package functions

import (
	"context"
	"testing"
	"time"
)

// fakeClock is a clock the test moves: each After is answered by the test.
type fakeClock struct {
	now   time.Time
	waits chan time.Duration
	fire  chan time.Time
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.waits <- d
	return c.fire
}

// TestScheduler_RunsOnTheSchedule drives the --run-schedules loop with a
// fake clock: an App Engine interval, a unix cron in a named zone and a
// 1st-gen function without a zone (Los Angeles, as firebase-tools deploys
// it) each run at their times, and a schedule loupe cannot read is
// reported and skipped.
func TestScheduler_RunsOnTheSchedule(t *testing.T) {
	start := time.Date(2026, 3, 2, 7, 58, 30, 0, time.UTC) // 23:58:30 the day before in Los Angeles
	clk := &fakeClock{now: start, waits: make(chan time.Duration), fire: make(chan time.Time)}
	cb := &codebase{name: "v1"}
	fns := []Function{
		{Name: "fiveMinutes", Kind: KindSchedule, Platform: "gcfv2", Schedule: "every 5 minutes"},
		{Name: "tokyoEvening", Kind: KindSchedule, Platform: "gcfv2", Schedule: "0 17 * * *", TimeZone: "Asia/Tokyo"},
		{Name: "nightly", Kind: KindSchedule, Platform: "gcfv1", Schedule: "every day 00:00"},
		{Name: "broken", Kind: KindSchedule, Platform: "gcfv2", Schedule: "every blue moon"},
	}
	type run struct {
		name string
		at   time.Time
	}
	var runs []run
	var warned []string
	sc := &scheduler{clock: clk,
		list: func() map[*codebase][]Function { return map[*codebase][]Function{cb: fns} },
		run: func(c *codebase, f Function, at time.Time) bool {
			runs = append(runs, run{f.Name, at.UTC()})
			return true
		},
		warn: func(f Function, err error) { warned = append(warned, f.Name) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		sc.loop(ctx)
		close(done)
	}()
	// Step the clock to each wait the scheduler asks for, past 08:10 UTC.
	end := time.Date(2026, 3, 2, 8, 11, 0, 0, time.UTC)
	for clk.now.Before(end) {
		d := <-clk.waits
		clk.now = clk.now.Add(d)
		clk.fire <- clk.now
	}
	<-clk.waits
	cancel()
	close(clk.fire)
	// With both the context and the closed fire channel ready, the loop may
	// go round once more and ask for another wait: answer until it stops.
	for waiting := true; waiting; {
		select {
		case <-clk.waits:
		case <-done:
			waiting = false
		}
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 2, h, m, 0, 0, time.UTC) }
	want := []run{
		{"fiveMinutes", at(8, 0)}, {"nightly", at(8, 0)}, // midnight in Los Angeles (PST)
		{"fiveMinutes", at(8, 5)}, {"tokyoEvening", at(8, 0)},
		{"fiveMinutes", at(8, 10)},
	}
	// Runs due at the same tick may come in either order: compare as sets per time.
	if len(runs) != len(want) {
		t.Fatalf("runs = %v, want %v", runs, want)
	}
	count := map[run]int{}
	for _, r := range runs {
		count[r]++
	}
	for _, w := range want {
		if count[w] != 1 {
			t.Errorf("run %v: %d times; all runs %v", w, count[w], runs)
		}
	}
	if len(warned) != 1 || warned[0] != "broken" {
		t.Errorf("warned = %v, want [broken]", warned)
	}
}

// TestScheduler_SeesACodebaseThatFinishesBuilding: a codebase still
// building when the scheduler starts has no functions yet; once it has,
// its function runs at the first time its schedule names, not a relisting
// later.
func TestScheduler_SeesACodebaseThatFinishesBuilding(t *testing.T) {
	start := time.Date(2026, 3, 2, 7, 59, 30, 0, time.UTC)
	clk := &fakeClock{now: start, waits: make(chan time.Duration), fire: make(chan time.Time)}
	cb := &codebase{name: "v2"}
	built := start.Add(10 * time.Second)
	var runs []time.Time
	sc := &scheduler{clock: clk,
		list: func() map[*codebase][]Function {
			if clk.now.Before(built) {
				return nil
			}
			return map[*codebase][]Function{cb: {{Name: "tick", Kind: KindSchedule, Platform: "gcfv2", Schedule: "every 1 minutes"}}}
		},
		run: func(c *codebase, f Function, at time.Time) bool {
			runs = append(runs, at.UTC())
			return true
		},
		warn: func(f Function, err error) { t.Errorf("warned: %v", err) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		sc.loop(ctx)
		close(done)
	}()
	for clk.now.Before(time.Date(2026, 3, 2, 8, 0, 30, 0, time.UTC)) {
		d := <-clk.waits
		clk.now = clk.now.Add(d)
		clk.fire <- clk.now
	}
	<-clk.waits
	cancel()
	close(clk.fire)
	// With both the context and the closed fire channel ready, the loop may
	// go round once more and ask for another wait: answer until it stops.
	for waiting := true; waiting; {
		select {
		case <-clk.waits:
		case <-done:
			waiting = false
		}
	}
	if want := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC); len(runs) == 0 || !runs[0].Equal(want) {
		t.Fatalf("runs = %v, want the first at %v", runs, want)
	}
}

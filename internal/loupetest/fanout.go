package loupetest

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// FanOut is a case of the listener fan-out benchmarks (Firestore's and the
// Realtime Database's): Listeners listeners that each watch one shared
// target (View "one") or each their own user's slice (View "user": listener
// i watches user u<i>), while writes go to users u0 … u999 in turn.
type FanOut struct {
	Listeners int
	View      string // "none" (no listener), "one" or "user"
}

// FanOuts are the cases the fan-out benchmarks run: none, 200 and 1,000
// listeners on one target, 200 and 1,000 on per-user targets.
var FanOuts = []FanOut{{0, "none"}, {200, "one"}, {1000, "one"}, {200, "user"}, {1000, "user"}}

// Name names the case as a sub-benchmark.
func (f FanOut) Name() string { return fmt.Sprintf("listeners=%d/view=%s", f.Listeners, f.View) }

// Shared reports whether every listener watches the one target.
func (f FanOut) Shared() bool { return f.View == "one" }

// reached is how many listeners write i (from 1) reaches: all of them on
// one target, its user's listener (if there is one) per user.
func (f FanOut) reached(i int64) int64 {
	if f.Shared() {
		return int64(f.Listeners)
	}
	if i%1000 < int64(f.Listeners) {
		return 1
	}
	return 0
}

// Options starts loupe for a fan-out benchmark on a data dir of its own: a
// child process, unless LOUPE_BENCH_IN_PROCESS=1 asks for the benchmark's
// process, so that -cpuprofile sees where loupe's time goes (beside the
// clients').
func (f FanOut) Options(b *testing.B) Options {
	return Options{Process: os.Getenv("LOUPE_BENCH_IN_PROCESS") == "", DataDir: b.TempDir()}
}

// Run calls write b.N times (with 1, 2, …) from 64 concurrent callers, then
// waits until received (the deliveries the listeners counted as they
// arrived) holds every delivery the writes made. It reports unit ("commits/s")
// per second until the last write was answered and deliveries/s until the
// last delivery arrived.
func (f FanOut) Run(b *testing.B, unit string, received *atomic.Int64, write func(i int64) error) {
	var want int64
	for i := int64(1); i <= int64(b.N); i++ {
		want += f.reached(i)
	}
	b.SetParallelism(64 / runtime.GOMAXPROCS(0))
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(p *testing.PB) {
		for p.Next() {
			if err := write(next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	written := time.Since(start)
	for deadline := time.Now().Add(time.Minute); received.Load() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the listeners received %d of the %d deliveries written to them", received.Load(), want)
		}
	}
	delivered := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/written.Seconds(), unit)
	b.ReportMetric(float64(want)/delivered.Seconds(), "deliveries/s")
}

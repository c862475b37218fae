package emulator_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// BenchmarkServe_WritesWithListeners measures writes from 64 concurrent
// REST callers (the owner, one keep-alive connection each) into /feed while
// WebSocket sessions, as the JS SDK opens them, listen to it. view=one:
// every session listens to /feed, so every write reaches all of them;
// view=user: each listens to its user's /feed/u<i>, and writes go to
// /feed/u0 … /feed/u999 in turn, so a write reaches at most one. Reports
// writes/s (until the last write is answered) and deliveries/s: the
// updates the sessions received (writes × listeners reached, each counted
// when its frame arrives, by its first bytes) over the time until the last
// of them arrived.
//
// LOUPE_BENCH_IN_PROCESS=1 runs loupe in the benchmark's process, so that
// -cpuprofile sees where its time goes (beside the clients').
func BenchmarkServe_WritesWithListeners(b *testing.B) {
	for _, tc := range []struct {
		listeners int
		view      string // "one": /feed; "user": /feed/u<i>
	}{{0, "none"}, {200, "one"}, {1000, "one"}, {200, "user"}, {1000, "user"}} {
		b.Run(fmt.Sprintf("listeners=%d/view=%s", tc.listeners, tc.view), func(b *testing.B) {
			inst := loupetest.Start(b, loupetest.Options{Process: os.Getenv("LOUPE_BENCH_IN_PROCESS") == "", DataDir: b.TempDir()})
			const ns = "fanout"
			var received atomic.Int64
			for i := range tc.listeners {
				path := "/feed"
				if tc.view == "user" {
					path = fmt.Sprintf("/feed/u%d", i)
				}
				ws := dialWS(b, inst, "/.ws?v=5&ns="+ns)
				_ = ws.conn.SetDeadline(time.Time{})
				ws.read() // hello
				ws.send(`{"t":"d","d":{"r":1,"a":"q","b":{"p":"` + path + `","h":""}}}`)
				if status, _, _ := ws.answer(1); status != "ok" {
					b.Fatalf("listen %s: %s", path, status)
				}
				go func() {
					push := []byte(`{"t":"d","d":{"a":"`)
					for {
						op, p, err := readFrame(ws.rd)
						if err != nil {
							return
						}
						if op == 0x1 && bytes.HasPrefix(p, push) {
							received.Add(1)
						}
					}
				}()
			}
			want := int64(b.N) * int64(tc.listeners)
			if tc.view == "user" {
				want = 0
				for i := 1; i <= b.N; i++ {
					if i%1000 < tc.listeners {
						want++
					}
				}
			}
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.Cleanup(hc.CloseIdleConnections)
			b.SetParallelism(64 / runtime.GOMAXPROCS(0))
			var next atomic.Int64
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(p *testing.PB) {
				for p.Next() {
					i := next.Add(1)
					url := fmt.Sprintf("%s/feed/u%d/w%d.json?ns=%s", inst.URL, i%1000, i, ns)
					req, err := http.NewRequestWithContext(context.Background(), "PUT", url, strings.NewReader(fmt.Sprintf(`{"n":%d}`, i)))
					if err != nil {
						b.Error(err)
						return
					}
					req.Header.Set("Authorization", "Bearer owner")
					resp, err := hc.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("PUT: %s", resp.Status)
						return
					}
				}
			})
			written := time.Since(start)
			for deadline := time.Now().Add(time.Minute); received.Load() < want; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("the listeners received %d of the %d updates written to them", received.Load(), want)
				}
			}
			delivered := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/written.Seconds(), "writes/s")
			b.ReportMetric(float64(want)/delivered.Seconds(), "deliveries/s")
		})
	}
}

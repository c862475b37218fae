package emulator_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// BenchmarkServe_WritesWithListeners measures writes from 64 concurrent
// REST callers (the owner, one keep-alive connection each) into /feed while
// WebSocket sessions, as the JS SDK opens them, listen to it
// (loupetest.FanOuts). view=one: every session listens to /feed, so every
// write reaches all of them; view=user: each listens to its user's
// /feed/u<i>, and writes go to /feed/u0 … /feed/u999 in turn, so a write
// reaches at most one. Reports writes/s (until the last write is answered)
// and deliveries/s: the updates the sessions received (writes × listeners
// reached, each counted when its frame arrives, by its first bytes) over
// the time until the last of them arrived.
func BenchmarkServe_WritesWithListeners(b *testing.B) {
	for _, tc := range loupetest.FanOuts {
		b.Run(tc.Name(), func(b *testing.B) {
			inst := loupetest.Start(b, tc.Options(b))
			const ns = "fanout"
			var received atomic.Int64
			for i := range tc.Listeners {
				path := fmt.Sprintf("/feed/u%d", i)
				if tc.Shared() {
					path = "/feed"
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
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.Cleanup(hc.CloseIdleConnections)
			tc.Run(b, "writes/s", &received, func(i int64) error {
				url := fmt.Sprintf("%s/feed/u%d/w%d.json?ns=%s", inst.URL, i%1000, i, ns)
				req, err := http.NewRequestWithContext(context.Background(), "PUT", url, strings.NewReader(fmt.Sprintf(`{"n":%d}`, i)))
				if err != nil {
					return err
				}
				req.Header.Set("Authorization", "Bearer owner")
				resp, err := hc.Do(req)
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("PUT: %s", resp.Status)
				}
				return nil
			})
		})
	}
}

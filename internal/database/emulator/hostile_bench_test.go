package emulator_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// peakRSSMiB is the largest resident memory process pid has had (VmHWM).
func peakRSSMiB(b *testing.B, pid int) float64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("resident memory not readable: %v", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatalf("VmHWM %q: %v", rest, err)
			}
			return float64(kib) / 1024
		}
	}
	b.Skip("no VmHWM in /proc/PID/status")
	return 0
}

// BenchmarkServe_DatabaseUnderHostileClients times a signed-in user's
// small REST writes (b.N of them) to a `loupe serve` process while hostile
// clients run throughout: anonymous PATCHes of 30,000 keys at the root
// (which the rules deny once their keys are judged), four anonymous 21 MB
// PUTs at a time where the rules deny any anonymous write, and ten
// WebSocket listeners that never read while the owner overwrites the 1 MiB
// value they listen to. It reports the user's write latency (p50, p99) and
// loupe's peak resident memory (issue 38: p99 < 100 ms, RSS bounded).
func BenchmarkServe_DatabaseUnderHostileClients(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true})
	const ns = "hostile"
	owner := []string{"Authorization", "Bearer owner"}
	if code, out := loupetest.Call(b, "PUT", inst.URL+"/.settings/rules.json?ns="+ns,
		`{"rules": {".read": true, "users": {"$uid": {".write": "auth != null && auth.uid == $uid"}}, "feed": {".write": false}}}`, owner...); code != http.StatusOK {
		b.Fatalf("rules: %d %v", code, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	client := &http.Client{}
	send := func(method, path, body string, header ...string) {
		req, err := http.NewRequestWithContext(ctx, method, inst.URL+path, strings.NewReader(body))
		if err != nil {
			return
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	var wide strings.Builder
	wide.WriteString("{")
	for i := range 30_000 {
		fmt.Fprintf(&wide, `"users/u%05d/x":%d,`, i, i)
	}
	widePatch := strings.TrimSuffix(wide.String(), ",") + "}"
	huge := `"` + strings.Repeat("h", 21<<20) + `"`
	feed := `"` + strings.Repeat("f", 1<<20) + `"`
	loop := func(f func()) {
		wg.Go(func() {
			for ctx.Err() == nil {
				f()
			}
		})
	}
	loop(func() { send("PATCH", "/.json?ns="+ns, widePatch) })
	for range 4 {
		loop(func() { send("PUT", "/users/alice.json?ns="+ns, huge) })
	}
	for range 10 {
		ws := dialWS(b, inst, "/.ws?v=5&ns="+ns)
		ws.send(`{"t":"d","d":{"r":1,"a":"q","b":{"p":"/feed","h":""}}}`)
	}
	loop(func() { send("PUT", "/feed.json?ns="+ns, feed, owner...) })

	bob := []string{"Authorization", "Bearer " + loupetest.MockToken("bob")}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if code, out := loupetest.Call(b, "PUT", fmt.Sprintf("%s/users/bob/n.json?ns=%s", inst.URL, ns), strconv.Itoa(i), bob...); code != http.StatusOK {
			b.Fatalf("bob's write: %d %v", code, out)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(peakRSSMiB(b, inst.PID()), "peak-RSS-MiB")
}

package emulator_test

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// loadClient holds many Listen channels, over WebChannel, on a real
// `loupe serve` and writes to the document they listen to through REST.
type loadClient struct {
	inst *loupetest.Instance
	hc   *http.Client
	tabs []*emulator.Tab
}

func newLoadClient(b *testing.B) *loadClient {
	inst := loupetest.Start(b, loupetest.Options{InMemory: true, Process: true}) // PID: loupe's CPU and memory apart from the clients'
	l := &loadClient{inst: inst, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2048}}}
	b.Cleanup(l.hc.CloseIdleConnections)
	l.set(b, 0)
	return l
}

// open adds n tabs listening to fan/doc, 16 at a time, each CURRENT and
// past its first snapshot.
func (l *loadClient) open(b *testing.B, n int) {
	url := l.inst.URL + "/google.firestore.v1.Firestore/Listen/channel"
	tabs := make([]*emulator.Tab, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				tabs[i] = emulator.OpenTab(b, url, l.hc)
				tabs[i].Next(b)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	l.tabs = append(l.tabs, tabs...)
}

// set writes {v: n} to fan/doc with a REST commit, as the Admin SDK would.
func (l *loadClient) set(b *testing.B, n int) {
	body := fmt.Sprintf(`{"writes":[{"update":{"name":%q,"fields":{"v":{"integerValue":"%d"}}}}]}`, emulator.TestDB+"/documents/fan/doc", n)
	req, _ := http.NewRequest(http.MethodPost, l.inst.URL+"/v1/"+emulator.TestDB+"/documents:commit", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("commit = %d", resp.StatusCode)
	}
}

// BenchmarkListenChannel_FanOut1000: 1,000 Listen channels on one document;
// each op is one write, done when every channel received it. Reports the
// p50 and p99 of write-start → receipt over all channels (target p99 < 100 ms)
// and the CPU time loupe spent per write, which does not depend on how busy
// the machine is.
func BenchmarkListenChannel_FanOut1000(b *testing.B) {
	l := newLoadClient(b)
	l.open(b, 1000)
	var latencies []time.Duration
	cpu := cpuTime(b, l.inst.PID())
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		start := time.Now()
		l.set(b, i)
		for _, tb := range l.tabs {
			v, at := tb.NextSeen(b)
			if v != int64(i) {
				b.Fatalf("a channel received v=%d, want %d", v, i)
			}
			latencies = append(latencies, at.Sub(start))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b, l.inst.PID())-cpu)/float64(time.Millisecond)/float64(b.N), "server-CPU-ms/write")
	slices.Sort(latencies)
	at := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkListenChannel_IdleMemory opens b.N Listen channels (each with a
// document target and an open back channel, as an idle tab holds) on a real
// `loupe serve` and reports the growth of its resident memory per channel
// (target < 50 KiB).
func BenchmarkListenChannel_IdleMemory(b *testing.B) {
	l := newLoadClient(b)
	l.open(b, 16) // warm up
	time.Sleep(500 * time.Millisecond)
	before := loupetest.RSSKiB(b, l.inst.PID())
	b.ResetTimer()
	l.open(b, b.N)
	b.StopTimer()
	time.Sleep(500 * time.Millisecond)
	b.ReportMetric(float64(loupetest.RSSKiB(b, l.inst.PID())-before)/float64(b.N), "RSS-KiB/channel")
}

// cpuTime reads the user and system CPU time a process has used from /proc.
func cpuTime(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("process CPU time not readable: %v", err)
	}
	// Fields after the command name "(…)": utime and stime are the 12th and 13th, in clock ticks (100 Hz on Linux).
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

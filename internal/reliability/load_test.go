package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// debugVars is loupe's /emulator/v1/debug/vars answer.
type debugVars struct {
	Goroutines     int   `json:"goroutines"`
	HeapInuseBytes int64 `json:"heapInuseBytes"`
	RSSBytes       int64 `json:"rssBytes"`
}

func readVars(t *testing.T, inst *loupetest.Instance) debugVars {
	t.Helper()
	resp, err := http.Get(inst.URL + "/emulator/v1/debug/vars")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v debugVars
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// loadStats counts what the clients did and every error they saw.
type loadStats struct {
	ops, aborted, events, channelEvents atomic.Int64
	mu                                  sync.Mutex
	errs                                []error
	took                                map[string]time.Duration // per kind of operation
	count                               map[string]int
}

func (s *loadStats) done(op string, d time.Duration) {
	s.ops.Add(1)
	s.mu.Lock()
	s.took[op] += d
	s.count[op]++
	s.mu.Unlock()
}

// latencies is the mean latency of each kind of operation.
func (s *loadStats) latencies() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, op := range []string{"write", "read", "query", "transaction"} {
		if s.count[op] > 0 {
			fmt.Fprintf(&b, " %s %v", op, (s.took[op] / time.Duration(s.count[op])).Round(time.Millisecond))
		}
	}
	return b.String()
}

func (s *loadStats) fail(op string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 20 {
		s.errs = append(s.errs, fmt.Errorf("%s: %w", op, err))
	}
}

// TestLoad_ConcurrentClients runs many clients, each with its own Go SDK
// client (gRPC), mixing writes, reads, queries, transactions on shared
// documents and a live query listener, then checks that no client saw an
// error but ABORTED (which transactions retry), and that once the clients
// leave loupe's goroutines return to their baseline and its heap stays
// bounded. Short form: 50 clients for 5 s; -long: 200 clients for 60 s.
// Every fifth client listens over WebChannel, the others over gRPC.
func TestLoad_ConcurrentClients(t *testing.T) {
	clientsN, duration := 50, 5*time.Second
	if *long {
		clientsN, duration = 200, 60*time.Second
	}
	inst := loupetest.Start(t, loupetest.Options{})
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	base := readVars(t, inst)

	// The run ends by cancelling, not by a deadline: a deadline travels to
	// loupe with each call and could come back as DEADLINE_EXCEEDED.
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(duration, cancel).Stop()
	stats := &loadStats{took: map[string]time.Duration{}, count: map[string]int{}}
	var wg sync.WaitGroup
	for i := range clientsN {
		wg.Go(func() { loadClient(ctx, inst, i, stats) })
	}
	wg.Wait()
	peak := readVars(t, inst)
	for _, err := range stats.errs {
		t.Error(err)
	}
	t.Logf("%d clients for %s: %d operations (%.0f/s; mean latency%s), %d transaction attempts retried after ABORTED, %d gRPC listener snapshots, %d WebChannel arrays; loupe heap in use %d MiB, RSS %d MiB",
		clientsN, duration, stats.ops.Load(), float64(stats.ops.Load())/duration.Seconds(), stats.latencies(), stats.aborted.Load(), stats.events.Load(), stats.channelEvents.Load(),
		peak.HeapInuseBytes>>20, peak.RSSBytes>>20)
	if stats.events.Load() == 0 || stats.channelEvents.Load() == 0 {
		t.Error("a kind of listener received nothing")
	}
	stats.mu.Lock()
	for _, op := range []string{"write", "read", "query", "transaction"} {
		if stats.count[op] == 0 {
			t.Errorf("no %s completed in %s: the load did not run", op, duration)
		}
	}
	stats.mu.Unlock()
	if peak.HeapInuseBytes > 512<<20 {
		t.Errorf("heap in use after load = %d MiB, want under 512 MiB", peak.HeapInuseBytes>>20)
	}

	// Goroutines return to the baseline once every client has gone.
	deadline := time.Now().Add(15 * time.Second)
	var now debugVars
	for {
		now = readVars(t, inst)
		if now.Goroutines <= base.Goroutines+5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if now.Goroutines > base.Goroutines+5 {
		t.Errorf("goroutines after the clients left = %d, baseline %d", now.Goroutines, base.Goroutines)
	}
}

// loadClient is one client: a listener on its group's query for the whole
// run (over WebChannel, as a browser listens, for every fifth client; over
// gRPC for the others), and a loop of random operations until ctx ends.
func loadClient(ctx context.Context, inst *loupetest.Instance, id int, stats *loadStats) {
	c, err := firestore.NewClient(context.Background(), project)
	if err != nil {
		stats.fail("new client", err)
		return
	}
	defer c.Close()
	group := id % 10
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	listenCtx, stopListen := context.WithCancel(context.Background())
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		if id%5 == 0 {
			if err := webChannelQueryListen(listenCtx, inst, group, stats); err != nil && listenCtx.Err() == nil {
				stats.fail("WebChannel listen", err)
			}
			return
		}
		it := c.Collection("load").Where("group", "==", group).Snapshots(listenCtx)
		defer it.Stop()
		for {
			if _, err := it.Next(); err != nil {
				if listenCtx.Err() == nil {
					stats.fail("listen", err)
				}
				return
			}
			stats.events.Add(1)
		}
	}()
	mine := c.Doc(fmt.Sprintf("load/c%03d", id))
	for ctx.Err() == nil {
		var op string
		var err error
		began := time.Now()
		switch k := rng.IntN(10); {
		case k < 3:
			op = "write"
			_, err = mine.Set(ctx, map[string]any{"group": group, "n": rng.IntN(1000), "at": time.Now()})
		case k < 6:
			op = "read"
			_, err = c.Doc(fmt.Sprintf("load/c%03d", rng.IntN(id+1))).Get(ctx)
			if status.Code(err) == codes.NotFound {
				err = nil
			}
		case k < 8:
			op = "query"
			_, err = c.Collection("load").Where("group", "==", rng.IntN(10)).OrderBy("n", firestore.Desc).Limit(10).Documents(ctx).GetAll()
		default:
			op = "transaction"
			// Four clients share each counter: enough contention for
			// ABORTED, which the SDK retries, without making it the load.
			shared := c.Doc(fmt.Sprintf("counters/c%d", id/4))
			attempts := 0
			err = c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
				attempts++
				snap, err := tx.Get(shared)
				n := int64(0)
				if err == nil {
					v, _ := snap.DataAt("n")
					n, _ = v.(int64)
				} else if status.Code(err) != codes.NotFound {
					return err
				}
				return tx.Set(shared, map[string]any{"n": n + 1})
			}, firestore.MaxAttempts(50))
			stats.aborted.Add(int64(attempts - 1))
		}
		if err != nil && ctx.Err() == nil {
			stats.fail(op, err)
		}
		stats.done(op, time.Since(began))
	}
	stopListen()
	<-listening
}

// webChannelQueryListen listens to one group's query over WebChannel until
// ctx ends, as the JS SDK in a browser does: a handshake carrying addTarget,
// streaming back channels reopened with the last array id seen, and a
// terminate when done. Every array of messages counts as an event.
func webChannelQueryListen(ctx context.Context, inst *loupetest.Instance, group int, stats *loadStats) error {
	base := inst.URL + "/google.firestore.v1.Firestore/Listen/channel?VER=8&database=" + url.QueryEscape(dbPath)
	target := fmt.Sprintf(`{"database":%q,"addTarget":{"targetId":2,"query":{"parent":%q,"structuredQuery":{"from":[{"collectionId":"load"}],`+
		`"where":{"fieldFilter":{"field":{"fieldPath":"group"},"op":"EQUAL","value":{"integerValue":"%d"}}}}}}}`, dbPath, dbPath+"/documents", group)
	form := url.Values{"count": {"1"}, "ofs": {"0"}, "req0___data__": {target}, "headers": {"Authorization:Bearer owner\r\n"}}
	resp, err := http.Post(base+"&RID=1&CVER=22&zx=a&t=1", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	resp.Body.Close()
	sid := resp.Header.Get("X-HTTP-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return fmt.Errorf("handshake: HTTP %d", resp.StatusCode)
	}
	defer func() {
		resp, err := http.Post(base+"&RID=2&SID="+sid+"&TYPE=terminate&zx=c&t=1", "application/x-www-form-urlencoded", nil)
		if err == nil {
			resp.Body.Close()
		}
	}()
	aid := 0
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s&RID=rpc&SID=%s&AID=%d&CI=0&TYPE=xmlhttp&zx=b&t=1", base, sid, aid), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Errorf("back channel: HTTP %d", resp.StatusCode)
		}
		err = readChunks(resp.Body, func(arrays [][]json.RawMessage) {
			for _, a := range arrays {
				if len(a) > 0 {
					_ = json.Unmarshal(a[0], &aid)
				}
			}
			stats.channelEvents.Add(1)
		})
		resp.Body.Close()
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// readChunks reads WebChannel back-channel chunks ("<length>\n<JSON>", the
// length in UTF-16 code units; this test's data is ASCII) until the body ends.
func readChunks(body io.Reader, f func([][]json.RawMessage)) error {
	r := bufio.NewReader(body)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			return fmt.Errorf("chunk length %q: %w", line, err)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return err
		}
		var arrays [][]json.RawMessage
		if err := json.Unmarshal(payload, &arrays); err != nil {
			return fmt.Errorf("chunk %q: %w", payload, err)
		}
		f(arrays)
	}
}

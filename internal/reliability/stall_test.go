package reliability

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestStalledUploads_TimeOutAndHealthzAnswers: 1,000 resumable uploads that
// declare 2 GiB and send 1 KB, each on its own connection, against a loupe
// with 256 file descriptors. Past the per-client cap on open sessions the
// uploads are refused (429), /healthz keeps answering throughout, and a
// stalled upload's connection is closed once its body has been idle for
// --idle-timeout.
func TestStalledUploads_TimeOutAndHealthzAnswers(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Prefix: []string{"prlimit", "--nofile=256:256"}, Args: []string{"--idle-timeout", "3s"}})
	health := &http.Client{Timeout: 10 * time.Second}
	healthy := func(when string) {
		t.Helper()
		res, err := health.Get(inst.URL + "/healthz")
		if err != nil {
			t.Fatalf("/healthz %s: %v", when, err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("/healthz %s: %d", when, res.StatusCode)
		}
	}
	var started, refused atomic.Int64
	var mu sync.Mutex
	var stalled []net.Conn
	t.Cleanup(func() {
		for _, c := range stalled {
			c.Close()
		}
	})
	upload := func(i int) error {
		c, err := net.Dial("tcp", inst.Host)
		if err != nil {
			return err
		}
		r := bufio.NewReader(c)
		fmt.Fprintf(c, "POST /upload/storage/v1/b/demo-loupe.appspot.com/o?uploadType=resumable&name=big/%d HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer owner\r\nContent-Length: 2\r\n\r\n{}", i, inst.Host)
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			c.Close()
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusTooManyRequests {
			refused.Add(1)
			c.Close()
			return nil
		}
		location := res.Header.Get("Location")
		if res.StatusCode != 200 || location == "" {
			c.Close()
			return fmt.Errorf("start upload %d: %d", i, res.StatusCode)
		}
		path := location[strings.Index(location, "/upload/"):]
		fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s", path, inst.Host, int64(2)<<30, strings.Repeat("x", 1024))
		started.Add(1)
		mu.Lock()
		stalled = append(stalled, c)
		mu.Unlock()
		return nil
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for i := range work {
				if err := upload(i); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range 1000 {
		work <- i
		if i%100 == 99 {
			healthy(fmt.Sprintf("after %d uploads", i+1))
		}
	}
	close(work)
	wg.Wait()
	healthy("with every upload stalled")
	if started.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d uploads started and %d refused; want some of each (the cap on open sessions)", started.Load(), refused.Load())
	}
	// The first stalled upload's connection is closed once idle.
	mu.Lock()
	first := stalled[0]
	mu.Unlock()
	_ = first.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, first)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("a stalled upload was still open 30 s later (--idle-timeout 3s)")
	}
	healthy("at the end")
	t.Logf("%d uploads started, %d refused", started.Load(), refused.Load())
}

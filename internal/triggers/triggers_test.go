package triggers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPattern_Match(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"feedbackRequests/{r}/comments/{c}", "feedbackRequests/r1/comments/c1", true},
		{"feedbackRequests/{r}/comments/{c}", "feedbackRequests/r1", false},
		{"feedbackRequests/{r}/comments/{c}", "feedbackRequests/r1/comments/c1/x/y", false},
		{"feedbackRequests/{r}", "feedbackRequests/r1", true},
		{"feedbackRequests/{r}", "users/u1", false},
		{"users/{path=**}", "users/u1/private/p", true},
		{"users/{path=**}", "users", false},
	} {
		p, err := compilePattern(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.match(tc.path); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
	if _, err := compilePattern("a/{x=**}/b"); err == nil {
		t.Error("{x=**} in the middle: want an error")
	}
}

// function is a real HTTP endpoint standing in for a deployed function; it
// records the CloudEvents it gets and fails the first `failures` requests.
type function struct {
	mu       sync.Mutex
	failures int
	got      []http.Header
	bodies   []string
}

func (f *function) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failures > 0 {
		f.failures--
		http.Error(w, "boom", http.StatusInternalServerError)
		return
	}
	f.got = append(f.got, r.Header.Clone())
	f.bodies = append(f.bodies, string(body))
}

func TestDispatcher_DeliversEventarcShapedCloudEventsInOrderWithRetries(t *testing.T) {
	t.Parallel()
	fn := &function{failures: 2}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{Backoff: time.Millisecond})
	defer d.Close()
	err := d.SetTriggers([]Trigger{
		{Name: "counters", EventType: Written, Document: "feedbackRequests/{r}/comments/{c}", URL: srv.URL},
		{Name: "created-only", EventType: Created, Document: "feedbackRequests/{r}", URL: srv.URL + "/created"},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		d.Publish(Event{ID: fmt.Sprint("e", i), Project: "p", Database: "(default)",
			Document: "feedbackRequests/r1/comments/c1", Created: i == 0, Time: now, Data: []byte(fmt.Sprint(`{"n":`, i, `}`))})
	}
	d.Publish(Event{ID: "u1", Project: "p", Database: "(default)", Document: "feedbackRequests/r1", Time: now})
	d.Wait()

	if len(fn.bodies) != 5 {
		t.Fatalf("delivered %d events, want 5 (the update of the request matches no trigger)", len(fn.bodies))
	}
	for i, b := range fn.bodies {
		if want := fmt.Sprint(`{"n":`, i, `}`); b != want {
			t.Errorf("event %d body %s, want %s (order per document)", i, b, want)
		}
	}
	h := fn.got[0]
	for k, want := range map[string]string{
		"Ce-Specversion": "1.0",
		"Ce-Id":          "e0",
		"Ce-Type":        Written,
		"Ce-Source":      "//firestore.googleapis.com/projects/p/databases/(default)",
		"Ce-Subject":     "documents/feedbackRequests/r1/comments/c1",
		"Ce-Document":    "feedbackRequests/r1/comments/c1",
		"Ce-Time":        "2026-01-05T10:00:00Z",
		"Content-Type":   "application/json",
		// Binary mode carries the content type in Content-Type only.
		"Ce-Datacontenttype": "",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	log := d.Log()
	if len(log) != 7 || log[0].Delivered || log[1].Delivered || !log[2].Delivered || log[2].Attempt != 3 {
		t.Errorf("log = %+v", log)
	}
	for _, a := range log {
		// Latency runs from the commit (the event's time) to the attempt's start.
		if a.Latency != a.At.Sub(now) || a.Duration <= 0 {
			t.Errorf("attempt %s#%d: at %v, latency %v, duration %v; want latency = at - commit time", a.EventID, a.Attempt, a.At, a.Latency, a.Duration)
		}
	}
}

func TestDispatcher_GivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	fn := &function{failures: 100}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{Backoff: time.Millisecond, MaxAttempts: 3})
	defer d.Close()
	if err := d.SetTriggers([]Trigger{{Name: "t", EventType: Written, Document: "a/{b}", URL: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	d.Publish(Event{ID: "x", Document: "a/b"})
	d.Wait()
	if log := d.Log(); len(log) != 3 || log[2].Delivered || log[2].Status != 500 {
		t.Errorf("log = %+v", log)
	}
}

func TestDispatcher_RejectsBadTriggers(t *testing.T) {
	t.Parallel()
	d := New(Options{})
	defer d.Close()
	for _, tr := range []Trigger{
		{Name: "t", EventType: "nope", Document: "a/{b}"},
		{Name: "t", EventType: Written, Document: ""},
	} {
		if err := d.SetTriggers([]Trigger{tr}); err == nil {
			t.Errorf("SetTriggers(%+v): want an error", tr)
		}
	}
}

// TestDispatcher_DisableDropsTheEventsOfCommitsMadeWhileOff: what a pause
// drops is judged by commit time, not by when the event is published.
func TestDispatcher_DisableDropsTheEventsOfCommitsMadeWhileOff(t *testing.T) {
	t.Parallel()
	fn := &function{}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{})
	defer d.Close()
	if err := d.SetTriggers([]Trigger{{Name: "t", EventType: Written, Document: "a/{b}", URL: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	event := func(body string, at time.Time) Event {
		return Event{ID: body, Document: "a/" + body, Time: at, Data: []byte(`"` + body + `"`)}
	}
	before := time.Now()
	if err := d.Disable(context.Background()); err != nil || d.Enabled() {
		t.Fatalf("Disable: %v, enabled %v", err, d.Enabled())
	}
	during := time.Now()
	if err := d.Disable(context.Background()); err != nil { // twice is once
		t.Fatal(err)
	}
	d.Publish(event("before", before), event("during", during))
	d.Wait()
	d.Enable()
	after := time.Now()
	d.Publish(event("late-during", during), event("after", after))
	d.Wait()
	if !d.Enabled() {
		t.Error("Enabled() = false after Enable")
	}
	if got := strings.Join(fn.bodies, " "); got != `"before" "after"` {
		t.Errorf("delivered %s, want the events of the commits made before Disable and after Enable", got)
	}
}

// TestDispatcher_DisableWaitsForTheQueuedDeliveries: as firebase-tools
// flushes its work queue, Disable returns once the events queued before it
// have been delivered, or when its context ends.
func TestDispatcher_DisableWaitsForTheQueuedDeliveries(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	}))
	defer srv.Close()
	d := New(Options{})
	defer d.Close()
	if err := d.SetTriggers([]Trigger{{Name: "t", EventType: Written, Document: "a/{b}", URL: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	d.Publish(Event{ID: "slow", Document: "a/b", Time: time.Now()})
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := d.Disable(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Disable while a delivery is under way = %v, want it to wait until its context ends", err)
	}
	close(release)
	if err := d.Disable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if log := d.Log(); len(log) != 1 || !log[0].Delivered {
		t.Errorf("when Disable returned the log was %+v, want the queued event delivered", log)
	}
}

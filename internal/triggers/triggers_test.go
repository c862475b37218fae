package triggers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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

func TestTable_DeliversEventarcShapedCloudEventsInOrderWithRetries(t *testing.T) {
	t.Parallel()
	fn := &function{failures: 2}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{Backoff: time.Millisecond})
	defer d.Close()
	err := d.SetTriggers("cb", []Trigger{
		{Name: "counters", Source: Firestore, EventType: Written, Pattern: "feedbackRequests/{r}/comments/{c}", Retry: true, Deliver: post{URL: srv.URL}},
		{Name: "created-only", Source: Firestore, EventType: Created, Pattern: "feedbackRequests/{r}", Retry: true, Deliver: post{URL: srv.URL + "/created"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		d.Publish(Event{ID: fmt.Sprint("e", i), Project: "p", Instance: "(default)", Source: Firestore,
			Resource: "feedbackRequests/r1/comments/c1", Types: fsTypes(i == 0), Time: now, Data: []byte(fmt.Sprint(`{"n":`, i, `}`))})
	}
	d.Publish(Event{ID: "u1", Project: "p", Instance: "(default)", Source: Firestore, Resource: "feedbackRequests/r1", Types: fsTypes(false), Time: now})
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

func TestTable_GivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	fn := &function{failures: 100}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{Backoff: time.Millisecond, MaxAttempts: 3})
	defer d.Close()
	if err := d.SetTriggers("cb", []Trigger{{Name: "t", Source: Firestore, EventType: Written, Pattern: "a/{b}", Retry: true, Deliver: post{URL: srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	d.Publish(Event{ID: "x", Source: Firestore, Types: fsTypes(false), Resource: "a/b"})
	d.Wait()
	if log := d.Log(); len(log) != 3 || log[2].Delivered || log[2].Status != 500 {
		t.Errorf("log = %+v", log)
	}
}

func TestTable_RejectsBadTriggers(t *testing.T) {
	t.Parallel()
	d := New(Options{})
	defer d.Close()
	for _, tr := range []Trigger{
		{Name: "t", Source: Firestore, EventType: "nope", Pattern: "a/{b}", Deliver: post{}},
		{Name: "t", Source: Firestore, EventType: Written, Pattern: "a/{x=**}/b", Deliver: post{}},
		{Name: "t", Source: Storage, EventType: Written, Deliver: post{}},
		{Name: "t", Source: Firestore, EventType: Written},
	} {
		if err := d.SetTriggers("cb", []Trigger{tr}); err == nil {
			t.Errorf("SetTriggers(%+v): want an error", tr)
		}
	}
}

// TestDispatcher_DisableDropsTheEventsOfCommitsMadeWhileOff: what a pause
// drops is judged by commit time, not by when the event is published.
func TestTable_DisableDropsTheEventsOfCommitsMadeWhileOff(t *testing.T) {
	t.Parallel()
	fn := &function{}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{})
	defer d.Close()
	if err := d.SetTriggers("cb", []Trigger{{Name: "t", Source: Firestore, EventType: Written, Pattern: "a/{b}", Retry: true, Deliver: post{URL: srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	event := func(body string, at time.Time) Event {
		return Event{ID: body, Source: Firestore, Types: fsTypes(false), Resource: "a/" + body, Time: at, Data: []byte(`"` + body + `"`)}
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
func TestTable_DisableWaitsForTheQueuedDeliveries(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	}))
	defer srv.Close()
	d := New(Options{})
	defer d.Close()
	if err := d.SetTriggers("cb", []Trigger{{Name: "t", Source: Firestore, EventType: Written, Pattern: "a/{b}", Retry: true, Deliver: post{URL: srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	d.Publish(Event{ID: "slow", Source: Firestore, Types: fsTypes(false), Resource: "a/b", Time: time.Now()})
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

// TestDispatcher_UnavailableFailsFastUntilNewURLs: once the function is
// declared gone, the post under way ends and each retry fails at once with
// the reason given, recorded on the attempt; after SetTriggers names a new
// URL the retry is delivered there. Retired waits for the posts to the old
// URLs, and an event whose trigger is no longer declared is given up.
func TestTable_UnavailableFailsFastUntilNewURLs(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	var calls atomic.Int32
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			arrived <- struct{}{}
		}
		<-r.Context().Done()
	}))
	defer hung.Close()
	fn := &function{}
	next := httptest.NewServer(fn)
	defer next.Close()
	// Attempts enough that the retries outlast a loaded machine's delay
	// between the test's steps (they double from 20 ms up to 10 s).
	const maxAttempts = 20
	d := New(Options{Backoff: 20 * time.Millisecond, MaxAttempts: maxAttempts})
	defer d.Close()
	if err := d.SetTriggers("cb", []Trigger{{Name: "t", Source: Firestore, EventType: Written, Pattern: "a/{b}", Retry: true, Deliver: post{URL: hung.URL}}}); err != nil {
		t.Fatal(err)
	}
	d.Publish(Event{ID: "x", Source: Firestore, Types: fsTypes(false), Resource: "a/b", Time: time.Now()})
	<-arrived
	gone := errors.New("the function's process exited")
	d.Unavailable("cb", gone)
	for len(d.Log()) < 2 {
		time.Sleep(time.Millisecond)
	}
	if err := d.SetTriggers("cb", []Trigger{{Name: "t", Source: Firestore, EventType: Written, Pattern: "a/{b}", Retry: true, Deliver: post{URL: next.URL}}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Retired(context.Background(), "cb"); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	log := d.Log()
	if len(log) < 3 || !log[len(log)-1].Delivered || len(fn.got) != 1 {
		t.Fatalf("log = %+v, want failed attempts, then one delivered to the new URL", log)
	}
	for _, a := range log[:len(log)-1] {
		if a.Delivered || a.Error != gone.Error() {
			t.Errorf("attempt while unavailable = %+v, want failed with %q", a, gone)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the hung URL had %d calls, want only the first: retries while unavailable fail at once", n)
	}

	d.Unavailable("cb", gone)
	d.Publish(Event{ID: "y", Source: Firestore, Types: fsTypes(false), Resource: "a/c", Time: time.Now()})
	for len(d.Log()) == len(log) {
		time.Sleep(time.Millisecond)
	}
	if err := d.SetTriggers("cb", nil); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if last := d.Log()[len(d.Log())-1]; last.Delivered || last.Error != errTriggerGone.Error() || last.Attempt >= maxAttempts {
		t.Errorf("last attempt = %+v, want it given up as its trigger is gone", last)
	}
}

// fsTypes are the types of a Firestore create (created) or update.
func fsTypes(created bool) []string {
	if created {
		return []string{Created, Written}
	}
	return []string{Updated, Written}
}

// TestTable_RetriesAFailedFunctionOnlyWithRetry: a function that fails
// (answers an error) is given up after one attempt unless its trigger asks
// for retries, as a function deployed without retry: true; with a task
// queue's Policy the attempts and backoff are the trigger's own.
func TestTable_RetriesAFailedFunctionOnlyWithRetry(t *testing.T) {
	t.Parallel()
	fn := &function{failures: 100}
	srv := httptest.NewServer(fn)
	defer srv.Close()
	d := New(Options{Backoff: time.Millisecond})
	defer d.Close()
	err := d.SetTriggers("cb", []Trigger{
		{Name: "once", Source: Firestore, EventType: Written, Pattern: "a/{b}", Deliver: post{URL: srv.URL}},
		{Name: "twice", Source: Firestore, EventType: Written, Pattern: "a/{b}", Retry: true, Policy: Policy{MaxAttempts: 2, MinBackoff: time.Millisecond}, Deliver: post{URL: srv.URL}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := d.Publish(Event{ID: "x", Source: Firestore, Types: fsTypes(true), Resource: "a/b", Time: time.Now()}); n != 2 {
		t.Fatalf("Publish queued %d deliveries, want 2", n)
	}
	d.Wait()
	attempts := map[string]int{}
	for _, a := range d.Log() {
		attempts[a.Trigger]++
		if a.Delivered || a.Status != 500 {
			t.Errorf("attempt %+v, want a failed one", a)
		}
	}
	if attempts["once"] != 1 || attempts["twice"] != 2 {
		t.Errorf("attempts = %v, want once: 1 (no retry), twice: 2 (its policy)", attempts)
	}
}

// TestTable_RoutesBySourceInstanceAndType: an event reaches the triggers of
// its source, instance and type only, whichever owner declared them, and a
// …WithAuthContext trigger gets the Firestore events of its base type with
// the principal as CloudEvent attributes.
func TestTable_RoutesBySourceInstanceAndType(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
	}))
	defer srv.Close()
	d := New(Options{})
	defer d.Close()
	to := func(name string) post { return post{URL: srv.URL + "/" + name} }
	if err := d.SetTriggers("go", []Trigger{
		{Name: "named-db", Source: Firestore, EventType: Created, Instance: "other", Pattern: "users/{u}", Deliver: to("named-db")},
		{Name: "with-auth", Source: Firestore, EventType: Created + AuthContext, Instance: "(default)", Pattern: "users/{u}", Deliver: to("with-auth")},
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetTriggers("node", []Trigger{
		{Name: "deleted", Source: Firestore, EventType: Deleted, Instance: "(default)", Pattern: "users/{u}", Deliver: to("deleted")},
		{Name: "bucket", Source: Storage, EventType: ObjectFinalized, Instance: "b", Deliver: to("bucket")},
		{Name: "rtdb", Source: Database, EventType: DatabaseWritten, Instance: "*", Pattern: "users/{u}/{f}", Deliver: to("rtdb")},
	}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	d.Publish(
		Event{ID: "1", Source: Firestore, Types: fsTypes(true), Project: "p", Instance: "(default)", Resource: "users/u1", Time: now,
			Auth: &Principal{Type: "unknown", ID: "u1"}},
		Event{ID: "2", Source: Storage, Types: []string{ObjectFinalized}, Instance: "b", Resource: "photos/a.png", Time: now},
		Event{ID: "3", Source: Storage, Types: []string{ObjectFinalized}, Instance: "other", Resource: "a.png", Time: now},
		Event{ID: "4", Source: Database, Types: []string{DatabaseCreated, DatabaseWritten}, Instance: "p-default-rtdb", Resource: "users/u1/name", Time: now},
	)
	d.Wait()
	if len(got) != 3 || got["/with-auth"] == nil || got["/bucket"] == nil || got["/rtdb"] == nil {
		t.Fatalf("delivered to %v, want with-auth, bucket and rtdb", got)
	}
	for k, want := range map[string]string{"Ce-Type": Created + AuthContext, "Ce-Authtype": "unknown", "Ce-Authid": "u1"} {
		if v := got["/with-auth"].Get(k); v != want {
			t.Errorf("with-auth %s = %q, want %q", k, v, want)
		}
	}
	for k, want := range map[string]string{"Ce-Source": "//storage.googleapis.com/projects/_/buckets/b", "Ce-Subject": "objects/photos/a.png"} {
		if v := got["/bucket"].Get(k); v != want {
			t.Errorf("bucket %s = %q, want %q", k, v, want)
		}
	}
	for k, want := range map[string]string{"Ce-Subject": "refs/users/u1/name", "Ce-Instance": "p-default-rtdb", "Ce-Type": DatabaseWritten} {
		if v := got["/rtdb"].Get(k); v != want {
			t.Errorf("rtdb %s = %q, want %q", k, v, want)
		}
	}
}

// post delivers to an HTTP endpoint as the Go runtime does: a binary-mode
// CloudEvent.
type post struct{ URL string }

// postClient is post's own client: httptest.Server.Close closes the idle
// connections of http.DefaultTransport, which broke a parallel test's post
// that was just reusing one ("CloseIdleConnections called").
var postClient = &http.Client{Transport: &http.Transport{}}

func (p post) Deliver(ctx context.Context, t Trigger, e Event) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, strings.NewReader(string(e.Data)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range CloudEvent(e, t.EventType) {
		req.Header.Set("ce-"+k, v)
	}
	resp, err := postClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// tree is a Realtime Database write over plain values, for the table's
// database matching.
type tree struct {
	before, after map[string]any
	paths         [][]string
}

func at(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func (w tree) Paths() [][]string { return w.paths }

func (w tree) Changed(path []string) []string {
	b, _ := at(w.before, path).(map[string]any)
	a, _ := at(w.after, path).(map[string]any)
	var out []string
	for k := range b {
		if !reflect.DeepEqual(b[k], a[k]) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (w tree) At(path []string) ([]string, []byte, bool) {
	b, a := at(w.before, path), at(w.after, path)
	if reflect.DeepEqual(b, a) {
		return nil, nil, false
	}
	kind := DatabaseUpdated
	switch {
	case b == nil:
		kind = DatabaseCreated
	case a == nil:
		kind = DatabaseDeleted
	}
	data, _ := json.Marshal(map[string]any{"data": b, "after": a})
	return []string{kind, DatabaseWritten}, data, true
}

// TestPattern_InstancesOfADatabaseWrite: a database trigger's pattern
// matches a write at, below or above its location, once per location whose
// data the write changed.
func TestPattern_InstancesOfADatabaseWrite(t *testing.T) {
	t.Parallel()
	before := map[string]any{"users": map[string]any{
		"u1": map[string]any{"name": "Ann", "age": 3.0},
		"u2": map[string]any{"name": "Bob"},
		"u3": map[string]any{"name": "Cy"},
	}}
	after := map[string]any{"users": map[string]any{
		"u1": map[string]any{"name": "Anna", "age": 4.0},
		"u2": map[string]any{"name": "Bob"},
		"u4": map[string]any{"name": "Di"},
	}, "rooms": map[string]any{"r1": true}}
	for _, tc := range []struct {
		name    string
		pattern string
		paths   []string
		want    []string
	}{
		{"below the location", "users/{uid}", []string{"users/u1/name"}, []string{"users/u1"}},
		{"at the location", "users/{uid}", []string{"users/u1"}, []string{"users/u1"}},
		{"above: each changed child", "users/{uid}", []string{"users"}, []string{"users/u1", "users/u3", "users/u4"}},
		{"at the root", "users/{uid}", []string{""}, []string{"users/u1", "users/u3", "users/u4"}},
		{"a multi-path update, once per location", "users/{uid}", []string{"users/u1/name", "users/u1/age", "users/u4"}, []string{"users/u1", "users/u4"}},
		{"literal segments below a shallow write", "users/u1/name", []string{""}, []string{"users/u1/name"}},
		{"another branch", "users/{uid}", []string{"rooms/r1"}, nil},
		{"a wildcard then a literal", "users/{uid}/name", []string{"users"}, []string{"users/u1/name", "users/u3/name", "users/u4/name"}},
		{"the root trigger", "", []string{"users/u1/name"}, []string{""}},
		{"a deeper write under {x=**}", "users/{rest=**}", []string{"users/u1/name"}, []string{"users/u1/name"}},
		{"a shallower write under {x=**}", "users/{rest=**}", []string{"users"}, []string{"users/u1", "users/u3", "users/u4"}},
	} {
		var p pattern
		if tc.pattern != "" {
			var err error
			if p, err = compilePattern(tc.pattern); err != nil {
				t.Fatal(err)
			}
		}
		w := tree{before: before, after: after}
		for _, s := range tc.paths {
			var segs []string
			if s != "" {
				segs = strings.Split(s, "/")
			}
			w.paths = append(w.paths, segs)
		}
		var got []string
		for _, path := range p.instances(w) {
			got = append(got, strings.Join(path, "/"))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q for writes at %q: %q, want %q", tc.name, tc.pattern, tc.paths, got, tc.want)
		}
	}
}

// TestTable_DeliversADatabaseWriteOncePerMatchingLocation: a write at the
// root reaches a trigger once for each location its data changed, as the
// event at that location (resource, type, data); a created-only trigger
// gets only the creations, and a trigger of another instance nothing.
func TestTable_DeliversADatabaseWriteOncePerMatchingLocation(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], r.Header.Get("Ce-Subject")+" "+r.Header.Get("Ce-Type")+" "+string(body))
		mu.Unlock()
	}))
	defer srv.Close()
	d := New(Options{})
	defer d.Close()
	to := func(name string) post { return post{URL: srv.URL + "/" + name} }
	if err := d.SetTriggers("node", []Trigger{
		{Name: "written", Source: Database, EventType: DatabaseWritten, Instance: "*", Pattern: "users/{uid}", Deliver: to("written")},
		{Name: "created", Source: Database, EventType: DatabaseCreated, Instance: "db", Pattern: "users/{uid}", Deliver: to("created")},
		{Name: "other-db", Source: Database, EventType: DatabaseWritten, Instance: "other", Pattern: "users/{uid}", Deliver: to("other-db")},
	}); err != nil {
		t.Fatal(err)
	}
	w := tree{
		before: map[string]any{"users": map[string]any{"u1": "a", "u2": "b"}},
		after:  map[string]any{"users": map[string]any{"u1": "A", "u2": "b", "u3": "c"}},
		paths:  [][]string{nil},
	}
	if n := d.Publish(Event{ID: "w", Source: Database, Instance: "db", Time: time.Now(), Write: w}); n != 3 {
		t.Errorf("Publish queued %d deliveries, want 3", n)
	}
	d.Wait()
	sort.Strings(got["/written"])
	want := map[string][]string{
		"/written": {
			`refs/users/u1 google.firebase.database.ref.v1.written {"after":"A","data":"a"}`,
			`refs/users/u3 google.firebase.database.ref.v1.written {"after":"c","data":null}`,
		},
		"/created": {`refs/users/u3 google.firebase.database.ref.v1.created {"after":"c","data":null}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("delivered\n%q\nwant\n%q", got, want)
	}
}

// TestTable_TriggersArePerProject: a trigger of project p gets the events
// of p only, as a deployed function does; one without a project gets them
// all.
func TestTable_TriggersArePerProject(t *testing.T) {
	t.Parallel()
	d := New(Options{})
	defer d.Close()
	err := d.SetTriggers("cb", []Trigger{
		{Name: "orders", Project: "p", Source: Firestore, EventType: Written, Instance: "(default)", Pattern: "orders/{o}", Deliver: accepting{}},
		{Name: "signups", Project: "p", Source: Auth, EventType: UserCreated, Deliver: accepting{}},
		{Name: "any", Source: Auth, EventType: UserCreated, Deliver: accepting{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		e    Event
		want int
	}{
		{Event{ID: "1", Source: Firestore, Types: fsTypes(true), Project: "q", Instance: "(default)", Resource: "orders/o1"}, 0},
		{Event{ID: "2", Source: Firestore, Types: fsTypes(true), Project: "p", Instance: "(default)", Resource: "orders/o1"}, 1},
		{Event{ID: "3", Source: Auth, Types: []string{UserCreated}, Project: "q", Resource: "u1"}, 1},
		{Event{ID: "4", Source: Auth, Types: []string{UserCreated}, Project: "p", Resource: "u1"}, 2},
	} {
		if n := d.Publish(tc.e); n != tc.want {
			t.Errorf("event %s of project %s: %d deliveries queued, want %d", tc.e.ID, tc.e.Project, n, tc.want)
		}
	}
	d.Wait()
}

// accepting is a function that takes every event.
type accepting struct{}

func (accepting) Deliver(context.Context, Trigger, Event) (int, error) { return http.StatusOK, nil }

package emulator_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"firebase.google.com/go/v4/db"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

type dino struct {
	Height float64 `json:"height"`
	Name   string  `json:"name"`
}

func TestGoAdminSDK_ReadsWritesQueriesAndTransactions(t *testing.T) {
	inst := serve(t)
	client := loupetest.Database(t, inst, "gosdk")
	ctx := context.Background()

	dinos := client.NewRef("dinosaurs")
	for key, d := range map[string]dino{"bruhathkayosaurus": {25, "B"}, "lambeosaurus": {2.1, "L"}, "linhenykus": {0.6, "Li"}, "pterodactyl": {0.6, "P"}, "stegosaurus": {4, "S"}} {
		if err := dinos.Child(key).Set(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	ordered := func(q *db.Query) []string {
		t.Helper()
		nodes, err := q.GetOrdered(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, n := range nodes {
			keys = append(keys, n.Key())
		}
		return keys
	}
	for _, tc := range []struct {
		name string
		q    *db.Query
		want string
	}{
		{"by child, first 2", dinos.OrderByChild("height").LimitToFirst(2), "linhenykus,pterodactyl"},
		{"by child, last 2", dinos.OrderByChild("height").LimitToLast(2), "stegosaurus,bruhathkayosaurus"},
		{"by child, range", dinos.OrderByChild("height").StartAt(1).EndAt(5), "lambeosaurus,stegosaurus"},
		{"by child, equal", dinos.OrderByChild("height").EqualTo(0.6), "linhenykus,pterodactyl"},
		{"by key, from l", dinos.OrderByKey().StartAt("l").EndAt("m"), "lambeosaurus,linhenykus"},
	} {
		if got := strings.Join(ordered(tc.q), ","); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
	var shallow map[string]bool
	if err := client.NewRef("/").GetShallow(ctx, &shallow); err != nil || !shallow["dinosaurs"] {
		t.Fatalf("shallow read: %v %v", shallow, err)
	}

	// Push, Update, Delete.
	pushed, err := client.NewRef("log").Push(ctx, map[string]any{"msg": "hi"})
	if err != nil || len(pushed.Key) != 20 {
		t.Fatalf("push: %v %v", pushed, err)
	}
	if err := dinos.Child("stegosaurus").Update(ctx, map[string]any{"height": 5, "extinct": true}); err != nil {
		t.Fatal(err)
	}
	var steg map[string]any
	if err := dinos.Child("stegosaurus").Get(ctx, &steg); err != nil || steg["height"] != 5.0 || steg["extinct"] != true || steg["name"] != "S" {
		t.Fatalf("after update: %v %v", steg, err)
	}
	if err := pushed.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	var gone any
	if err := pushed.Get(ctx, &gone); err != nil || gone != nil {
		t.Fatalf("after delete: %v %v", gone, err)
	}

	// ETags: a conditional write fails once the value has changed.
	counter := client.NewRef("counter")
	if err := counter.Set(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var n int
	tag, err := counter.GetWithETag(ctx, &n)
	if err != nil || tag == "" {
		t.Fatalf("etag: %q %v", tag, err)
	}
	changed, _, err := counter.GetIfChanged(ctx, tag, &n)
	if err != nil || changed {
		t.Fatalf("GetIfChanged with the current etag: changed=%v %v", changed, err)
	}
	if ok, err := counter.SetIfUnchanged(ctx, tag, 2); err != nil || !ok {
		t.Fatalf("SetIfUnchanged with the current etag: %v %v", ok, err)
	}
	if ok, err := counter.SetIfUnchanged(ctx, tag, 3); err != nil || ok {
		t.Fatalf("SetIfUnchanged with an old etag: %v %v", ok, err)
	}

	// Transactions under contention: every committed increment lands once.
	// The SDK gives a transaction 25 tries without backoff, so under this
	// much contention one may give up ("transaction aborted after failed
	// retries"), as it would against production: those are counted, not
	// failed.
	const writers, each = 8, 5
	var committed, aborted atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range each {
				err := counter.Transaction(ctx, func(tn db.TransactionNode) (any, error) {
					var cur int
					if err := tn.Unmarshal(&cur); err != nil {
						return nil, err
					}
					return cur + 1, nil
				})
				switch {
				case err == nil:
					committed.Add(1)
				case strings.Contains(err.Error(), "transaction aborted after failed retries"):
					aborted.Add(1)
				default:
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if committed.Load() < writers {
		t.Fatalf("only %d of %d transactions committed (%d gave up)", committed.Load(), writers*each, aborted.Load())
	}
	if err := counter.Get(ctx, &n); err != nil || int64(n) != 2+committed.Load() {
		t.Fatalf("counter = %d (%v), want %d: 2 and %d committed increments", n, err, 2+committed.Load(), committed.Load())
	}
}

// TestREST_EventStream follows a location as curl does: the first put is the
// whole value, then puts and patches arrive with paths relative to it.
func TestREST_EventStream(t *testing.T) {
	inst := serve(t)
	base := inst.URL
	call := func(method, path, body string) {
		t.Helper()
		if code, _ := loupetest.Call(t, method, base+path, body); code != http.StatusOK {
			t.Fatalf("%s %s: %d", method, path, code)
		}
	}
	call("PUT", "/chat.json?ns=sse", `{"a":{"text":"hi"}}`)
	next := eventStream(t, base+"/chat.json?ns=sse")
	if got, want := next(), `put {"path":"/","data":{"a":{"text":"hi"}}}`; got != want {
		t.Fatalf("first event %s, want %s", got, want)
	}
	call("PUT", "/chat/b.json?ns=sse", `{"text":"yo"}`)
	if got, want := next(), `put {"path":"/b","data":{"text":"yo"}}`; got != want {
		t.Fatalf("after a put: %s, want %s", got, want)
	}
	call("PATCH", "/chat.json?ns=sse", `{"a/text":"hey","c":1}`)
	if got, want := next(), `patch {"path":"/","data":{"a/text":"hey","c":1}}`; got != want {
		t.Fatalf("after a patch: %s, want %s", got, want)
	}
	call("DELETE", "/.json?ns=sse", "")
	if got, want := next(), `put {"path":"/","data":null}`; got != want {
		t.Fatalf("after deleting the root: %s, want %s", got, want)
	}
}

// eventStream opens a REST event stream at url and returns a function that
// waits for its next event as "name data" ("" once the stream has ended).
func eventStream(t *testing.T, url string) (next func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("stream answered %d %s", resp.StatusCode, ct)
	}
	events := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- ev + " " + strings.TrimPrefix(line, "data: ")
			}
		}
		close(events)
	}()
	return func() string {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return ""
	}
}

// TestREST_EventStreamCancelledWhenTheRulesDeny: a REST event stream whose
// location the rules come to deny gets production's cancel event and ends,
// as the SDK's listen is revoked.
func TestREST_EventStreamCancelledWhenTheRulesDeny(t *testing.T) {
	inst := serve(t)
	owner := []string{"Authorization", "Bearer owner"}
	setRules := func(rules string) {
		t.Helper()
		if code, out := loupetest.Call(t, "PUT", inst.URL+"/.settings/rules.json?ns=rc", rules, owner...); code != http.StatusOK {
			t.Fatalf("setting rules: %d %v", code, out)
		}
	}
	setRules(`{"rules": {"notes": {".read": "auth != null"}}}`)
	if code, out := loupetest.Call(t, "PUT", inst.URL+"/notes/a.json?ns=rc", `"hi"`, owner...); code != http.StatusOK {
		t.Fatalf("seeding: %d %v", code, out)
	}
	next := eventStream(t, inst.URL+"/notes.json?ns=rc&auth="+loupetest.MockToken("u1"))
	if got, want := next(), `put {"path":"/","data":{"a":"hi"}}`; got != want {
		t.Fatalf("first event %s, want %s", got, want)
	}
	setRules(`{"rules": {"notes": {".read": false}}}`)
	if got, want := next(), `cancel "Permission denied"`; got != want {
		t.Fatalf("after the rules deny: %s, want %s", got, want)
	}
	if got := next(); got != "" {
		t.Errorf("the stream goes on after cancel: %s", got)
	}
}

// TestREST_ErrorsAsProductionAnswers checks the REST API's answers to bad
// requests.
func TestREST_ErrorsAsProductionAnswers(t *testing.T) {
	inst := serve(t)
	for _, tc := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"PUT", "/a.json?ns=e", `{"b.c":1}`, 400, "Invalid data"},
		{"PUT", "/a.json?ns=e", `{"b":`, 400, "Invalid data; couldn't parse JSON object, array, or value."},
		{"GET", "/a.json?ns=e&limitToFirst=1", "", 400, "orderBy must be defined when other query parameters are defined"},
		{"GET", "/a.json?ns=e&orderBy=height", "", 400, "orderBy must be a valid JSON encoded path"},
		{"GET", "/a.json?ns=e&orderBy=%22%24key%22&startAt=1", "", 400, "startAt must be a string when ordering by key"},
		{"GET", "/a.json?ns=e&shallow=true&orderBy=%22%24key%22", "", 400, "Mixing shallow with other query parameters is not allowed"},
		{"GET", "/a.json?ns=e&auth=not-a-token", "", 401, "Could not parse auth token."},
		{"PATCH", "/a.json?ns=e", `[1]`, 400, "Invalid data; couldn't parse JSON object. A PATCH body must be an object."},
	} {
		code, out := loupetest.Call(t, tc.method, inst.URL+tc.path, tc.body)
		msg, _ := out["error"].(string)
		if code != tc.status || !strings.HasPrefix(msg, tc.msg) {
			t.Errorf("%s %s %s: %d %q, want %d %q", tc.method, tc.path, tc.body, code, msg, tc.status, tc.msg)
		}
	}
}

// TestImportExport_FirebaseLayout loads what firebase emulators:export
// writes (database_export/{namespace}.json) and writes it back on exit.
func TestImportExport_FirebaseLayout(t *testing.T) {
	in := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		path := filepath.Join(in, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("firebase-export-metadata.json", `{"version":"14.0.0","database":{"version":"4.11.2","path":"database_export"}}`)
	write("database_export/shop.json", `{"items":{"a":{".value":1,".priority":2}}}`)
	out := filepath.Join(t.TempDir(), "out")
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", in, "--export-on-exit", out}})
	code, got := loupetest.Call(t, "GET", inst.URL+"/items/a.json?ns=shop&format=export", "")
	if code != 200 || got[".value"] != 1.0 || got[".priority"] != 2.0 {
		t.Fatalf("imported item: %d %v", code, got)
	}
	if code, _ := loupetest.Call(t, "PUT", inst.URL+"/items/b.json?ns=shop", `"new"`); code != 200 {
		t.Fatalf("write: %d", code)
	}
	inst.Stop(t)
	data, err := os.ReadFile(filepath.Join(out, "database_export", "shop.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"items":{"a":{".value":1,".priority":2},"b":"new"}}`; strings.TrimSpace(string(data)) != want {
		t.Fatalf("exported %s, want %s", data, want)
	}
	meta, err := os.ReadFile(filepath.Join(out, "firebase-export-metadata.json"))
	if err != nil || !strings.Contains(string(meta), `"database"`) {
		t.Fatalf("export metadata %s %v", meta, err)
	}
}

// TestREST_TokensOfAnotherProject: in local mode an ID token issued for
// another project than loupe's or the one a namespace is named after is
// taken, as the official emulator takes it (identity warns of it).
func TestREST_TokensOfAnotherProject(t *testing.T) {
	inst := serve(t)
	token := func(aud string) string {
		b64 := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
		return b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(`{"sub":"u1","iat":1,"aud":"`+aud+`"}`) + "."
	}
	for _, tc := range []struct {
		ns, aud string
		status  int
	}{
		{"demo-other-default-rtdb", "demo-other", 200},
		{"demo-other", "demo-other", 200},
		{"e", "demo-loupe", 200},
		{"e", "demo-other", 200},
		{"demo-loupe-default-rtdb", "demo-other", 200},
	} {
		code, out := loupetest.Call(t, "GET", inst.URL+"/a.json?ns="+tc.ns+"&auth="+token(tc.aud), "")
		if code != tc.status {
			t.Errorf("a token for %s at namespace %s: %d %v, want %d", tc.aud, tc.ns, code, out, tc.status)
		}
	}
}

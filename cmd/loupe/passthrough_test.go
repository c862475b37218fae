package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/webchannel/wctest"
	"google.golang.org/api/option"
)

// requestsOf is the request log of the loupe at inst.
func requestsOf(t *testing.T, inst *loupetest.Instance) []map[string]any {
	req, _ := http.NewRequest(http.MethodGet, inst.URL+"/emulator/v1/requests", nil)
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Requests []map[string]any `json:"requests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Requests
}

// TestPassThrough_StorageReachesTheUpstream: a loupe that passes Storage
// (and Firestore) through forwards the SDKs' calls to the upstream loupe,
// streaming, marks them in its request log, and never forwards a locally
// minted ID token.
func TestPassThrough_StorageReachesTheUpstream(t *testing.T) {
	upstream := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject,
		"--only", "auth,database", "--pass-through", "storage,firestore", "--upstream", upstream.Host}})
	for _, name := range []string{"storage", "firestore"} {
		if !strings.Contains(local.Log(), "passing "+name+" through (not emulated)") {
			t.Errorf("the start-up log does not say %s is passed through:\n%s", name, local.Log())
		}
	}
	t.Run("firestore", func(t *testing.T) { firestorePassesThrough(t, local, upstream) })
	ctx := context.Background()
	bucket := pullProject + ".appspot.com"

	// The Go SDK, pointed at the local loupe, writes into the upstream.
	sc, err := storage.NewClient(ctx, option.WithEndpoint("http://"+local.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w := sc.Bucket(bucket).Object("docs/a.txt").NewWriter(ctx)
	w.Metadata = map[string]string{"firebaseStorageDownloadTokens": "tok-a"}
	if _, err := io.WriteString(w, strings.Repeat("a", 100_000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("upload through the pass-through: %v", err)
	}
	direct, err := storage.NewClient(ctx, option.WithEndpoint("http://"+upstream.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if attrs, err := direct.Bucket(bucket).Object("docs/a.txt").Attrs(ctx); err != nil || attrs.Size != 100_000 {
		t.Fatalf("the upstream does not hold the object: %v %v", attrs, err)
	}

	// The Firebase API's download URL works through the local loupe, also
	// from a page: its answer carries one set of CORS headers (loupe's and
	// the upstream's both made a browser drop it).
	page := "http://localhost:5173"
	req, _ := http.NewRequest(http.MethodGet, local.URL+"/v0/b/"+bucket+"/o/docs%2Fa.txt?alt=media&token=tok-a", nil)
	req.Header.Set("Origin", page)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) != 100_000 {
		t.Fatalf("download through the pass-through: %d, %d bytes", resp.StatusCode, len(body))
	}
	origins, creds := resp.Header.Values("Access-Control-Allow-Origin"), resp.Header.Values("Access-Control-Allow-Credentials")
	if len(origins) != 1 || origins[0] != page || len(creds) != 1 {
		t.Errorf("download from a page: Access-Control-Allow-Origin %q, -Credentials %q, want one each", origins, creds)
	}

	// A locally minted ID token is not forwarded: the upstream sees the
	// call without a caller, and the local log says why.
	req, _ = http.NewRequest(http.MethodGet, local.URL+"/v0/b/"+bucket+"/o/docs%2Fa.txt", nil)
	req.Header.Set("Authorization", "Bearer "+loupetest.MockToken("u1"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var upstreamSaw map[string]any
	for _, e := range requestsOf(t, upstream) {
		if e["service"] == "storage" && e["path"] == "docs/a.txt" && e["method"] == "get" {
			upstreamSaw = e
			break
		}
	}
	if upstreamSaw == nil || upstreamSaw["caller"] != nil {
		t.Errorf("the upstream's record of the metadata read: %v", upstreamSaw)
	}
	if !strings.Contains(local.Log(), "a locally minted ID token, or owner) was not forwarded") {
		t.Errorf("the local log does not say the token was held back:\n%s", local.Log())
	}

	// The local request log marks the forwarded calls. A call is logged
	// once its handler returns, which may be just after the client has the
	// whole answer: read the log until the last call is in it.
	marked := 0
	for deadline := time.Now().Add(5 * time.Second); marked < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		marked = 0
		for _, e := range requestsOf(t, local) {
			if e["passThrough"] == true && e["service"] == "storage" {
				marked++
			}
		}
	}
	if marked < 3 {
		t.Errorf("%d passed-through calls in the local request log, want at least 3", marked)
	}
}

// firestorePassesThrough: the Go SDK's gRPC calls (a write, a query, a
// listener), the REST API and the web SDK's WebChannel, sent to local,
// reach the upstream, and local's request log marks them.
func firestorePassesThrough(t *testing.T, local, upstream *loupetest.Instance) {
	ctx := context.Background()
	fs := firestoreAt(t, local.Host)
	direct := firestoreAt(t, upstream.Host)

	if _, err := fs.Doc("rooms/r1").Set(ctx, map[string]any{"n": 1}); err != nil {
		t.Fatalf("write through the pass-through: %v", err)
	}
	if snap, err := direct.Doc("rooms/r1").Get(ctx); err != nil || snap.Data()["n"] != int64(1) {
		t.Fatalf("the upstream does not hold the document: %v %v", snap, err)
	}
	docs, err := fs.Collection("rooms").Where("n", "==", 1).Documents(ctx).GetAll()
	if err != nil || len(docs) != 1 || docs[0].Ref.ID != "r1" {
		t.Fatalf("query through the pass-through: %d documents, %v", len(docs), err)
	}

	// A listener sees the upstream's changes.
	lctx, stop := context.WithCancel(ctx)
	it := fs.Collection("rooms").Snapshots(lctx)
	if snap, err := it.Next(); err != nil || snap.Size != 1 {
		t.Fatalf("listener's first snapshot: %v %v", snap, err)
	}
	if _, err := direct.Doc("rooms/r2").Set(ctx, map[string]any{"n": 2}); err != nil {
		t.Fatal(err)
	}
	if snap, err := it.Next(); err != nil || snap.Size != 2 {
		t.Fatalf("listener's second snapshot: %v %v", snap, err)
	}
	it.Stop()
	stop()

	// The REST API, called from a page: one set of CORS headers.
	req, _ := http.NewRequest(http.MethodGet, local.URL+"/v1/projects/"+pullProject+"/databases/(default)/documents/rooms/r2", nil)
	req.Header.Set("Origin", "http://127.0.0.1:5173")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"integerValue": "2"`) && !strings.Contains(string(body), `"integerValue":"2"`) {
		t.Fatalf("REST read through the pass-through: %d %s", resp.StatusCode, body)
	}
	if origins, creds := resp.Header.Values("Access-Control-Allow-Origin"), resp.Header.Values("Access-Control-Allow-Credentials"); len(origins) != 1 || len(creds) != 1 {
		t.Errorf("REST read from a page: Access-Control-Allow-Origin %q, -Credentials %q, want one each", origins, creds)
	}

	// The web SDK's WebChannel, with a locally minted token in its
	// handshake: the upstream answers the listen, as unauthenticated.
	db := "projects/" + pullProject + "/databases/(default)"
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	ch, err := wctest.Open(wctx, http.DefaultClient, local.URL+"/google.firestore.v1.Firestore/Listen/channel",
		http.Header{"Authorization": {"Bearer " + loupetest.MockToken("u1")}},
		[]byte(`{"database":"`+db+`","addTarget":{"documents":{"documents":["`+db+`/documents/rooms/r1"]},"targetId":2}}`))
	if err != nil {
		t.Fatalf("WebChannel through the pass-through: %v", err)
	}
	sawDoc := false
	_ = ch.Stream(wctx, func(msg json.RawMessage) {
		if strings.Contains(string(msg), "documentChange") {
			sawDoc = true
			wcancel()
		}
	})
	if !sawDoc {
		t.Errorf("the WebChannel listen through the pass-through saw no document")
	}
	// The token stayed behind: the upstream judged the listen as
	// unauthenticated.
	var listen map[string]any
	for _, e := range requestsOf(t, upstream) {
		if e["service"] == "firestore" && e["method"] == "get" && e["path"] == "rooms/r1" {
			listen = e
			break
		}
	}
	if listen == nil || listen["caller"] != nil {
		t.Errorf("the upstream's record of the WebChannel listen: %v", listen)
	}

	// Every one of them is marked in the local request log (a stream once
	// it ended).
	want := []string{"Commit", "RunQuery", "Listen", "GET", "POST"}
	var missing []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		seen := map[string]bool{}
		for _, e := range requestsOf(t, local) {
			if e["passThrough"] == true && e["service"] == "firestore" {
				m, _ := e["method"].(string)
				seen[strings.ToUpper(m)] = true
			}
		}
		missing = missing[:0]
		for _, m := range want {
			if !seen[strings.ToUpper(m)] {
				missing = append(missing, m)
			}
		}
		if len(missing) == 0 {
			break
		}
	}
	if len(missing) > 0 {
		t.Errorf("the local request log lacks passed-through firestore calls: %v", missing)
	}
}

// requestEvents follows the request log of the loupe at inst as an event
// stream; next returns the first entry from now on that match accepts
// (failing the test when the stream ends first).
func requestEvents(t *testing.T, ctx context.Context, inst *loupetest.Instance) (next func(match func(map[string]any) bool) map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, inst.URL+"/emulator/v1/requests", nil)
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("the request log's event stream answered %d", resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	return func(match func(map[string]any) bool) map[string]any {
		t.Helper()
		for lines.Scan() {
			data, ok := strings.CutPrefix(lines.Text(), "data: ")
			if !ok {
				continue
			}
			var e map[string]any
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("request log event %q: %v", data, err)
			}
			if match(e) {
				return e
			}
		}
		t.Fatalf("the request log's event stream ended: %v", lines.Err())
		return nil
	}
}

// TestPassThrough_LoggedWithoutAnyRulesService: with only Auth emulated,
// the request log still answers, and a passed-through Firestore listener
// is in it while open, then updated when it ends.
func TestPassThrough_LoggedWithoutAnyRulesService(t *testing.T) {
	upstream := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject,
		"--only", "auth", "--pass-through", "firestore", "--upstream", upstream.Host}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := requestEvents(t, ctx, local)

	fs := firestoreAt(t, local.Host)
	lctx, stop := context.WithCancel(ctx)
	it := fs.Collection("rooms").Snapshots(lctx)
	if _, err := it.Next(); err != nil {
		t.Fatalf("listener through the pass-through: %v", err)
	}
	listen := func(e map[string]any) bool { return e["method"] == "Listen" && e["passThrough"] == true }
	opened := next(listen)
	if opened["open"] != true || opened["ended"] != nil {
		t.Errorf("the open listener's entry: %v, want open and not ended", opened)
	}
	it.Stop()
	stop()
	ended := next(listen)
	if ended["id"] != opened["id"] || ended["open"] == true || ended["ended"] == nil {
		t.Errorf("the listener's entry once it ended: %v, want entry %v updated, ended", ended, opened["id"])
	}
	if got := requestsOf(t, local); len(got) == 0 || got[0]["id"] != opened["id"] || got[0]["open"] == true {
		t.Errorf("the request log's list: %v, want the listener's entry, ended", got)
	}
}

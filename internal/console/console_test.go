package console_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

const project = "demo-console"

// start runs loupe serve with Firestore and returns it with a Go Admin SDK client.
func start(t *testing.T, opts loupetest.Options) (*loupetest.Instance, *firestore.Client) {
	t.Helper()
	opts.Args = append(opts.Args, "--project", project)
	inst := loupetest.Start(t, opts)
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	c, err := firestore.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return inst, c
}

// consoleRequest is a request as the console sends it: the owner's, from
// loupe's own origin.
func consoleRequest(t *testing.T, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Origin", "http://"+req.URL.Host)
	return req
}

// call sends a request as the console does (the owner, from loupe's own
// origin) and decodes a JSON answer into out when given.
func call(t *testing.T, method, url string, body io.Reader, out any) *http.Response {
	t.Helper()
	res, err := http.DefaultClient.Do(consoleRequest(t, method, url, body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %d, body not JSON: %v", method, url, res.StatusCode, err)
		}
	}
	return res
}

func TestOverviewListsServicesAndVariables(t *testing.T) {
	inst, c := start(t, loupetest.Options{})
	ctx := context.Background()
	if _, err := c.Collection("users").Doc("alice").Set(ctx, map[string]any{"name": "Alice"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ProjectID string  `json:"projectId"`
		InMemory  bool    `json:"inMemory"`
		Uptime    float64 `json:"uptimeSeconds"`
		Services  []struct {
			Name      string `json:"name"`
			Address   string `json:"address"`
			Bytes     int64  `json:"bytes"`
			Documents *int   `json:"documents"`
		} `json:"services"`
		Env []struct{ Name, Value string } `json:"env"`
	}
	if res := call(t, "GET", inst.URL+"/emulator/v1/overview", nil, &got); res.StatusCode != 200 {
		t.Fatalf("overview: %d", res.StatusCode)
	}
	if got.ProjectID != project || got.InMemory || got.Uptime <= 0 {
		t.Errorf("overview = %+v", got)
	}
	byName := map[string]int{}
	for i, s := range got.Services {
		byName[s.Name] = i
		if s.Address != inst.Host {
			t.Errorf("%s answers at %s, want the main port %s", s.Name, s.Address, inst.Host)
		}
	}
	fs, ok := byName["firestore"]
	if !ok || got.Services[fs].Documents == nil || *got.Services[fs].Documents != 1 || got.Services[fs].Bytes == 0 {
		t.Errorf("firestore service = %+v, want 1 document and its log's bytes", got.Services)
	}
	if _, ok := byName["console"]; ok {
		t.Error("the console lists itself as a service")
	}
	env := map[string]string{}
	for _, e := range got.Env {
		env[e.Name] = e.Value
	}
	if env["FIRESTORE_EMULATOR_HOST"] != inst.Host || env["STORAGE_EMULATOR_HOST"] != "http://"+inst.Host || env["GCLOUD_PROJECT"] != project {
		t.Errorf("env = %v", env)
	}
}

func TestDeleteTreeRemovesSubcollectionsAndListenersSeeIt(t *testing.T) {
	inst, c := start(t, loupetest.Options{InMemory: true})
	ctx := context.Background()
	for _, path := range []string{"rooms/a", "rooms/a/messages/1", "rooms/a/messages/2", "rooms/b", "roomsOther/x"} {
		if _, err := c.Doc(path).Set(ctx, map[string]any{"n": 1}); err != nil {
			t.Fatal(err)
		}
	}
	it := c.Collection("rooms").Snapshots(ctx)
	defer it.Stop()
	if snap, err := it.Next(); err != nil || snap.Size != 2 {
		t.Fatalf("first snapshot: %v, %v", snap, err)
	}
	var out struct{ Deleted int }
	res := call(t, "DELETE", inst.URL+"/emulator/v1/projects/"+project+"/databases/(default)/documents/rooms", nil, &out)
	if res.StatusCode != 200 || out.Deleted != 4 {
		t.Fatalf("delete rooms: %d, deleted %d, want 200 and 4", res.StatusCode, out.Deleted)
	}
	snap, err := it.Next()
	if err != nil || snap.Size != 0 {
		t.Fatalf("after the delete the listener sees %v, %v; want an empty collection", snap, err)
	}
	if docs, _ := c.CollectionGroup("messages").Documents(ctx).GetAll(); len(docs) != 0 {
		t.Errorf("%d subcollection documents left", len(docs))
	}
	if doc, err := c.Doc("roomsOther/x").Get(ctx); err != nil || !doc.Exists() {
		t.Errorf("a collection whose id starts the same was deleted: %v", err)
	}
	res = call(t, "DELETE", inst.URL+"/emulator/v1/projects/"+project+"/databases/(default)/documents/rooms/__x__", nil, nil)
	if res.StatusCode != 400 {
		t.Errorf("delete of an invalid path: %d, want 400", res.StatusCode)
	}
}

func TestDatabasesAndChangesStream(t *testing.T) {
	inst, c := start(t, loupetest.Options{InMemory: true})
	ctx := context.Background()
	req, _ := http.NewRequestWithContext(ctx, "GET", inst.URL+"/emulator/v1/firestore/changes", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("changes: Content-Type %q", ct)
	}
	events := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	if _, err := c.Doc("notes/n1").Set(ctx, map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	select {
	case data := <-events:
		var ev struct{ Paths []string }
		if err := json.Unmarshal([]byte(data), &ev); err != nil || len(ev.Paths) != 1 ||
			ev.Paths[0] != "projects/"+project+"/databases/(default)/documents/notes/n1" {
			t.Errorf("change event %s", data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change event after a commit")
	}
	var dbs struct {
		Databases []struct {
			Name      string
			Documents int
		}
	}
	call(t, "GET", inst.URL+"/emulator/v1/firestore/databases", nil, &dbs)
	if len(dbs.Databases) != 1 || dbs.Databases[0].Name != "projects/"+project+"/databases/(default)" || dbs.Databases[0].Documents != 1 {
		t.Errorf("databases = %+v", dbs)
	}
}

func TestExportArchiveImportsBack(t *testing.T) {
	inst, c := start(t, loupetest.Options{})
	ctx := context.Background()
	if _, err := c.Doc("users/alice").Set(ctx, map[string]any{"name": "Alice", "age": 30}); err != nil {
		t.Fatal(err)
	}
	res := call(t, "GET", inst.URL+"/emulator/v1/export/archive", nil, nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("export: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	archive, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("users/alice").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if res := call(t, "POST", inst.URL+"/emulator/v1/import/archive", bytes.NewReader(archive), nil); res.StatusCode != 200 {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("import: %d %s", res.StatusCode, body)
	}
	doc, err := c.Doc("users/alice").Get(ctx)
	if err != nil || doc.Data()["name"] != "Alice" || doc.Data()["age"] != int64(30) {
		t.Fatalf("after the import: %v, %v", doc, err)
	}
	if left, _ := os.ReadDir(filepath.Join(inst.DataDir, "console")); len(left) != 0 {
		t.Errorf("scratch folders left in the data dir: %v", left)
	}
}

func TestImportArchiveNeverWritesOutside(t *testing.T) {
	inst, c := start(t, loupetest.Options{})
	ctx := context.Background()
	if _, err := c.Doc("keep/me").Set(ctx, map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(inst.DataDir), "escaped.txt")
	for name, entries := range map[string][]tar.Header{
		"parent path":   {{Name: "../../escaped.txt", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}},
		"absolute path": {{Name: outside, Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}},
		"symlink":       {{Name: "link", Typeflag: tar.TypeSymlink, Linkname: filepath.Dir(inst.DataDir)}},
		"empty archive": nil,
	} {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, h := range entries {
			_ = tw.WriteHeader(&h)
			if h.Size > 0 {
				_, _ = tw.Write([]byte("x"))
			}
		}
		tw.Close()
		gz.Close()
		var out struct {
			Error struct{ Message string } `json:"error"`
		}
		res := call(t, "POST", inst.URL+"/emulator/v1/import/archive", &buf, &out)
		if res.StatusCode != 400 || !strings.Contains(out.Error.Message, "import archive") {
			t.Errorf("%s: %d %q, want 400", name, res.StatusCode, out.Error.Message)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("an archive wrote outside the data dir")
	}
	if doc, err := c.Doc("keep/me").Get(ctx); err != nil || !doc.Exists() {
		t.Errorf("a refused import changed the data: %v", err)
	}
}

// TestConsoleStrictMode: under --strict-credentials the console is off, its
// endpoints refuse pages of other origins and anyone without the admin
// credential, and no console address is printed.
func TestConsoleStrictMode(t *testing.T) {
	strict := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--strict-credentials"}})
	for _, path := range []string{"/emulator/v1/overview", "/emulator/v1/export/archive"} {
		req, _ := http.NewRequest("GET", strict.URL+path, nil)
		req.Header.Set("Origin", "https://evil.example")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("strict: GET %s from another origin: %d, want 403", path, res.StatusCode)
		}
	}
	for path, want := range map[string]int{"/emulator/v1/overview": 403, "/emulator/v1/firestore/changes": 403, "/_/console/": 404, "/_/console/firestore": 404} {
		res, err := http.Get(strict.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("strict: GET %s = %d, want %d", path, res.StatusCode, want)
		}
	}
	if strings.Contains(strict.Log(), "Console:") {
		t.Error("strict mode prints a console address")
	}
}

func TestListCollectionIdsOverREST(t *testing.T) {
	inst, c := start(t, loupetest.Options{InMemory: true})
	ctx := context.Background()
	for _, path := range []string{"a/1", "b/1", "c/1", "a/1/sub/x", "a/1/other/y"} {
		if _, err := c.Doc(path).Set(ctx, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	base := inst.URL + "/v1/projects/" + project + "/databases/(default)/documents"
	var page struct {
		CollectionIDs []string `json:"collectionIds"`
		Next          string   `json:"nextPageToken"`
	}
	call(t, "POST", base+":listCollectionIds", strings.NewReader(`{"pageSize":2}`), &page)
	if strings.Join(page.CollectionIDs, ",") != "a,b" || page.Next != "b" {
		t.Fatalf("first page = %+v", page)
	}
	page.Next = ""
	call(t, "POST", base+":listCollectionIds", strings.NewReader(`{"pageSize":2,"pageToken":"b"}`), &page)
	if strings.Join(page.CollectionIDs, ",") != "c" || page.Next != "" {
		t.Fatalf("second page = %+v", page)
	}
	call(t, "POST", base+"/a/1:listCollectionIds", strings.NewReader(`{}`), &page)
	if strings.Join(page.CollectionIDs, ",") != "other,sub" {
		t.Fatalf("subcollections = %+v", page)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// logShows reports whether inst's log shows text within two seconds (the
// lines after "Loupe is running at" may still be on their way).
func logShows(inst *loupetest.Instance, text string) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(inst.Log(), text) {
			return true
		}
	}
	return false
}

func TestUIPortServesTheConsoleAndATakenOneOnlyWarns(t *testing.T) {
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"emulators":{"ui":{"port":%d}}}`, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	ui := fmt.Sprintf("http://127.0.0.1:%d", port)
	if !logShows(inst, "Console: "+ui+"/_/console/") {
		t.Errorf("the start message does not name the ui port's console:\n%s", inst.Log())
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(ui + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/_/console/" {
		t.Errorf("GET / on the ui port: %d to %q, want a redirect to the console", res.StatusCode, res.Header.Get("Location"))
	}
	var overview struct{ ProjectID string }
	call(t, "GET", ui+"/emulator/v1/overview", nil, &overview)
	if overview.ProjectID == "" {
		t.Error("the ui port does not answer the console's endpoints")
	}
	// A second loupe with the same configuration finds the port taken: it warns and runs.
	second := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	if !logShows(second, fmt.Sprintf("port %d for ui is not available", port)) {
		t.Errorf("no warning about the taken ui port:\n%s", second.Log())
	}
	if !logShows(second, "Console: "+second.URL+"/_/console/") || strings.Contains(second.Log(), "Console: "+ui) {
		t.Error("the second loupe claims the ui port it could not take")
	}
}

// streamed sends a request that asks for progress (Accept:
// application/x-ndjson) and returns the answer's status and its lines.
func streamed(t *testing.T, method, url string, body io.Reader) (int, []map[string]any) {
	t.Helper()
	req := consoleRequest(t, method, url, body)
	req.Header.Set("Accept", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode == 200 && ct != "application/x-ndjson" {
		t.Fatalf("%s %s: Content-Type %q, want application/x-ndjson", method, url, ct)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s %s: line %q is not JSON: %v", method, url, sc.Text(), err)
		}
		lines = append(lines, line)
	}
	return res.StatusCode, lines
}

// progressOf checks that every line but the last is {"done", "total"} with
// done growing from 0 (to total when complete), and returns the done counts
// and the last line.
func progressOf(t *testing.T, what string, lines []map[string]any, total int, complete bool) ([]int, map[string]any) {
	t.Helper()
	if len(lines) < 2 {
		t.Fatalf("%s: %d lines %v, want progress then a result", what, len(lines), lines)
	}
	var done []int
	for i, line := range lines[:len(lines)-1] {
		d, okD := line["done"].(float64)
		m, okM := line["total"].(float64)
		if !okD || !okM || len(line) != 2 || int(m) != total {
			t.Fatalf("%s: line %d = %v, want {done, total: %d}", what, i, line, total)
		}
		if i > 0 && int(d) <= done[i-1] {
			t.Fatalf("%s: done goes %d then %d", what, done[i-1], int(d))
		}
		done = append(done, int(d))
	}
	if done[0] != 0 || (complete && done[len(done)-1] != total) || done[len(done)-1] > total {
		t.Fatalf("%s: done %v, want from 0 to %d", what, done, total)
	}
	return done, lines[len(lines)-1]
}

func TestDeleteAndImportStreamProgress(t *testing.T) {
	inst, c := start(t, loupetest.Options{})
	ctx := context.Background()
	docs := "projects/" + project + "/databases/(default)/documents"
	// 1,200 documents under big: 1,000 in it, 200 in a subcollection.
	for batch := range 3 {
		var writes []map[string]any
		for i := range 400 {
			path := fmt.Sprintf("big/d%04d", batch*400+i)
			if batch*400+i >= 1000 {
				path = fmt.Sprintf("big/d0000/sub/s%04d", batch*400+i)
			}
			writes = append(writes, map[string]any{"update": map[string]any{"name": docs + "/" + path, "fields": map[string]any{"n": map[string]any{"integerValue": "1"}}}})
		}
		body, _ := json.Marshal(map[string]any{"writes": writes})
		if res := call(t, "POST", inst.URL+"/v1/"+docs+":commit", bytes.NewReader(body), nil); res.StatusCode != 200 {
			t.Fatalf("commit: %d", res.StatusCode)
		}
	}
	res := call(t, "GET", inst.URL+"/emulator/v1/export/archive", nil, nil)
	archive, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("export: %d %v", res.StatusCode, err)
	}

	// The recursive delete says how many there are, then counts each commit of 500.
	status, lines := streamed(t, "DELETE", inst.URL+"/emulator/v1/"+docs+"/big", nil)
	done, last := progressOf(t, "delete", lines, 1200, true)
	if status != 200 || fmt.Sprint(done) != "[0 500 1000 1200]" || fmt.Sprint(last) != "map[deleted:1200]" {
		t.Fatalf("delete: %d, done %v, last %v; want 200, [0 500 1000 1200], {deleted: 1200}", status, done, last)
	}
	if n, _ := c.CollectionGroup("sub").Documents(ctx).GetAll(); len(n) != 0 {
		t.Fatalf("%d documents left under big", len(n))
	}
	if _, err := c.Doc("keep/me").Set(ctx, map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}

	// An archive whose last document is broken counts up, then fails with
	// the line at fault, and changes nothing.
	bad := rewriteArchive(t, archive, "firestore_export/documents.jsonl", func(b []byte) []byte {
		return append(b, []byte(`{"name": "not a document name"}`+"\n")...)
	})
	status, lines = streamed(t, "POST", inst.URL+"/emulator/v1/import/archive", bytes.NewReader(bad))
	_, last = progressOf(t, "bad import", lines, 1201, false)
	e, _ := last["error"].(map[string]any)
	if msg, _ := e["message"].(string); status != 200 || e["code"] != float64(400) || !strings.Contains(msg, "documents.jsonl line 1201") || strings.Contains(msg, inst.DataDir) {
		t.Fatalf("bad import ends with %v, want a 400 error naming line 1201 of the archive", last)
	}
	if doc, err := c.Doc("keep/me").Get(ctx); err != nil || !doc.Exists() {
		t.Fatalf("a failed import changed the data: %v", err)
	}

	// The archive itself: every document read, then {} as without progress.
	status, lines = streamed(t, "POST", inst.URL+"/emulator/v1/import/archive", bytes.NewReader(archive))
	done, last = progressOf(t, "import", lines, 1200, true)
	if status != 200 || len(last) != 0 || len(done) < 50 {
		t.Fatalf("import: %d, %d progress lines, last %v; want 200, a line every hundredth or so, then {}", status, len(done), last)
	}
	if all, _ := c.Collection("big").Documents(ctx).GetAll(); len(all) != 1000 {
		t.Errorf("after the import big holds %d documents, want 1000", len(all))
	}
	if doc, err := c.Doc("keep/me").Get(ctx); err == nil && doc.Exists() {
		t.Error("the import kept a document the archive does not have")
	}
}

// rewriteArchive returns the gzipped tar archive with the file at name changed by edit.
func rewriteArchive(t *testing.T, archive []byte, name string, edit func([]byte) []byte) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if h.Name == name {
			body, found = edit(body), true
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(body)
	}
	tw.Close()
	zw.Close()
	if !found {
		t.Fatalf("the archive has no %s", name)
	}
	return out.Bytes()
}

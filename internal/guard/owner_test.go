package guard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/rules"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
)

// serveRules serves the owner's endpoints in process.
func serveRules(t *testing.T) (*Rules, *httptest.Server) {
	t.Helper()
	owner := New(nil, nil)
	mux := server.NewMux()
	owner.Register(&server.Routes{HTTP: mux})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return owner, ts
}

func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func filesBody(files ...map[string]string) string {
	data, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": files}})
	return string(data)
}

const (
	storageAllowRead = "rules_version = '2';\nservice firebase.storage { match /b/{b}/o { match /{f=**} { allow read; } } }"
	storageDenyAll   = "rules_version = '2';\nservice firebase.storage { match /b/{b}/o { match /{f=**} { allow read, write: if false; } } }"
)

// TestRules_SetStorageRules checks PUT /internal/setRules against
// firebase-tools' storage emulator (src/emulator/storage/server.ts).
func TestRules_SetStorageRules(t *testing.T) {
	_, ts := serveRules(t)
	for _, tc := range []struct {
		name, body string
		code       int
		message    string
	}{
		{"no body", ``, 400, "Request body must include 'rules.files' array"},
		{"no files", `{"rules":{"files":[]}}`, 400, "Request body must include 'rules.files' array"},
		{"file without content", `{"rules":{"files":[{"name":"storage.rules"}]}}`, 400, "Each member of 'rules.files' array must contain 'name' and 'content'"},
		{"two files without resource", filesBody(map[string]string{"name": "a", "content": storageAllowRead}, map[string]string{"name": "b", "content": storageAllowRead}),
			400, "Each member of 'rules.files' array must contain 'name', 'content', and 'resource'"},
		{"rules that do not compile", filesBody(map[string]string{"name": "storage.rules", "content": "service firebase.storage { match /b/{b}/o { allow read: if ; } }"}),
			400, "There was an error updating rules, see logs for more details"},
		{"good rules", filesBody(map[string]string{"name": "storage.rules", "content": storageAllowRead}), 200, "Rules updated successfully"},
	} {
		code, body := send(t, "PUT", ts.URL+"/internal/setRules", tc.body)
		var got struct{ Message string }
		_ = json.Unmarshal([]byte(body), &got)
		if code != tc.code || got.Message != tc.message {
			t.Errorf("%s: %d %s, want %d {\"message\":%q}", tc.name, code, body, tc.code, tc.message)
		}
	}
}

func TestRules_SetStorageRulesPerBucket(t *testing.T) {
	owner, ts := serveRules(t)
	body := filesBody(
		map[string]string{"name": "open.rules", "content": storageAllowRead, "resource": "open-bucket"},
		map[string]string{"name": "closed.rules", "content": storageDenyAll, "resource": "closed-bucket"})
	if code, out := send(t, "PUT", ts.URL+"/internal/setRules", body); code != 200 {
		t.Fatalf("setRules: %d %s", code, out)
	}
	g := owner.StorageAuthorizer(nil, "demo-loupe")
	read := func(bucket string) error {
		return g.Authorize(context.Background(), storage.Access{Caller: identity.Principal{UID: "alice"}, Method: "get", Bucket: bucket, Name: "x.txt",
			Existing: &storage.Object{Bucket: bucket, Name: "x.txt"}})
	}
	if err := read("open-bucket"); err != nil {
		t.Errorf("read in the open bucket: %v", err)
	}
	if err := read("closed-bucket"); err == nil {
		t.Error("read in the closed bucket was allowed")
	}
	// A single file replaces them all and applies to every bucket.
	if code, out := send(t, "PUT", ts.URL+"/internal/setRules", filesBody(map[string]string{"name": "storage.rules", "content": storageDenyAll})); code != 200 {
		t.Fatalf("setRules: %d %s", code, out)
	}
	if err := read("open-bucket"); err == nil {
		t.Error("read in the formerly open bucket was allowed after a single-file load")
	}
}

// TestRules_PutSecurityRulesWithIgnoreErrors checks the answer firebase-tools
// reads when it reloads a watched file: 200 with the compile errors as issues.
func TestRules_PutSecurityRulesWithIgnoreErrors(t *testing.T) {
	_, ts := serveRules(t)
	body := `{"ignore_errors":true,"rules":{"files":[{"name":"security.rules","content":"service cloud.firestore {\n  match /a { allow read: if ; }\n}"}]}}`
	code, out := send(t, "PUT", ts.URL+"/emulator/v1/projects/p:securityRules", body)
	var got struct {
		Issues []struct {
			SourcePosition struct{ Line, Column int }
			Description    string
			Severity       string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 200 || len(got.Issues) != 1 {
		t.Fatalf("PUT with ignore_errors: %d %s", code, out)
	}
	if is := got.Issues[0]; is.SourcePosition.Line != 2 || is.SourcePosition.Column != 29 || is.Severity != "ERROR" || is.Description == "" {
		t.Errorf("issue = %+v, want line 2, column 29, severity ERROR", is)
	}
	if code, out := send(t, "PUT", ts.URL+"/emulator/v1/projects/p:securityRules", strings.Replace(body, `"ignore_errors":true,`, "", 1)); code != 400 || !strings.Contains(out, "INVALID_ARGUMENT") {
		t.Errorf("PUT broken rules: %d %s, want 400 INVALID_ARGUMENT", code, out)
	}
}

func TestRules_ListSets(t *testing.T) {
	owner, ts := serveRules(t)
	if err := owner.SetFirestore("demo-a", "a.rules", "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /x/{y} { allow read; } } }"); err != nil {
		t.Fatal(err)
	}
	if err := owner.ReplaceStorage([]StorageFile{{Name: "storage.rules", Content: storageAllowRead}}); err != nil {
		t.Fatal(err)
	}
	code, body := send(t, "GET", ts.URL+"/emulator/v1/rules", "")
	var got struct {
		Rulesets []struct{ Service, Project, Target, Origin, File, Source string }
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != 200 || len(got.Rulesets) != 2 {
		t.Fatalf("GET /emulator/v1/rules: %d %s", code, body)
	}
	fs, st := got.Rulesets[0], got.Rulesets[1]
	if fs.Service != "firestore" || fs.Project != "demo-a" || fs.Origin != "api" || fs.File != "a.rules" || !strings.Contains(fs.Source, "match /x/{y}") {
		t.Errorf("firestore set = %+v", fs)
	}
	if st.Service != "storage" || st.Project != "" || st.Target != "" || st.Source != storageAllowRead {
		t.Errorf("storage set = %+v", st)
	}
}

func TestRules_LookupPrecedence(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsRules := "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /x/{y} { allow read; } } }"
	write("default.rules", fsRules)
	write("orders.rules", fsRules)
	write("storage.rules", storageAllowRead)
	write("firebase.json", `{"firestore":[{"rules":"default.rules"},{"database":"orders","rules":"orders.rules"}],"storage":{"rules":"storage.rules"}}`)
	cfg, err := config.Load(filepath.Join(dir, "firebase.json"), true)
	if err != nil {
		t.Fatal(err)
	}
	owner := New(nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := owner.LoadConfig(ctx, cfg, func(string) bool { return true }, true); err != nil {
		t.Fatal(err)
	}
	file := func(s *Set) string {
		if s == nil {
			return "none"
		}
		return filepath.Base(s.Ruleset.File)
	}
	check := func(what string, got *Set, want string) {
		t.Helper()
		if file(got) != want {
			t.Errorf("%s: rules from %s, want %s", what, file(got), want)
		}
	}
	check("default database", owner.Lookup(rules.Firestore, "p", "(default)"), "default.rules")
	check("orders database", owner.Lookup(rules.Firestore, "p", "orders"), "orders.rules")
	check("a database with no file", owner.Lookup(rules.Firestore, "p", "other"), "none")
	if err := owner.SetFirestore("p", "api.rules", fsRules); err != nil {
		t.Fatal(err)
	}
	check("orders database after an api load for p", owner.Lookup(rules.Firestore, "p", "orders"), "api.rules")
	check("orders database of another project", owner.Lookup(rules.Firestore, "q", "orders"), "orders.rules")

	check("a bucket", owner.Lookup(rules.Storage, "", "b1"), "storage.rules")
	if err := owner.ReplaceStorage([]StorageFile{{Resource: "b1", Name: "b1.rules", Content: storageDenyAll}, {Resource: "projects/_/buckets/b2", Name: "b2.rules", Content: storageDenyAll}}); err != nil {
		t.Fatal(err)
	}
	check("b1 after an api load", owner.Lookup(rules.Storage, "", "b1"), "b1.rules")
	check("b2 named by its resource path", owner.Lookup(rules.Storage, "", "b2"), "b2.rules")
	check("a bucket the api load did not name", owner.Lookup(rules.Storage, "", "b3"), "storage.rules")
	if err := owner.ReplaceStorage([]StorageFile{{Name: "all.rules", Content: storageAllowRead}}); err != nil {
		t.Fatal(err)
	}
	check("b1 after a single-file api load", owner.Lookup(rules.Storage, "", "b1"), "all.rules")
}

func TestRules_StorageRulesPerBucketFromFirebaseJSON(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"a.rules": storageAllowRead, "b.rules": storageDenyAll} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Parse([]byte(`{"storage":[{"bucket":"bucket-a","rules":"a.rules"},{"bucket":"bucket-b","rules":"b.rules"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = dir
	owner := New(nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := owner.LoadConfig(ctx, cfg, func(string) bool { return true }, true); err != nil {
		t.Fatal(err)
	}
	g := owner.StorageAuthorizer(nil, "demo-loupe")
	read := func(bucket string) error {
		return g.Authorize(ctx, storage.Access{Method: "get", Bucket: bucket, Name: "x", Existing: &storage.Object{Bucket: bucket, Name: "x"}})
	}
	if err := read("bucket-a"); err != nil {
		t.Errorf("bucket-a (open rules): %v", err)
	}
	if err := read("bucket-b"); err == nil {
		t.Error("bucket-b (closed rules): allowed")
	}
	if err := read("bucket-c"); err != nil {
		t.Errorf("a bucket with no rules runs open: %v", err)
	}
}

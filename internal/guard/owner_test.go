package guard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
)

// serveRules serves the owner's endpoints in process.
func serveRules(t *testing.T) (*Rules, *httptest.Server) {
	t.Helper()
	owner := New(nil)
	mux := http.NewServeMux()
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

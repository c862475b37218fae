package guard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// logEntry is an entry of GET /emulator/v1/requests, as docs/admin-api.md describes it.
type logEntry struct {
	ID       int64
	Service  string
	Method   string
	Path     string
	Project  string
	Database string
	Bucket   string
	Outcome  string
	Status   int
	Message  string
	Caller   *struct {
		UID    string
		Claims map[string]any
	}
	Request  map[string]any
	Resource map[string]any
	Rules    *struct {
		File   string
		Line   int
		Source string
		Allows []struct {
			Line    int
			Outcome string
		}
		Expressions []struct {
			Range struct{ Line, Column, EndLine, EndColumn int }
			Value map[string]any
		}
	}
}

func listRequests(t *testing.T, url string) []logEntry {
	t.Helper()
	code, _, body := get(t, url)
	var out struct {
		Requests []logEntry
		Latest   int64
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return out.Requests
}

const notesOwnerRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read: if request.auth != null;
      allow create: if request.auth.uid == request.resource.data.owner;
    }
  }
}`

func TestGuard_RequestLog(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	putProjectRules(t, inst, "demo-loupe", notesOwnerRules)
	ctx := context.Background()

	// A live stream, opened before the requests.
	streamReq, _ := http.NewRequest("GET", inst.URL+"/emulator/v1/requests", nil)
	streamReq.Header.Set("Accept", "text/event-stream")
	streamCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	stream, err := http.DefaultClient.Do(streamReq.WithContext(streamCtx))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if ct := stream.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream Content-Type = %q", ct)
	}

	alice := userClient(t, inst, "demo-loupe", "(default)", "alice")
	if _, err := alice.Doc("notes/a").Set(ctx, map[string]any{"owner": "alice", "text": "hi"}); err != nil {
		t.Fatalf("alice creates her note: %v", err)
	}
	if _, err := alice.Doc("notes/b").Set(ctx, map[string]any{"owner": "bob"}); err == nil {
		t.Fatal("alice creates bob's note: allowed")
	}
	// The owner's requests are not the clients': they stay out of the log.
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	owner, err := firestore.NewClient(ctx, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Doc("notes/owner").Set(ctx, map[string]any{"owner": "nobody"}); err != nil {
		t.Fatal(err)
	}
	// An Identity Toolkit call from a client.
	resp, err := http.Post(inst.URL+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=demo", "application/json",
		strings.NewReader(`{"email":"carol@example.com","password":"secret-pw","returnSecureToken":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	entries := listRequests(t, inst.URL+"/emulator/v1/requests")
	if len(entries) != 3 {
		t.Fatalf("log holds %d entries, want 3 (two Firestore writes, one sign-up): %+v", len(entries), entries)
	}
	signUp, denied, allowed := entries[0], entries[1], entries[2]
	if !(signUp.ID > denied.ID && denied.ID > allowed.ID) {
		t.Errorf("ids %d %d %d, want newest first", signUp.ID, denied.ID, allowed.ID)
	}
	if allowed.Service != "firestore" || allowed.Method != "create" || allowed.Path != "notes/a" || allowed.Outcome != "allowed" ||
		allowed.Status != 200 || allowed.Caller == nil || allowed.Caller.UID != "alice" || allowed.Caller.Claims["user_id"] != "alice" ||
		allowed.Database != "(default)" || allowed.Project != "demo-loupe" {
		t.Errorf("allowed entry = %+v", allowed)
	}
	if allowed.Rules == nil || allowed.Rules.Line != 6 || allowed.Rules.Source != "" {
		t.Errorf("allowed entry's rules = %+v, want the deciding line 6 and no source in the list", allowed.Rules)
	}
	if v := allowed.Request["owner"]; v == nil || v.(map[string]any)["stringValue"] != "alice" {
		t.Errorf("allowed entry's request data = %+v", allowed.Request)
	}
	if denied.Outcome != "denied" || denied.Status != 403 || denied.Rules == nil || denied.Rules.Line != 0 ||
		len(denied.Rules.Allows) != 1 || denied.Rules.Allows[0].Line != 6 || denied.Rules.Allows[0].Outcome != "deny" {
		t.Errorf("denied entry = %+v (rules %+v)", denied, denied.Rules)
	}
	// The line-exact denial: the condition on line 6, evaluated to false.
	var sawCondition bool
	for _, e := range denied.Rules.Expressions {
		if e.Range.Line == 6 && e.Range.Column == 24 && e.Value["boolValue"] == false {
			sawCondition = true
		}
	}
	if !sawCondition {
		t.Errorf("denied entry does not trace the condition on line 6 as false: %+v", denied.Rules.Expressions)
	}
	if signUp.Service != "auth" || signUp.Method != "signUp" || signUp.Outcome != "allowed" || signUp.Caller == nil ||
		signUp.Caller.Claims["email"] != "carol@example.com" || signUp.Request["password"] == "secret-pw" {
		t.Errorf("sign-up entry = %+v", signUp)
	}

	// One entry in full carries the rules source.
	code, _, body := get(t, inst.URL+"/emulator/v1/requests/"+itoa(denied.ID))
	var one logEntry
	if err := json.Unmarshal([]byte(body), &one); err != nil || code != 200 || one.Rules == nil || one.Rules.Source != notesOwnerRules {
		t.Errorf("GET one entry: %d %s", code, body)
	}
	if code, _, _ := get(t, inst.URL+"/emulator/v1/requests/999"); code != 404 {
		t.Errorf("GET an unknown entry: %d, want 404", code)
	}
	// Cursor and filters.
	if got := listRequests(t, inst.URL+"/emulator/v1/requests?after="+itoa(denied.ID)); len(got) != 1 || got[0].ID != signUp.ID {
		t.Errorf("after=%d: %+v, want only the sign-up", denied.ID, got)
	}
	if got := listRequests(t, inst.URL+"/emulator/v1/requests?service=firestore&outcome=denied&project=demo-loupe"); len(got) != 1 || got[0].ID != denied.ID {
		t.Errorf("service=firestore&outcome=denied&project=demo-loupe: %+v", got)
	}
	if got := listRequests(t, inst.URL+"/emulator/v1/requests?project=demo-other"); len(got) != 0 {
		t.Errorf("project=demo-other: %+v, want none", got)
	}

	// A query's entry carries the query.
	if _, err := alice.Collection("notes").Where("owner", "==", "alice").Documents(ctx).GetAll(); err != nil {
		t.Fatalf("alice lists her notes: %v", err)
	}
	lists := listRequests(t, inst.URL+"/emulator/v1/requests?method=list")
	if len(lists) != 1 || lists[0].Path != "notes" || lists[0].Outcome != "allowed" {
		t.Fatalf("list entries = %+v", lists)
	}
	if q, _ := lists[0].Request["query"].(map[string]any); q == nil || q["where"] == nil {
		t.Errorf("list entry's request = %+v, want the query with its where clause", lists[0].Request)
	}

	// The stream delivered the same three entries, oldest first.
	sc := bufio.NewScanner(stream.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var streamed []logEntry
	for len(streamed) < 3 && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e logEntry
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("stream data %q: %v", data, err)
			}
			streamed = append(streamed, e)
		}
	}
	if len(streamed) != 3 || streamed[0].ID != allowed.ID || streamed[2].ID != signUp.ID {
		t.Errorf("streamed %+v, want the three entries oldest first", streamed)
	}
}

func itoa(n int64) string {
	data, _ := json.Marshal(n)
	return string(data)
}

func TestGuard_RulesPlayground(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	putProjectRules(t, inst, "demo-loupe", notesOwnerRules)
	play := func(body string) (int, map[string]any) {
		return loupetest.Call(t, "POST", inst.URL+"/emulator/v1/projects/demo-loupe:rulesPlayground", body)
	}
	code, out := play(`{"path":"notes/n1","method":"create","auth":{"uid":"alice","token":{"email":"a@example.com"}},"data":{"owner":"alice","n":1}}`)
	if code != 200 || out["allowed"] != true || out["outcome"] != "allowed" || out["line"] != 6.0 || out["source"] != notesOwnerRules {
		t.Errorf("alice creates her note: %d %v", code, out)
	}
	code, out = play(`{"path":"notes/n1","method":"create","auth":null,"data":{"owner":"alice"}}`)
	allows, _ := out["allows"].([]any)
	if code != 200 || out["allowed"] != false || out["status"] != 403.0 || len(allows) != 1 || len(out["expressions"].([]any)) == 0 {
		t.Errorf("nobody creates a note: %d %v", code, out)
	}
	// Rules to try instead of those in force.
	code, out = play(`{"path":"notes/n1","method":"get","rules":"rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /{doc=**} { allow get: if false; } } }","auth":{"uid":"alice"}}`)
	if code != 200 || out["allowed"] != false || out["file"] != "playground.rules" {
		t.Errorf("playground rules: %d %v", code, out)
	}
	for _, bad := range []string{`{"path":"notes/n1","method":"write"}`, `{"method":"get"}`, `{"path":"notes","method":"get"}`, `[`} {
		if code, out := play(bad); code != 400 {
			t.Errorf("%s: %d %v, want 400", bad, code, out)
		}
	}
	// The playground neither logs nor counts coverage.
	if got := listRequests(t, inst.URL+"/emulator/v1/requests"); len(got) != 0 {
		t.Errorf("the playground logged %d requests", len(got))
	}
}

func TestGuard_RequestLogAndPlaygroundAreOffWhenStrict(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--strict-credentials"}})
	for _, tc := range []struct{ method, path string }{
		{"GET", "/emulator/v1/requests"}, {"GET", "/emulator/v1/requests/1"}, {"DELETE", "/emulator/v1/requests"},
		{"POST", "/emulator/v1/projects/demo-loupe:rulesPlayground"}, {"GET", "/emulator/v1/projects/demo-loupe:ruleCoverage"},
		{"PUT", "/emulator/v1/projects/demo-loupe:securityRules"}, {"PUT", "/internal/setRules"},
	} {
		req, _ := http.NewRequest(tc.method, inst.URL+tc.path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s %s under --strict-credentials: %d, want 403", tc.method, tc.path, resp.StatusCode)
		}
	}
}

func TestGuard_RequestLogStorage(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	source := "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    match /avatars/{uid}/{file} {\n      allow write: if request.auth.uid == uid;\n    }\n  }\n}"
	body, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []map[string]string{{"name": "storage.rules", "content": source}}}})
	req, _ := http.NewRequest("PUT", inst.URL+"/internal/setRules", strings.NewReader(string(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	upload := func(object string) int {
		req, _ := http.NewRequest("POST", inst.URL+"/v0/b/demo-loupe.appspot.com/o?name="+object, strings.NewReader("PNG"))
		req.Header.Set("Authorization", "Firebase "+loupetest.MockToken("alice"))
		req.Header.Set("Content-Type", "image/png")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := upload("avatars%2Fbob%2Fme.png"); c != 403 {
		t.Fatalf("alice uploads bob's avatar: %d, want 403", c)
	}
	entries := listRequests(t, inst.URL+"/emulator/v1/requests?service=storage")
	if len(entries) != 1 {
		t.Fatalf("storage entries = %+v, want one", entries)
	}
	e := entries[0]
	if e.Method != "create" || e.Bucket != "demo-loupe.appspot.com" || e.Path != "avatars/bob/me.png" || e.Outcome != "denied" ||
		e.Status != 403 || e.Caller == nil || e.Caller.UID != "alice" || e.Rules == nil || len(e.Rules.Allows) != 1 || e.Rules.Allows[0].Line != 5 {
		t.Errorf("entry = %+v (rules %+v)", e, e.Rules)
	}
	if ct := e.Request["contentType"]; ct == nil || ct.(map[string]any)["stringValue"] != "image/png" {
		t.Errorf("request metadata = %+v, want the upload's contentType", e.Request)
	}
}

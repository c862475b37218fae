package functions

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// fixtures is where the Node.js fixtures' packages are installed (make deps).
const fixtures = "../../web/e2e/fixtures/functions"

// TestNode_DeliversRealtimeDatabaseEventsAsTheSDKReadsThem publishes the
// events the Realtime Database publishes for a write (a synthetic publish,
// with the shape the package doc of triggers gives) and checks that a 1st-gen
// database.ref().onWrite and a 2nd-gen onValueWritten function each read the
// write as the SDK presents it: before and after, the params, the auth.
func TestNode_DeliversRealtimeDatabaseEventsAsTheSDKReadsThem(t *testing.T) {
	if _, err := os.Stat(filepath.Join(fixtures, "node_modules", "firebase-functions")); err != nil {
		t.Skip("the Node.js fixtures' packages are not installed (make deps)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	t.Parallel()
	root, err := os.MkdirTemp(fixtures, "rtdb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.Abs(root)
	out := filepath.Join(root, "seen.jsonl")
	source := filepath.Join(root, "functions")
	if err := os.MkdirAll(source, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(source, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"main": "index.js"}`)
	write("index.js", `const { appendFileSync } = require('node:fs');
const functions = require('firebase-functions/v1');
const { onValueWritten } = require('firebase-functions/v2/database');
const note = (o) => appendFileSync(`+"`"+out+"`"+`, JSON.stringify(o) + '\n');
exports.v1 = functions.database.ref('/users/{uid}/name').onWrite((change, context) =>
  note({ fn: 'v1', before: change.before.val(), after: change.after.val(), uid: context.params.uid,
         authType: context.authType, auth: context.auth ?? null, ref: change.after.ref.toString() }));
exports.v2 = onValueWritten('/users/{uid}/name', (event) =>
  note({ fn: 'v2', before: event.data.before.val(), after: event.data.after.val(), uid: event.params.uid,
         authType: event.authType, authId: event.authId ?? null, instance: event.instance }));
`)
	cfg := &config.Firebase{Dir: root, Functions: config.Codebases{{Source: "functions"}}}
	logger := slog.New(slog.DiscardHandler)
	s, err := New(server.Env{ProjectID: "demo-rtdb", Config: cfg, Logger: logger}, nil, func() string { return "http://127.0.0.1:9" })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	select {
	case <-s.Settled():
	case <-time.After(2 * time.Minute):
		t.Fatal("the codebase did not start")
	}
	if st := s.codebases[0].st; st.State != "running" {
		t.Fatalf("codebase %s: %s", st.State, st.Detail)
	}
	now := time.Now()
	// In the namespace FIREBASE_CONFIG names, the project's: where a v1
	// trigger without instance() listens.
	s.Publish(
		// An admin write, as the Admin SDK makes it.
		triggers.Event{ID: "e1", Source: triggers.Database, Types: []string{triggers.DatabaseUpdated, triggers.DatabaseWritten},
			Project: "demo-rtdb", Instance: "demo-rtdb", Resource: "users/ann/name", Time: now,
			Data: []byte(`{"data": "Ann", "delta": "Anna"}`)},
		// A signed-in user's write.
		triggers.Event{ID: "e2", Source: triggers.Database, Types: []string{triggers.DatabaseCreated, triggers.DatabaseWritten},
			Project: "demo-rtdb", Instance: "demo-rtdb", Resource: "users/bob/name", Time: now,
			Data: []byte(`{"data": null, "delta": "Bob"}`),
			Auth: &triggers.Principal{Type: "app_user", ID: "bob", Token: map[string]any{"email": "bob@example.com"}}},
	)
	s.table.Wait()
	data, _ := os.ReadFile(out)
	seen := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			seen[m["fn"].(string)+"/"+m["uid"].(string)] = m
		}
	}
	for key, want := range map[string]map[string]any{
		"v1/ann": {"before": "Ann", "after": "Anna", "authType": "ADMIN", "auth": nil},
		"v1/bob": {"before": nil, "after": "Bob", "authType": "USER"},
		"v2/ann": {"before": "Ann", "after": "Anna", "authType": "admin", "instance": "demo-rtdb"},
		"v2/bob": {"before": nil, "after": "Bob", "authType": "app_user", "authId": "bob"},
	} {
		got, ok := seen[key]
		if !ok {
			t.Errorf("%s: no delivery; the functions saw %s (log: %+v)", key, data, s.table.Log())
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", key, k, got[k], v)
			}
		}
	}
	if auth, _ := seen["v1/bob"]["auth"].(map[string]any); auth["uid"] != "bob" {
		t.Errorf("v1/bob: context.auth = %v, want the user bob", seen["v1/bob"]["auth"])
	}
}

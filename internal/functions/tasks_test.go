package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// nodeFixtures is where the Node.js fixtures' packages are installed (make deps).
const nodeFixtures = "../../web/e2e/fixtures/functions"

// startWithTaskQueue runs loupe serve with args and a Node.js codebase
// whose task queue "resize" appends each task's data to the returned file,
// and waits until the codebase runs.
func startWithTaskQueue(t *testing.T, args ...string) (*loupetest.Instance, string) {
	return startNodeCodebase(t, func(seen string) string {
		return `const { appendFileSync } = require('node:fs');
const { onTaskDispatched } = require('firebase-functions/v2/tasks');
exports.resize = onTaskDispatched({ retryConfig: { maxAttempts: 1 } },
  async (req) => appendFileSync(` + "`" + seen + "`" + `, JSON.stringify(req.data) + '\n'));
`
	}, args...)
}

// startNodeCodebase runs loupe serve with args and a Node.js codebase whose
// index.js is index(seen), seen being a file its functions may append to
// (returned), and waits until the codebase runs. It skips without Node.js
// or the fixtures' packages.
func startNodeCodebase(t *testing.T, index func(seen string) string, args ...string) (*loupetest.Instance, string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(nodeFixtures, "node_modules", "firebase-functions")); err != nil {
		t.Skip("the Node.js fixtures' packages are not installed (make deps)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	root, err := os.MkdirTemp(nodeFixtures, "codebase-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.Abs(root)
	seen := filepath.Join(root, "seen.jsonl")
	files := map[string]string{
		"firebase.json":          `{"functions": {"source": "functions"}}`,
		"functions/package.json": `{"main": "index.js"}`,
		"functions/index.js":     index(seen),
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inst := loupetest.Start(t, loupetest.Options{Config: filepath.Join(root, "firebase.json"), Args: args})
	loupetest.WaitForFunctions(t, inst)
	return inst, seen
}

// enqueue posts a task to the resize queue as the Admin SDK does, with
// bearer as the credential ("" for none), and returns the answer's status
// and error status ("" on success).
func enqueue(t *testing.T, inst *loupetest.Instance, bearer string, task map[string]any) (int, string, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"task": task})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, inst.URL+"/projects/demo-loupe/locations/us-central1/queues/resize/tasks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("enqueue %s: %v", body, err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct{ Status, Message string }
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Status, out.Error.Message
}

// payload is a task body as the Admin SDK encodes data: base64 of {"data": …}.
func payload(data string) map[string]any {
	body, _ := json.Marshal(map[string]any{"data": data})
	return map[string]any{"httpRequest": map[string]any{"body": body}}
}

// TestTasks_StrictNeedsTheAdminAndNamesAreChecked: with
// --strict-credentials enqueueing and deleting a task need the admin
// credential (production needs an OAuth token with Cloud Tasks' rights):
// nobody and a user get 401 and their task never runs. A task name that is
// not the queue's gets Cloud Tasks' INVALID_ARGUMENT, and the queue answers
// the next task (a name shorter than the queue's prefix used to panic under
// the queue's lock, after which every enqueue hung).
func TestTasks_StrictNeedsTheAdminAndNamesAreChecked(t *testing.T) {
	inst, seen := startWithTaskQueue(t, "--strict-credentials")
	admin := inst.AdminToken(t)
	const queue = "projects/demo-loupe/locations/us-central1/queues/resize"
	_, user, err := loupetest.SignUp(context.Background(), inst.URL, "mallory@example.com", "secret123")
	if err != nil {
		t.Fatal(err)
	}
	for who, bearer := range map[string]string{"nobody": "", "a user": user, "the local owner credential": "owner"} {
		if code, status, _ := enqueue(t, inst, bearer, payload("from "+who)); code != 401 || status != "UNAUTHENTICATED" {
			t.Errorf("enqueue as %s: HTTP %d %s, want 401 UNAUTHENTICATED", who, code, status)
		}
	}
	for _, name := range []string{"x", "projects/demo-loupe/locations/us-central1/queues/resize/tasks/", queue + "/tasks/a/b", queue + "/tasks/a.b",
		"projects/demo-loupe/locations/us-central1/queues/other/tasks/t1"} {
		task := payload("bad name")
		task["name"] = name
		code, status, msg := enqueue(t, inst, admin, task)
		if code != 400 || status != "INVALID_ARGUMENT" || !(strings.HasPrefix(msg, "Task name must be formatted") || strings.HasPrefix(msg, "The queue name from request")) {
			t.Errorf("enqueue named %q: HTTP %d %s %q, want 400 INVALID_ARGUMENT", name, code, status, msg)
		}
	}
	named := payload("from the admin")
	named["name"] = queue + "/tasks/t-1"
	if code, status, msg := enqueue(t, inst, admin, named); code != 200 {
		t.Fatalf("enqueue as the admin: HTTP %d %s %s", code, status, msg)
	}
	if code, _, _ := enqueue(t, inst, admin, named); code != 409 {
		t.Errorf("enqueue the same name again: HTTP %d, want 409", code)
	}
	loupetest.Eventually(t, "the admin's task runs", func() bool {
		data, _ := os.ReadFile(seen)
		return len(data) > 0
	})
	if data, _ := os.ReadFile(seen); string(data) != "\"from the admin\"\n" {
		t.Errorf("the function ran with %q, want only the admin's task", data)
	}

	later := payload("later")
	later["name"] = queue + "/tasks/later"
	later["scheduleTime"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if code, _, _ := enqueue(t, inst, admin, later); code != 200 {
		t.Fatalf("enqueue a task for later: HTTP %d", code)
	}
	del := func(bearer string) int {
		code, _ := loupetest.Call(t, "DELETE", inst.URL+"/"+queue+"/tasks/later", "", "Authorization", "Bearer "+bearer)
		return code
	}
	if code := del(user); code != 401 {
		t.Errorf("a user deletes the admin's task: HTTP %d, want 401", code)
	}
	if code := del(admin); code != 200 {
		t.Errorf("the admin deletes the task: HTTP %d, want 200", code)
	}
	if code := del(admin); code != 404 {
		t.Errorf("delete the deleted task: HTTP %d, want 404", code)
	}
}

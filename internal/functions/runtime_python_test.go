package functions

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// fakeVenv makes dir/venv/bin/name a shell script standing in for the
// venv's interpreter (no Python SDK can be installed here): script is its
// body; it records its arguments in dir/args.
func fakeVenv(t *testing.T, dir, name, script string) string {
	t.Helper()
	bin := filepath.Join(dir, "venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(bin, name)
	body := "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, "args") + "\n" + script + "\n"
	if err := os.WriteFile(py, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return py
}

// TestPythonBin_Venv: the codebase runs with its venv's python3, or the
// python3.X firebase.json's runtime names; without one, the error says the
// commands that make it.
func TestPythonBin_Venv(t *testing.T) {
	dir := t.TempDir()
	_, err := pythonRuntime{}.Build(context.Background(), &codebase{source: dir, name: "default"})
	if err == nil || !strings.Contains(err.Error(), "run `python3 -m venv venv && venv/bin/pip install -r requirements.txt` there") {
		t.Fatalf("no venv: got %v, want the commands that make it", err)
	}
	py := fakeVenv(t, dir, "python3", "")
	if got, err := pythonBin(dir, ""); err != nil || got != py {
		t.Errorf("no runtime: got %q, %v; want %q", got, err, py)
	}
	if _, err := pythonBin(dir, "python312"); err == nil || !strings.Contains(err.Error(), "venv/bin/python3.12: run `python3.12 -m venv venv") {
		t.Errorf("python312 without python3.12 in the venv: got %v", err)
	}
	py312 := fakeVenv(t, dir, "python3.12", "")
	if got, err := pythonBin(dir, "python312"); err != nil || got != py312 {
		t.Errorf("python312: got %q, %v; want %q", got, err, py312)
	}
}

// TestPythonBuild_FunctionsYAML: a functions.yaml in the folder is the
// manifest (turned into JSON by the venv's interpreter, here a stand-in
// that passes JSON through), parsed as Node.js manifests are; the worker
// command is the venv's interpreter running loupe's worker in the folder,
// with firebase-tools' Python environment and each function's signature.
func TestPythonBuild_FunctionsYAML(t *testing.T) {
	dir := t.TempDir()
	py := fakeVenv(t, dir, "python3", "cat")
	yaml := `{"specVersion": "v1alpha1", "params": [{"name": "GREETING", "type": "string", "default": "hi"}],
"endpoints": {
 "hello": {"platform": "gcfv2", "entryPoint": "hello", "region": ["europe-west1"], "httpsTrigger": {}},
 "total": {"platform": "gcfv2", "entryPoint": "total", "eventTrigger": {"eventType": "google.cloud.firestore.document.v1.written",
   "eventFilters": {"database": "(default)", "namespace": "(default)"}, "eventFilterPathPatterns": {"document": "orders/{id}"}, "retry": false}}}}`
	if err := os.WriteFile(filepath.Join(dir, "functions.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := pythonRuntime{}.Build(context.Background(), &codebase{source: dir, name: "py"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fns := b.Functions()
	if len(fns) != 2 || fns[0].Name != "hello" || fns[0].Kind != KindHTTPS || fns[0].Runtime != "python" || fns[0].region() != "europe-west1" ||
		fns[1].Name != "total" || fns[1].Kind != KindEvent || fns[1].Trigger == nil || fns[1].Trigger.Pattern != "orders/{id}" {
		t.Fatalf("functions = %+v", fns)
	}
	if args, _ := os.ReadFile(filepath.Join(dir, "args")); !strings.Contains(string(args), yamlToJSON) {
		t.Errorf("the venv's interpreter was not asked to read the YAML: %q", args)
	}
	cmd, done, err := b.Command(context.Background(), 8080)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if cmd.Path != py || !slices.Equal(cmd.Args[1:], []string{"-c", pythonWorker}) || cmd.Dir != dir {
		t.Errorf("command = %s %q in %s", cmd.Path, cmd.Args[1:], cmd.Dir)
	}
	for _, want := range []string{"PYTHONUNBUFFERED=1", "DEBUG=False", "HOST=127.0.0.1",
		"LOUPE_PYTHON_FUNCTIONS=hello=hello=http total=total=cloudevent", "GREETING=hi"} {
		if !slices.Contains(cmd.Env, want) {
			t.Errorf("environment %q lacks %s", cmd.Env, want)
		}
	}
	if p := b.HTTPPath(fns[0]); p != "/__/fn/hello" {
		t.Errorf("HTTPPath = %q", p)
	}
}

// TestPythonBuild_AdminServer: with no functions.yaml, discovery asks the
// venv where firebase_functions is, starts its private/serving.py with
// ADMIN_PORT and the worker's environment, and reads /__/functions.yaml from
// it (a stand-in server here: python3's http.server over a folder holding
// the manifest).
func TestPythonBuild_AdminServer(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	dir := t.TempDir()
	served := filepath.Join(dir, "served")
	if err := os.MkdirAll(filepath.Join(served, "__"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"endpoints": {"ping": {"platform": "gcfv2", "entryPoint": "ping", "callableTrigger": {}}}}`
	if err := os.WriteFile(filepath.Join(served, "__", "functions.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeVenv(t, dir, "python3", `case "$1" in
-c) case "$2" in *firebase_functions*) echo `+served+`/sdk ;; *) cat ;; esac ;;
*/sdk/private/serving.py) echo "project $GCLOUD_PROJECT" >> `+filepath.Join(dir, "args")+`; cd `+served+` && exec python3 -m http.server --bind 127.0.0.1 "$ADMIN_PORT" ;;
esac`)
	svc := &Service{loupeURL: func() string { return "http://127.0.0.1:1" }}
	svc.env.ProjectID = "demo-py"
	cb := &codebase{svc: svc, source: dir, name: "py", logger: slog.New(slog.DiscardHandler)}
	b, err := pythonRuntime{}.Build(context.Background(), cb)
	if err != nil {
		t.Fatal(err)
	}
	if fns := b.Functions(); len(fns) != 1 || fns[0].Name != "ping" || fns[0].Kind != KindCallable {
		t.Fatalf("functions = %+v", fns)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if !strings.Contains(string(args), filepath.Join(served, "sdk", "private", "serving.py")) || !strings.Contains(string(args), "project demo-py") {
		t.Errorf("serving.py was not run with the worker's environment: %q", args)
	}
}

// TestPythonDeliverer_CloudEvent: a v2 event reaches a Python function as a
// structured-mode CloudEvent on the function's own path, the way
// functions-framework takes one.
func TestPythonDeliverer_CloudEvent(t *testing.T) {
	got := make(chan *http.Request, 1)
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		got <- r
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	f := Function{Name: "total", Kind: KindEvent, Platform: "gcfv2"}
	d := (&pythonBuild{}).Deliverer(base, f)
	e := triggers.Event{ID: "e1", Source: triggers.Firestore, Project: "demo-py", Instance: "(default)", Resource: "orders/o1",
		Time: time.Now(), Data: []byte(`{"value": {"name": "orders/o1"}}`)}
	if status, err := d.Deliver(context.Background(), triggers.Trigger{EventType: triggers.Written}, e); err != nil || status != http.StatusOK {
		t.Fatalf("Deliver = %d, %v", status, err)
	}
	r := <-got
	if r.URL.Path != "/__/fn/total" || r.Header.Get("Content-Type") != "application/cloudevents+json" {
		t.Errorf("posted to %s as %s", r.URL.Path, r.Header.Get("Content-Type"))
	}
	var event map[string]any
	if err := json.Unmarshal(body, &event); err != nil {
		t.Fatal(err)
	}
	if event["specversion"] != "1.0" || event["id"] != "e1" || event["type"] != triggers.Written || event["document"] != "orders/o1" ||
		event["datacontenttype"] != "application/json" || event["data"] == nil {
		t.Errorf("event = %v", event)
	}
}

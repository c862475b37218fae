package functions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// pythonRuntime runs a Python codebase written with the firebase-functions
// Python SDK (main.py and requirements.txt) as firebase-tools does, with the
// interpreter of the folder's virtual environment (venv, which the user
// makes and fills with pip): discovery starts the SDK's own admin server
// (firebase_functions/private/serving.py with ADMIN_PORT) and reads the
// manifest it serves at /__/functions.yaml, unless the folder holds a
// functions.yaml; one worker loads main.py once and serves every function
// the way functions-framework serves one (http or cloudevent signature).
// It is written to firebase-tools' contract but untested here: this
// machine has no PyPI to install the SDK from.
type pythonRuntime struct{}

func (pythonRuntime) Name() string { return "python" }

// Detect: main.py or requirements.txt (firebase-tools looks for the latter).
func (pythonRuntime) Detect(dir string) bool {
	return fileExists(filepath.Join(dir, "main.py")) || fileExists(filepath.Join(dir, "requirements.txt"))
}

// Watched: Python sources, requirements.txt, functions.yaml and the
// environment files, outside venv, __pycache__ and hidden folders.
func (pythonRuntime) Watched(rel string, dir bool) bool {
	name := path.Base(rel)
	if dir {
		return name != "venv" && name != "__pycache__" && !strings.HasPrefix(name, ".")
	}
	switch {
	case path.Ext(name) == ".py", name == "requirements.txt", name == "functions.yaml", name == ".secret.local":
		return true
	}
	return strings.HasPrefix(name, ".env")
}

// pythonBin is the interpreter a codebase runs with: its venv's python3, or
// the version firebase.json's runtime names (python312: python3.12), as
// firebase-tools activates venv and runs that name. A missing one is an
// error saying how to make the venv.
func pythonBin(source, runtime string) (string, error) {
	name := "python3"
	if v, ok := strings.CutPrefix(runtime, "python3"); ok && v != "" {
		name = "python3." + v
	}
	bin := filepath.Join(source, "venv", "bin", name)
	if !fileExists(bin) {
		return "", fmt.Errorf("%s has no Python virtual environment with venv/bin/%s: run `%s -m venv venv && venv/bin/pip install -r requirements.txt` there", source, name, name)
	}
	return bin, nil
}

// pythonEnv is what firebase-tools' functions emulator adds to a Python
// worker's environment (PORT comes with the worker's own), and the list of
// functions loupe's worker serves: name=entryPoint=signature, the
// signature functions-framework would be started with (cloudevent for an
// event trigger, http for everything else).
func pythonEnv(fns []Function) []string {
	spec := make([]string, 0, len(fns))
	for _, f := range fns {
		signature := "http"
		if f.Kind == KindEvent {
			signature = "cloudevent"
		}
		spec = append(spec, f.Name+"="+f.EntryPoint+"="+signature)
	}
	return []string{"PYTHONUNBUFFERED=1", "DEBUG=False", "HOST=127.0.0.1", "LOUPE_PYTHON_FUNCTIONS=" + strings.Join(spec, " ")}
}

// pythonWorker loads main.py once and mounts each function at
// /__/fn/{name}, called as functions-framework calls it: an http function
// with the Flask request, a cloudevent one with the CloudEvent the request
// carries (then "OK"). Flask, Werkzeug and cloudevents come with the SDK.
const pythonWorker = `import importlib.util, os, sys
import flask
from cloudevents.http import from_http
from werkzeug.exceptions import NotFound
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import run_simple

sys.path.insert(0, os.getcwd())
spec = importlib.util.spec_from_file_location("main", "main.py")
module = importlib.util.module_from_spec(spec)
sys.modules["main"] = module
spec.loader.exec_module(module)

def http_view(fn):
    def view(path):
        return fn(flask.request._get_current_object())
    return view

def event_view(fn):
    def view(path):
        fn(from_http(flask.request.headers, flask.request.get_data()))
        return "OK"
    return view

def at_root(app):
    # The function's own path is its "/", not a redirect to "/".
    def wsgi(environ, start_response):
        environ["PATH_INFO"] = environ.get("PATH_INFO") or "/"
        return app(environ, start_response)
    return wsgi

methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
mounts = {}
for item in os.environ["LOUPE_PYTHON_FUNCTIONS"].split():
    name, entry, signature = item.split("=")
    view = (event_view if signature == "cloudevent" else http_view)(getattr(module, entry))
    app = flask.Flask(name)
    app.add_url_rule("/", "fn", view, methods=methods, defaults={"path": ""})
    app.add_url_rule("/<path:path>", "fn", view, methods=methods)
    mounts["/__/fn/" + name] = at_root(app)
run_simple(os.environ["HOST"], int(os.environ["PORT"]), DispatcherMiddleware(NotFound(), mounts), threaded=True)
`

// yamlToJSON turns the YAML on stdin into JSON, with the PyYAML the SDK
// depends on (the Python SDK serves its manifest as YAML).
const yamlToJSON = "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"

// Build finds the venv's interpreter and runs the SDK's discovery.
func (pythonRuntime) Build(ctx context.Context, cb *codebase) (Build, error) {
	py, err := pythonBin(cb.source, cb.config.Runtime)
	if err != nil {
		return nil, err
	}
	m, err := discoverPython(ctx, cb, py)
	if err != nil {
		return nil, err
	}
	b := &pythonBuild{python: py, source: cb.source}
	if b.fns, b.params, err = m.functions(cb.name, "python"); err != nil {
		return nil, fmt.Errorf("functions in %s: %w", cb.source, err)
	}
	return b, nil
}

// discoverPython reads functions.yaml, or starts the SDK's admin server on
// a free ADMIN_PORT with the worker's environment and reads the manifest it
// serves, as firebase-tools does.
func discoverPython(ctx context.Context, cb *codebase, py string) (*manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	data, err := os.ReadFile(filepath.Join(cb.source, "functions.yaml"))
	if err != nil {
		sdk, err := runPython(ctx, cb.source, py, nil, "-c", "import firebase_functions, os; print(os.path.dirname(firebase_functions.__file__))")
		if err != nil {
			return nil, fmt.Errorf("the firebase-functions SDK is not installed in the venv of %s (%v): run `venv/bin/pip install -r requirements.txt` there", cb.source, err)
		}
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, py, filepath.Join(strings.TrimSpace(string(sdk)), "private", "serving.py"))
		cmd.Env = append(append(os.Environ(), cb.svc.workerEnv(cb, port)...), "ADMIN_PORT="+strconv.Itoa(port))
		if data, err = awaitManifest(ctx, cb, cmd, port, ""); err != nil {
			return nil, err
		}
	}
	js, err := runPython(ctx, cb.source, py, data, "-c", yamlToJSON)
	if err != nil {
		return nil, fmt.Errorf("the functions manifest of %s: %w", cb.source, err)
	}
	return parseManifest(cb, js)
}

// runPython runs py with args in dir, stdin in, and answers its stdout; its
// error holds stderr.
func runPython(ctx context.Context, dir, py string, in []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dieWithParent(cmd)
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return out, nil
}

// pythonBuild is a discovered Python codebase.
type pythonBuild struct {
	python, source string
	fns            []Function
	// params are the SDK params' defaults, as for Node.js.
	params []string
}

func (b *pythonBuild) Functions() []Function { return b.fns }

func (b *pythonBuild) Command(ctx context.Context, port int) (*exec.Cmd, func(), error) {
	cmd := exec.CommandContext(ctx, b.python, "-c", pythonWorker)
	cmd.Dir = b.source
	cmd.Env = append(pythonEnv(b.fns), b.params...)
	return cmd, func() {}, nil
}

func (b *pythonBuild) HTTPPath(f Function) string { return sdkHTTPPath(f) }

func (b *pythonBuild) Deliverer(base *url.URL, f Function) triggers.Deliverer {
	return sdkDeliverer{base: base, fn: f, path: b.HTTPPath(f), structured: true}
}

func (b *pythonBuild) Close() {}

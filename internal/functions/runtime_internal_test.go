package functions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
)

// TestRuntimeFor_Python: a Python codebase, named by its runtime or found
// by its main.py or requirements.txt, gets the Python runtime; a folder
// with package.json stays Node.js; an unknown runtime is refused, naming
// the ones loupe runs.
func TestRuntimeFor_Python(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.py"), []byte("from firebase_functions import https_fn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cb := range []config.Codebase{{Codebase: "py"}, {Codebase: "py", Runtime: "python312"}} {
		if rt, err := runtimeFor(cb, dir); err != nil || rt.Name() != "python" {
			t.Errorf("runtime %q: got %v, %v; want python", cb.Runtime, rt, err)
		}
	}
	reqs := t.TempDir()
	if err := os.WriteFile(filepath.Join(reqs, "requirements.txt"), []byte("firebase-functions\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rt, err := runtimeFor(config.Codebase{}, reqs); err != nil || rt.Name() != "python" {
		t.Errorf("a folder with requirements.txt: got %v, %v; want python", rt, err)
	}
	if _, err := runtimeFor(config.Codebase{}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "has no go.mod, package.json or main.py") {
		t.Errorf("an empty folder: got %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"main": "index.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if rt, err := runtimeFor(config.Codebase{}, dir); err != nil || rt.Name() != "nodejs" {
		t.Errorf("a folder with package.json: got %v, %v; want nodejs", rt, err)
	}
	if _, err := runtimeFor(config.Codebase{Runtime: "dart3"}, dir); err == nil || !strings.Contains(err.Error(), `"dart3" is not one loupe runs (go, nodejs, python)`) {
		t.Errorf("dart3: got %v", err)
	}
}

package functions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
)

// TestRuntimeFor_RefusesPython: a Python codebase, named by its runtime or
// by its main.py, is refused with a message saying loupe does not run
// Python, rather than taken for another runtime or reported as unknown.
func TestRuntimeFor_RefusesPython(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.py"), []byte("from firebase_functions import https_fn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cb := range []config.Codebase{{Codebase: "py"}, {Codebase: "py", Runtime: "python312"}} {
		_, err := runtimeFor(cb, dir)
		if err == nil || !strings.Contains(err.Error(), "does not run Python functions") {
			t.Errorf("runtime %q: got %v, want the Python refusal", cb.Runtime, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"main": "index.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if rt, err := runtimeFor(config.Codebase{}, dir); err != nil || rt.Name() != "nodejs" {
		t.Errorf("a folder with package.json: got %v, %v; want nodejs", rt, err)
	}
	if _, err := runtimeFor(config.Codebase{Runtime: "dart3"}, dir); err == nil || !strings.Contains(err.Error(), `"dart3" is not one loupe runs`) {
		t.Errorf("dart3: got %v", err)
	}
}

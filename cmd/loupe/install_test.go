package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestGoInstall_ServesTheConsole installs loupe as `go install` does from a
// clone: the repository's tracked files only, so no web/node_modules and no
// build of the app (web/dist), and checks that the binary serves the console's page and
// calls itself dev. It fails when internal/console/dist is not committed.
func TestGoInstall_ServesTheConsole(t *testing.T) {
	root := filepath.Dir(loupetest.RepoFile("go.mod"))
	files, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "loupe")
	for _, name := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gobin := t.TempDir()
	// -trimpath and no cgo, as make dist builds: the compiled packages are
	// shared with its build through Go's cache.
	install := exec.Command("go", "install", "-trimpath", "./cmd/loupe")
	install.Dir = clone
	install.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/loupe: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "loupe")

	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "loupe version dev (commit ") {
		t.Errorf("loupe version = %q, %v", out, err)
	}

	inst := loupetest.Start(t, loupetest.Options{Bin: bin, InMemory: true, Args: []string{"--only", "firestore"}})
	resp, err := http.Get(inst.URL + "/_/console/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want, err := os.ReadFile(filepath.Join(root, "internal/console/dist/app/console.html"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || string(page) != string(want) {
		t.Fatalf("GET /_/console/ = %d:\n%.300s\nwant the console's page", resp.StatusCode, page)
	}
	// Its script, which the page names, is served too.
	script := page[strings.Index(string(page), "/_/console/assets/"):]
	script = script[:strings.IndexByte(string(script), '"')]
	resp, err = http.Get(inst.URL + string(script))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s = %d", script, resp.StatusCode)
	}
}

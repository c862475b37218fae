package guard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/rules"
)

// compileRules is the compile function the Firestore and Storage watchers use.
func compileRules(src []byte, path string) (*rules.Ruleset, error) {
	return rules.Compile(string(src), path)
}

func TestWatcher_Reload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "firestore.rules")
	write := func(src string) {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	allowIf := func(cond string) string {
		return "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /c/{id} { allow get: if " + cond + "; }\n  }\n}\n"
	}
	get := func(w *Watcher[*rules.Ruleset]) bool {
		return w.Ruleset().Evaluate(&rules.Request{Service: rules.Firestore, Method: rules.Get,
			Path: "/databases/(default)/documents/c/x", Resource: map[string]any{}}).Allow
	}

	write(allowIf("true"))
	w, err := NewWatcher(path, compileRules)
	if err != nil || !get(w) {
		t.Fatalf("initial load: %v", err)
	}
	write(allowIf("false"))
	if changed, err := w.Reload(); !changed || err != nil || get(w) {
		t.Fatalf("reload to false: changed=%v err=%v", changed, err)
	}
	write(allowIf("true &&"))
	changed, err := w.Reload()
	if !changed || err == nil || !strings.HasPrefix(err.Error(), path+":4:") {
		t.Fatalf("broken file: changed=%v err=%v", changed, err)
	}
	if get(w) {
		t.Fatal("last good ruleset (deny) must stay in force")
	}
	if changed, _ := w.Reload(); changed {
		t.Fatal("unchanged file reported as changed")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan error, 4)
	go w.Run(ctx, 20*time.Millisecond, func(err error) { reports <- err })
	write(allowIf("true"))
	if err := <-reports; err != nil || !get(w) {
		t.Fatalf("Run reload: %v", err)
	}
}

func TestNewWatcher_MissingFile(t *testing.T) {
	w, err := NewWatcher(filepath.Join(t.TempDir(), "nope.rules"), compileRules)
	if err == nil || w.Ruleset() != nil || w.Err() == nil {
		t.Fatalf("want error and no ruleset, got %v", err)
	}
}

package guard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/identity"
)

// TestDatabaseRules_FromFirebaseJSONAndReloaded loads firebase.json's
// "database" array (one file per instance) and follows an edit of the file.
func TestDatabaseRules_FromFirebaseJSONAndReloaded(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.rules.json", `{"rules": {".read": false, "open": {".read": true}}}`)
	write("firebase.json", `{"database": [{"instance": "main", "rules": "main.rules.json"}]}`)
	cfg, err := config.Load(filepath.Join(dir, "firebase.json"), true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := New(nil, nil)
	if err := r.LoadConfig(ctx, cfg, func(s string) bool { return s == "database" }, false); err != nil {
		t.Fatal(err)
	}
	az := r.DatabaseAuthorizer()
	read := func(ns, path string) error {
		p, _ := database.ParsePath(path)
		return az.Read(ctx, database.ReadAccess{NS: ns, Path: p, Root: database.Empty, Caller: identity.Principal{}, Time: time.Now(), Method: "get"})
	}
	if err := read("main", "/open/x"); err != nil {
		t.Fatalf("open is readable: %v", err)
	}
	if err := read("main", "/closed"); err == nil {
		t.Fatal("closed is readable")
	}
	if err := read("other", "/closed"); err != nil {
		t.Fatalf("a namespace without rules runs open: %v", err)
	}
	write("main.rules.json", `{"rules": {".read": true}}`)
	deadline := time.Now().Add(10 * time.Second)
	for read("main", "/closed") != nil {
		if time.Now().After(deadline) {
			t.Fatal("the edited rules were not reloaded")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := r.SetDatabaseRules("main", `{"rules": {".read": "nope"}}`); err == nil || !strings.Contains(err.Error(), "Line 1, column 22: Unknown variable 'nope'.") {
		t.Fatalf("a mistake: %v", err)
	}
}

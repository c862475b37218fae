package guard

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
)

// TestLoadConfig_RulesWarnings: a rules file with warnings of the check
// phase loads with each warning logged (as production deploys it), and is
// refused under --strict naming file, line and column.
func TestLoadConfig_RulesWarnings(t *testing.T) {
	dir := t.TempDir()
	src := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /a/{id} { allow read: if isOwner(id); }\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "firestore.rules"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfgPath, []byte(`{"firestore": {"rules": "firestore.rules"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	all := func(string) bool { return true }

	var log bytes.Buffer
	if err := New(slog.New(slog.NewTextHandler(&log, nil)), nil).LoadConfig(ctx, cfg, all, false); err != nil {
		t.Fatalf("without --strict the file loads: %v", err)
	}
	if !strings.Contains(log.String(), "[W] 4:36 - Invalid function name: isOwner.") {
		t.Errorf("the warning is not logged:\n%s", log.String())
	}

	err = New(slog.New(slog.DiscardHandler), nil).LoadConfig(ctx, cfg, all, true)
	var issues *IssuesError
	if !errors.As(err, &issues) || !strings.Contains(err.Error(), "firestore.rules:4:36: [W] Invalid function name: isOwner.") {
		t.Errorf("under --strict: %v", err)
	}
}

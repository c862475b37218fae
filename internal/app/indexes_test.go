package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
)

// TestApp_MalformedIndexFileIsAConfigError: under --strict a
// firestore.indexes.json that does not parse stops the start with an error
// naming the file and the index at fault, before anything serves; without
// it loupe starts, as firebase-tools (whose emulators never read the file)
// does, and warns.
func TestApp_MalformedIndexFileIsAConfigError(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"indexes": [{"collectionGroup": "c", "fields": [{"fieldPath": "a", "order": "UP"}]}]}`, `indexes[0]: fields[0]: order must be ASCENDING or DESCENDING, not "UP"`},
		{`{"indexes": [{"collectionGroup": "c", "fields": []}]}`, "indexes[0]: an index needs at least one field"},
		{`{"indexes": {}}`, "parse indexes"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "idx.json"), []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "firebase.json")
		if err := os.WriteFile(path, []byte(`{"firestore": {"indexes": "idx.json"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path, true)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Host: "127.0.0.1", InMemory: true, Config: cfg, Project: "demo-app", Only: []string{"firestore"}, Strict: true}
		_, err = New(context.Background(), opts)
		var cfgErr *ConfigError
		if !errors.As(err, &cfgErr) || !strings.Contains(err.Error(), "idx.json") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a ConfigError with %q", tc.file, err, tc.want)
		}
		var log strings.Builder
		opts.Strict, opts.Logger = false, slog.New(slog.NewTextHandler(&log, nil))
		if _, err := New(t.Context(), opts); err != nil {
			t.Errorf("%s without --strict: %v", tc.file, err)
			continue
		}
		if !strings.Contains(log.String(), "does not parse") || !strings.Contains(log.String(), "idx.json") {
			t.Errorf("%s without --strict: no warning naming the file:\n%s", tc.file, log.String())
		}
	}
}

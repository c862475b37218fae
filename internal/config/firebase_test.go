package config

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse_ReadsTheBlocksLoupeUses(t *testing.T) {
	cfg, err := Parse([]byte(`{
	  "firestore": {"rules": "firestore.rules"},
	  "storage": {"rules": "storage.rules"},
	  "hosting": {"public": "web/dist", "rewrites": [{"source": "/api/rates/**", "function": "rates"}]},
	  "emulators": {"auth": {"port": 9099}, "firestore": {"host": "127.0.0.1", "port": 8080}, "singleProjectMode": true},
	  "somethingElse": true
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Firestore.Rules != "firestore.rules" || cfg.Storage.Rules != "storage.rules" {
		t.Errorf("rules = %+v %+v", cfg.Firestore, cfg.Storage)
	}
	if cfg.Hosting.Public != "web/dist" || cfg.Hosting.Rewrites[0].Function != "rates" {
		t.Errorf("hosting = %+v", cfg.Hosting)
	}
	if cfg.Emulators["auth"].Port != 9099 || cfg.Emulators["firestore"].Host != "127.0.0.1" {
		t.Errorf("emulators = %+v", cfg.Emulators)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\n  \"hosting\": {\"public\": }\n}", "invalid JSON at line 2, column 25"},
		{`{"emulators": {"auth": {"port": "x"}}}`, "emulators.auth.port must be int, not string"},
		{`{"emulators": {"auth": {"port": 70000}}}`, "emulators.auth.port 70000 is out of range"},
		{`[]`, "must be config.Firebase"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestLoad_MissingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "firebase.json")
	cfg, err := Load(path, false)
	if err != nil || cfg.PublicDir() != "" {
		t.Fatalf("optional missing file: cfg=%+v err=%v", cfg, err)
	}
	if _, err := Load(path, true); err == nil {
		t.Fatal("required missing file: want an error")
	}
	if err := os.WriteFile(path, []byte(`{"hosting":{"public":"dist"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(path, true)
	if err != nil || cfg.PublicDir() != filepath.Join(dir, "dist") {
		t.Fatalf("cfg=%+v err=%v", cfg, err)
	}
}

func TestParse_RulesArrayForms(t *testing.T) {
	cfg, err := Parse([]byte(`{
	  "firestore": [{"database": "(default)", "rules": "default.rules"}, {"database": "orders", "rules": "orders.rules", "indexes": "orders.indexes.json"}],
	  "storage": [{"bucket": "a", "rules": "a.rules"}, {"bucket": "b", "rules": "b.rules"}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Firestore == nil || cfg.Firestore.Rules != "default.rules" {
		t.Errorf("Firestore = %+v, want the (default) entry", cfg.Firestore)
	}
	if len(cfg.FirestoreConfigs) != 2 || cfg.FirestoreConfigs[1].Database != "orders" || cfg.FirestoreConfigs[1].Indexes != "orders.indexes.json" {
		t.Errorf("FirestoreConfigs = %+v", cfg.FirestoreConfigs)
	}
	if cfg.Storage != nil || len(cfg.StorageConfigs) != 2 || cfg.StorageConfigs[1].Bucket != "b" {
		t.Errorf("Storage = %+v, StorageConfigs = %+v", cfg.Storage, cfg.StorageConfigs)
	}
	for _, bad := range []string{
		`{"firestore": [{"rules": "a.rules"}, {"database": "(default)", "rules": "b.rules"}]}`,
		`{"storage": [{"bucket": "a", "rules": "a.rules"}, {"bucket": "a", "rules": "b.rules"}]}`,
		`{"firestore": "firestore.rules"}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) = nil error", bad)
		}
	}
}

func TestParse_FunctionsCodebases(t *testing.T) {
	one, err := Parse([]byte(`{"functions": {"source": "functions"}}`))
	if err != nil || len(one.Functions) != 1 || one.Functions[0].Source != "functions" || one.Functions[0].Name() != "default" {
		t.Fatalf("object form: %+v, %v", one.Functions, err)
	}
	many, err := Parse([]byte(`{"functions": [{"source": "go", "codebase": "ours"}, {"source": "node", "codebase": "theirs", "runtime": "nodejs20", "ignore": ["node_modules"]}]}`))
	if err != nil || len(many.Functions) != 2 || many.Functions[1].Name() != "theirs" || many.Functions[1].Runtime != "nodejs20" {
		t.Fatalf("array form: %+v, %v", many.Functions, err)
	}
	for _, bad := range []string{
		`{"functions": [{"source": "a"}, {"source": "b"}]}`,
		`{"functions": [{"codebase": "x"}]}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s): want an error", bad)
		}
	}
}

func TestFirebase_FirestoreEditions(t *testing.T) {
	for _, c := range []struct {
		name, json string
		want       map[string]string
	}{
		{"default is standard", `{}`, map[string]string{"": "standard"}},
		{"emulators block", `{"emulators": {"firestore": {"edition": "enterprise"}}}`, map[string]string{"": "enterprise"}},
		{"firestore block", `{"firestore": {"edition": "enterprise"}}`, map[string]string{"": "standard", "(default)": "enterprise"}},
		{"per database", `{"emulators": {"firestore": {"edition": "enterprise"}}, "firestore": [{"database": "(default)"}, {"database": "old", "edition": "standard"}]}`,
			map[string]string{"": "enterprise", "old": "standard"}},
	} {
		cfg, err := Parse([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := cfg.FirestoreEditions(); !maps.Equal(got, c.want) {
			t.Errorf("%s: FirestoreEditions = %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := Parse([]byte(`{"firestore": {"edition": "premium"}}`)); err == nil || !strings.Contains(err.Error(), "premium") {
		t.Errorf("an unknown edition: err = %v", err)
	}
}

// TestParse_EmulatorsCORS: emulators.cors lists the origins of pages that
// may call loupe; anything but a list of strings is an error.
func TestParse_EmulatorsCORS(t *testing.T) {
	cfg, err := Parse([]byte(`{"emulators": {"cors": ["https://app.example", "http://dev.lan:5173"], "auth": {"port": 9099}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.CORS, ","); got != "https://app.example,http://dev.lan:5173" || cfg.Emulators["auth"].Port != 9099 {
		t.Errorf("cors %q, emulators %v", got, cfg.Emulators)
	}
	if _, err := Parse([]byte(`{"emulators": {"cors": "https://app.example"}}`)); err == nil {
		t.Error("a string for emulators.cors was accepted")
	}
}

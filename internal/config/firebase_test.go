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
	if site := cfg.Site(); site.Public != "web/dist" || site.Rewrites[0].Function != "rates" {
		t.Errorf("hosting = %+v", cfg.Hosting)
	}
	if cfg.Emulators["auth"].Port != 9099 || cfg.Emulators["firestore"].Host != "127.0.0.1" {
		t.Errorf("emulators = %+v", cfg.Emulators)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\n  \"hosting\": {\"public\": }\n}", "invalid JSON at line 2, column 25"},
		{"{\n  // a comment\n  \"hosting\": {\"public\": }\n}", "invalid JSON at line 3, column 25"},
		{`[]`, "firebase.json must be an object, not array"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

// TestParse_Problems: a block loupe cannot use is no error at once but a
// Problem of the service it belongs to, which fails only when that service
// starts.
func TestParse_Problems(t *testing.T) {
	for _, tc := range []struct{ in, service, want string }{
		{`{"emulators": {"auth": {"port": "x"}}}`, "auth", "emulators.auth.port must be a number"},
		{`{"emulators": {"auth": {"port": 70000}}}`, "auth", "emulators.auth.port 70000 is out of range"},
		{`{"hosting": {"rewrites": "all"}}`, "hosting", `"hosting.rewrites" must be an array, not string`},
		{`{"firestore": "firestore.json"}`, "firestore", `"firestore" is a file name`},
		{`{"storage": [{"bucket": "a"}, {"bucket": "a"}]}`, "storage", `bucket "a" is configured twice`},
		{`{"firestore": {"edition": "premium"}}`, "firestore", `"premium"`},
	} {
		cfg, err := Parse([]byte(tc.in))
		if err != nil {
			t.Errorf("Parse(%s): %v", tc.in, err)
			continue
		}
		if p := cfg.Problem(tc.service); p == nil || !strings.Contains(p.Error(), tc.want) {
			t.Errorf("Parse(%s): Problem(%s) = %v, want %q", tc.in, tc.service, p, tc.want)
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
	for bad, service := range map[string]string{
		`{"firestore": [{"rules": "a.rules"}, {"database": "(default)", "rules": "b.rules"}]}`:    "firestore",
		`{"storage": [{"bucket": "a", "rules": "a.rules"}, {"bucket": "a", "rules": "b.rules"}]}`: "storage",
		`{"firestore": "firestore.rules"}`: "firestore",
	} {
		if cfg, err := Parse([]byte(bad)); err != nil || cfg.Problem(service) == nil {
			t.Errorf("Parse(%s) = %v, Problem(%s) nil", bad, err, service)
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
	for bad, want := range map[string]string{
		`{"functions": [{"source": "a"}, {"source": "b"}]}`:                   "functions.codebase must be unique but 'default' was used more than once.",
		`{"functions": [{"codebase": "x"}]}`:                                  "codebase source must be specified",
		`{"functions": []}`:                                                   "Requires at least one functions.source",
		`{"functions": {"source": "f", "codebase": "Big"}}`:                   "Invalid codebase name",
		`{"functions": {"remoteSource": {"repository": "r", "ref": "main"}}}`: "Remote sources are not supported in the Functions emulator.",
		`{"functions": "functions"}`:                                          `"functions" is a file name`,
	} {
		cfg, err := Parse([]byte(bad))
		if err != nil || cfg.FunctionsError() == nil || !strings.Contains(cfg.FunctionsError().Error(), want) {
			t.Errorf("Parse(%s): %v, FunctionsError %v, want %q", bad, err, cfg.FunctionsError(), want)
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

// TestLoad_FunctionsDefaults: as firebase-tools' Config, a codebase without
// source or remoteSource gets "functions" when that folder exists: the
// object form's, or the array form's first such entry only.
func TestLoad_FunctionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		folder     bool
		want       string // sources, by codebase
		wantErr    string
	}{
		{"object", `{"functions": {}}`, true, "default=functions", ""},
		{"object without the folder", `{"functions": {}}`, false, "default=", "codebase source must be specified"},
		{"array", `{"functions": [{"source": "a", "codebase": "a"}, {"codebase": "b"}, {"codebase": "c"}]}`, true, "a=a b=functions c=", "codebase source must be specified"},
		{"remote source untouched", `{"functions": [{"remoteSource": {"repository": "r", "ref": "v1"}, "runtime": "nodejs20"}]}`, true, "default=", "Remote sources are not supported"},
		{"false is no block", `{"functions": false}`, true, "", ""},
	} {
		dir := t.TempDir()
		if tc.folder {
			if err := os.Mkdir(filepath.Join(dir, "functions"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "firebase.json")
		if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, true)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, cb := range cfg.Functions {
			got = append(got, cb.Name()+"="+cb.Source)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: codebases %q, want %q", tc.name, strings.Join(got, " "), tc.want)
		}
		if err := cfg.FunctionsError(); (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: FunctionsError %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

// TestJSONC: comments outside strings become spaces (lines and columns
// stay), byte-order marks go, strings keep their slashes.
func TestJSONC(t *testing.T) {
	for in, want := range map[string]string{
		"\uFEFF{\"a\": 1} // c":              "{\"a\": 1}     ",
		"{/* x\n y */\"u\": \"http://x/*\"}": "{    \n     \"u\": \"http://x/*\"}",
		`{"s": "a\"//b"}`:                    `{"s": "a\"//b"}`,
		"{} /* open":                         "{}        ",
	} {
		if got := string(JSONC([]byte(in))); got != want {
			t.Errorf("JSONC(%q) = %q, want %q", in, got, want)
		}
	}
}

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadWithRC writes firebase.json and .firebaserc (when rc is not "") into a
// folder and loads them.
func loadWithRC(t *testing.T, firebaseJSON, rc string) (*Firebase, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(firebaseJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc != "" {
		if err := os.WriteFile(filepath.Join(dir, ".firebaserc"), []byte(rc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Load(filepath.Join(dir, "firebase.json"), true)
}

func TestFirebase_ResolveStorageTargets(t *testing.T) {
	const targets = `{"storage": [{"target": "main", "rules": "main.rules"}, {"bucket": "fixed", "rules": "fixed.rules"}]}`
	const rc = `{"projects": {"default": "proj"}, "targets": {"proj": {"storage": {"main": ["proj.appspot.com", "proj-2.appspot.com"]}}}}`

	cfg, err := loadWithRC(t, targets, rc)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := cfg.ResolveStorageTargets("proj"); err != nil || w != "" {
		t.Fatalf("resolve: %q, %v", w, err)
	}
	var got []string
	for _, e := range cfg.StorageConfigs {
		got = append(got, e.Bucket+"="+e.Rules)
	}
	if strings.Join(got, " ") != "proj.appspot.com=main.rules proj-2.appspot.com=main.rules fixed=fixed.rules" {
		t.Errorf("resolved entries: %v", got)
	}

	cfg, _ = loadWithRC(t, targets, rc)
	if _, err := cfg.ResolveStorageTargets("other"); err == nil ||
		!strings.Contains(err.Error(), "Deploy target main not configured for project other. Configure with:\n\n  firebase target:apply storage main <resources...>") {
		t.Errorf("a target .firebaserc does not apply for the project: %v", err)
	}
	cfg, _ = loadWithRC(t, targets, "")
	if w, err := cfg.ResolveStorageTargets("demo-x"); err != nil || !strings.Contains(w, `Detected demo project ID "demo-x"`) || cfg.StorageConfigs != nil {
		t.Errorf("a demo project without targets: %q, %v, %v; want a warning and no storage rules", w, err, cfg.StorageConfigs)
	}
	// firebase-tools warns about a .firebaserc that is not JSON and goes on without it.
	if cfg, err := loadWithRC(t, targets, `{"targets": [`); err != nil || len(cfg.Notes) != 1 || !strings.Contains(cfg.Notes[0], "JSON error trying to load") {
		t.Errorf("a .firebaserc that is not JSON: %v, notes %q", err, cfg.Notes)
	}
	cfg, _ = loadWithRC(t, `{"storage": [{"target": "a", "rules": "a.rules"}, {"target": "b", "rules": "b.rules"}]}`,
		`{"targets": {"p": {"storage": {"a": ["same"], "b": ["same"]}}}}`)
	if _, err := cfg.ResolveStorageTargets("p"); err == nil || !strings.Contains(err.Error(), `bucket "same" is configured twice`) {
		t.Errorf("two targets on one bucket: %v", err)
	}
}

// TestFirebase_ProjectFor: --project, an alias of it, the deprecated
// "firebase" key, the only alias, the "default" alias, the fallback: in
// firebase-tools' order (its Command.applyRC).
func TestFirebase_ProjectFor(t *testing.T) {
	for _, tc := range []struct {
		name, json, rc, flag, want string
	}{
		{"flag", `{}`, `{"projects": {"default": "p-default"}}`, "p-flag", "p-flag"},
		{"flag is an alias", `{}`, `{"projects": {"default": "p-default", "staging": "p-staging"}}`, "staging", "p-staging"},
		{"default alias", `{}`, `{"projects": {"default": "p-default", "staging": "p-staging"}}`, "", "p-default"},
		{"only alias", `{}`, `// by hand` + "\n" + `{"projects": {"prod": "p-prod"}}`, "", "p-prod"},
		{"aliases without default", `{}`, `{"projects": {"a": "p-a", "b": "p-b"}}`, "", "demo-fallback"},
		{"firebase key", `{"firebase": "p-legacy"}`, `{"projects": {"default": "p-default"}}`, "", "p-legacy"},
		{"nothing", `{}`, "", "", "demo-fallback"},
	} {
		cfg, err := loadWithRC(t, tc.json, tc.rc)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := cfg.ProjectFor(tc.flag, "demo-fallback"); got != tc.want {
			t.Errorf("%s: ProjectFor(%q) = %q, want %q", tc.name, tc.flag, got, tc.want)
		}
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRulesCheck reports a check error at its line and column, prints each
// warning as file:line:col: [W] message, and fails on warnings only with
// --strict.
func TestRulesCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	warned := write("warned.rules", "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /a/{id} { allow read: if isOwner(id); }\n  }\n}\n")
	out, err := run("rules", "check", warned)
	if err != nil || !strings.Contains(out, warned+":4:36: [W] Invalid function name: isOwner.") || !strings.Contains(out, ": ok") {
		t.Errorf("a file with a warning: %v\n%s", err, out)
	}
	if _, err := run("rules", "check", "--strict", warned); err == nil || !strings.Contains(err.Error(), "1 warning(s)") {
		t.Errorf("--strict on a file with a warning: %v", err)
	}
	dup := write("dup.rules", "service cloud.firestore {\n  match /a/{x} {\n    match /b/{x} { allow read; }\n  }\n}\n")
	if _, err := run("rules", "check", dup); err == nil || !strings.HasPrefix(err.Error(), dup+":3:15: Duplicate path variable 'x'") {
		t.Errorf("a duplicate path variable: %v", err)
	}
}

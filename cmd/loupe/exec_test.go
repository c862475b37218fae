package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// execLoupe runs `loupe exec ARGS…` in a folder without firebase.json and
// returns its exit code and combined output.
func execLoupe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(loupetest.Binary(t), append([]string{"exec"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir}
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestExec_RunsTheCommandAgainstLoupe: the command reaches loupe through
// the variables exec sets (here loupe's own Admin SDK commands), its status
// is exec's status, and --export-on-exit writes what it did.
func TestExec_RunsTheCommandAgainstLoupe(t *testing.T) {
	bin := loupetest.Binary(t)
	export := filepath.Join(t.TempDir(), "export")
	code, out := execLoupe(t, "--export-on-exit", export, "--", bin, "app", "users", "create", "--email", "exec@loupe.dev", "--password", "secret1", "--name", "Exec")
	if code != 0 || !strings.Contains(out, "created user ") {
		t.Fatalf("exec users create: exit %d\n%s", code, out)
	}
	accounts, err := os.ReadFile(filepath.Join(export, "auth_export", "accounts.json"))
	if err != nil || !strings.Contains(string(accounts), "exec@loupe.dev") {
		t.Errorf("export on exit: %v %s", err, accounts)
	}

	// --import loads it back; the variables carry the project and the hub.
	code, out = execLoupe(t, "--import", export, "--project", "demo-exec", "--", bin, "app", "users", "get", "--project", "demo-exec", "nobody")
	if code != 1 || !strings.Contains(out, "user not found: nobody") {
		t.Errorf("exec users get nobody: exit %d, want 1 (the command's status)\n%s", code, out)
	}
	code, out = execLoupe(t, "--", "sh", "-c", `test -n "$FIREBASE_EMULATOR_HUB" && test "$GCLOUD_PROJECT" = demo-loupe && test "$STORAGE_EMULATOR_HOST" = "http://$FIRESTORE_EMULATOR_HOST" && exit 7`)
	if code != 7 {
		t.Errorf("exec sh -c '… exit 7': exit %d, want 7\n%s", code, out)
	}
	if code, out := execLoupe(t, "--", "no-such-command-here"); code != 127 {
		t.Errorf("exec of a missing command: exit %d, want 127\n%s", code, out)
	}
	if code, out := execLoupe(t); code != 2 || !strings.Contains(out, "usage: loupe exec") {
		t.Errorf("exec without a command: exit %d, want 2 and a usage line\n%s", code, out)
	}
}

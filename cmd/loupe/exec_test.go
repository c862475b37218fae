package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// execLoupe runs `loupe exec ARGS…` in a folder without firebase.json and
// returns its exit code and combined output.
func execLoupe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return loupeIn(t, t.TempDir(), append([]string{"exec"}, args...)...)
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

// loupeIn runs `loupe ARGS…` in dir (its temp folder and home too), as a
// package.json script runs `firebase ARGS…`, and returns its exit code and
// combined output.
func loupeIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(loupetest.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir}
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestEmulatorsExec_AsFirebaseTools: `loupe emulators:exec SCRIPT` takes
// firebase-tools' flags and exits as firebase emulators:exec does: the
// script (run by the shell) decides, every failure of loupe's own is 1.
func TestEmulatorsExec_AsFirebaseTools(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"emulators:exec", "--only", "firestore", "-P", "demo-x", `test "$GCLOUD_PROJECT" = demo-x && test -n "$FIRESTORE_EMULATOR_HOST" && exit 5`}, 5, `script "test \"$GCLOUD_PROJECT\" = demo-x`},
		{[]string{"--debug", "emulators:exec", `exit 0`, "--only", "firestore", "--log-verbosity", "QUIET", "--inspect-functions", "--ui"}, 0, "--inspect-functions: loupe does not run the functions under the Node inspector"},
		{[]string{"emulators:exec", "--only", "firestore", "no-such-command-here"}, 127, "not found"},
		{[]string{"emulators:exec", "--only", "eventarc,firestore,functions:hello", "true"}, 0, "--only eventarc: not starting it"},
		{[]string{"emulators:exec", "true", "extra"}, 1, "too many arguments"},
		{[]string{"emulators:exec"}, 1, "missing the script"},
		{[]string{"emulators:exec", "--only", "nope", "true"}, 1, `--only: unknown service "nope"`},
		{[]string{"emulators:exec", "--log-verbosity", "LOUD", "true"}, 1, `--log-verbosity "LOUD"`},
		{[]string{"emulators:exec", "--inspect-functions", "80", "true"}, 1, `"80" is not a valid port for debugging`},
		{[]string{"emulators:exec", "--bogus", "true"}, 1, "unknown flag: --bogus"},
	} {
		code, out := loupeIn(t, dir, append(tc.args, "--port", "0")...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("loupe %q: exit %d, want %d and %q in\n%s", tc.args, code, tc.code, tc.out, out)
		}
	}
}

// TestEmulatorsStart_ExportsAsFirebaseTools: `--import d --export-on-exit`
// with no d yet starts empty and writes d at exit, and `loupe
// emulators:export DIR` finds a running `loupe emulators:start` through
// the hub's locator file, as firebase-tools' commands find each other;
// both write firebase-tools' layout.
func TestEmulatorsStart_ExportsAsFirebaseTools(t *testing.T) {
	dir := t.TempDir()
	code, out := loupeIn(t, dir, "emulators:exec", "--port", "0", "--only", "auth,firestore", "--import", "./data", "--export-on-exit",
		loupetest.Binary(t)+` app users create --email ada@example.com --password secret1 --emulator "$FIREBASE_AUTH_EMULATOR_HOST"`)
	if code != 0 {
		t.Fatalf("emulators:exec --import ./data --export-on-exit: exit %d\n%s", code, out)
	}
	for _, f := range []string{"firebase-export-metadata.json", "auth_export/accounts.json"} {
		if _, err := os.Stat(filepath.Join(dir, "data", f)); err != nil {
			t.Errorf("--export-on-exit wrote no %s: %v\n%s", f, err, out)
		}
	}

	if code, out := loupeIn(t, dir, "emulators:export", "-P", "demo-none", "out"); code != 1 || !strings.Contains(out, "did not find any running emulators for project demo-none") {
		t.Errorf("emulators:export with nothing running: exit %d, want 1\n%s", code, out)
	}
	report := startEmulators(t, dir, "--only", "auth,firestore", "--import", "data", "-P", "demo-x")
	for _, row := range []string{`(?m)^Emulator +Host:Port$`, `(?m)^Authentication +127\.0\.0\.1:\d+$`, `(?m)^Firestore +127\.0\.0\.1:\d+$`, `(?m)^Emulator Hub +127\.0\.0\.1:\d+$`} {
		if !regexp.MustCompile(row).MatchString(report) {
			t.Errorf("the start-up report has no row %s:\n%s", row, report)
		}
	}
	code, out = loupeIn(t, dir, "emulators:export", "-P", "demo-x", "out")
	if code != 0 || !strings.Contains(out, "Export complete") {
		t.Fatalf("emulators:export: exit %d\n%s", code, out)
	}
	if accounts, err := os.ReadFile(filepath.Join(dir, "out", "auth_export", "accounts.json")); err != nil || !strings.Contains(string(accounts), "ada@example.com") {
		t.Errorf("emulators:export wrote %s (%v)", accounts, err)
	}
	if code, out := loupeIn(t, dir, "emulators:export", "-P", "demo-x", "out"); code != 1 || !strings.Contains(out, "re-run with --force") {
		t.Errorf("emulators:export over an export: exit %d, want 1\n%s", code, out)
	}
	if code, out := loupeIn(t, dir, "emulators:export", "-P", "demo-x", "--force", "out"); code != 0 {
		t.Errorf("emulators:export --force over an export: exit %d\n%s", code, out)
	}
}

// startEmulators runs `loupe emulators:start --port 0 ARGS` in dir for the
// rest of the test and returns its start-up report once it says it is ready.
func startEmulators(t *testing.T, dir string, args ...string) string {
	t.Helper()
	start := exec.Command(loupetest.Binary(t), append([]string{"emulators:start", "--port", "0"}, args...)...)
	start.Dir = dir
	start.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir}
	stdout, err := start.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = start.Process.Kill(); _ = start.Wait() })
	report, ok := waitForLine(stdout, "All emulators ready! It is now safe to connect your app.")
	if !ok {
		t.Fatalf("emulators:start never said it was ready:\n%s", report)
	}
	return report
}

// waitForLine reads r until a line holds want, and returns what it read
// and true, or false when r ends first.
func waitForLine(r io.Reader, want string) (string, bool) {
	var read strings.Builder
	s := bufio.NewScanner(r)
	for s.Scan() {
		read.WriteString(s.Text() + "\n")
		if strings.Contains(s.Text(), want) {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return read.String(), true
		}
	}
	return read.String(), false
}

// TestEmulatorsStart_ServesEachHostingSite: a hosting array (sites and
// targets) is served as firebase-tools serves it: the first site on the
// hosting port, each other on a port of its own (the hosting port + 4 +
// its index, or the next free one), named in the start-up report; --only
// hosting:NAME serves that one.
func TestEmulatorsStart_ServesEachHostingSite(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"firebase.json": `{"hosting": [{"site": "shop", "public": "shop"}, {"target": "admin", "public": "admin",
			"rewrites": [{"source": "**", "destination": "/index.html"}]}], "emulators": {"hosting": {"port": 0}}}`,
		"shop/index.html":  "the shop",
		"admin/index.html": "the admin",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report := startEmulators(t, dir, "--only", "hosting", "-P", "demo-x")
	rows := map[string]string{}
	for _, title := range []string{"Hosting", `Hosting \(admin\)`} {
		m := regexp.MustCompile(`(?m)^` + title + ` +(127\.0\.0\.1:\d+)$`).FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("the start-up report has no row %s:\n%s", title, report)
		}
		rows[title] = m[1]
	}
	for title, want := range map[string]string{"Hosting": "the shop", `Hosting \(admin\)`: "the admin"} {
		for _, path := range []string{"/", "/deep/link"} {
			if body := getBody(t, "http://"+rows[title]+path); body != want {
				t.Errorf("%s GET %s = %q, want %q", title, path, body, want)
			}
		}
	}

	// --only hosting:NAME serves that site (or target) alone; a name that is none is firebase-tools' error.
	report = startEmulators(t, dir, "--only", "hosting:admin", "-P", "demo-x")
	m := regexp.MustCompile(`(?m)^Hosting +(127\.0\.0\.1:\d+)$`).FindStringSubmatch(report)
	if m == nil || strings.Contains(report, "Hosting (") {
		t.Fatalf("--only hosting:admin: the report should name one Hosting row:\n%s", report)
	}
	if body := getBody(t, "http://"+m[1]+"/"); body != "the admin" {
		t.Errorf("--only hosting:admin GET / = %q, want the admin site", body)
	}
	if code, out := loupeIn(t, dir, "emulators:exec", "--port", "0", "--only", "hosting:nope", "true"); code != 1 ||
		!strings.Contains(out, "Hosting site or target nope not detected in firebase.json") {
		t.Errorf("--only hosting:nope: exit %d, want 1 and firebase-tools' error\n%s", code, out)
	}
}

// getBody GETs url and returns the body.
func getBody(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return string(body)
}

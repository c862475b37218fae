package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// loupe runs the CLI against inst and returns exit code, stdout and stderr.
func loupe(t *testing.T, inst *loupetest.Instance, args ...string) (int, string, string) {
	t.Helper()
	if inst != nil {
		args = append(args, "--emulator", inst.Host)
	}
	cmd := exec.Command(loupetest.Binary(t), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func withDemo(t *testing.T) *loupetest.Instance {
	dir, _ := filepath.Abs("../../emulator-data")
	return loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", dir}})
}

func TestAdmin_Users(t *testing.T) {
	inst := withDemo(t)
	code, out, errOut := loupe(t, inst, "app", "users", "create", "--email", "new@loupe.dev", "--password", "secret1", "--name", "Nia New")
	m := regexp.MustCompile(`^created user (\S+) \(new@loupe.dev\)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("create: %d %q %q", code, out, errOut)
	}
	uid := m[1]
	for _, tc := range []struct {
		args               []string
		wantCode           int
		wantOut, wantError string
	}{
		{[]string{"app", "users", "set-role", uid, "admin"}, 0, "role of " + uid + " is now admin\n", ""},
		{[]string{"app", "users", "set-mentor", "user-sam", "true"}, 0, "user-sam is now a mentor\n", ""},
		{[]string{"app", "users", "disable", "user-alex"}, 0, "disabled user-alex\n", ""},
		{[]string{"app", "users", "get", "user-alex"}, 0, "uid:      user-alex\nemail:    alex@loupe.dev\nname:     Alex Kim\nrole:     user\nmentor:   false\ndisabled: true\n", ""},
		{[]string{"app", "users", "enable", "user-alex"}, 0, "enabled user-alex\n", ""},
		{[]string{"app", "users", "get", "nobody"}, 1, "", "loupe: user not found: nobody\n"},
		{[]string{"app", "users", "set-mentor", "user-sam", "maybe"}, 2, "", "loupe: set-mentor takes true or false, not \"maybe\"\n"},
		{[]string{"app", "users", "get"}, 2, "", "loupe: usage: loupe app users get UID [flags]\n"},
		{[]string{"app", "users", "create", "--email", "x@loupe.dev"}, 2, "", "loupe: users create needs --email and --password\n"},
	} {
		code, out, errOut := loupe(t, inst, tc.args...)
		out = regexp.MustCompile(`(?m)^created: .*\n`).ReplaceAllString(out, "")
		if code != tc.wantCode || out != tc.wantOut || errOut != tc.wantError {
			t.Errorf("loupe %v = %d %q %q; want %d %q %q", tc.args, code, out, errOut, tc.wantCode, tc.wantOut, tc.wantError)
		}
	}
	_, out, _ = loupe(t, inst, "app", "users", "list")
	for _, row := range []string{
		`\AUID +EMAIL +NAME +ROLE +MENTOR +DISABLED$`,
		`^` + uid + ` +new@loupe.dev +Nia New +admin +true +false$`,
		`^mentor-maya +maya@loupe.dev +Maya Chen +user +true +false$`,
		`^user-alex +alex@loupe.dev +Alex Kim +user +false +false$`,
	} {
		if !regexp.MustCompile(`(?m)` + row).MatchString(out) {
			t.Errorf("users list has no row %s:\n%s", row, out)
		}
	}
	_, out, _ = loupe(t, inst, "app", "users", "list", "--json")
	var users []map[string]any
	if err := json.Unmarshal([]byte(out), &users); err != nil || len(users) != 8 {
		t.Errorf("users list --json: %d users, %v\n%s", len(users), err, out)
	}
	_, tok := loupetest.Post(t, inst.URL+"/emulator/v1/projects/demo-loupe/messaging/tokens", "", "")
	if code, _, errOut := loupe(t, nil, "app", "users", "list", "--emulator", inst.Host); code != 0 {
		t.Fatal(errOut)
	}
	setToken := `{"writes":[{"update":{"name":"projects/demo-loupe/databases/(default)/documents/users/user-sam","fields":{"fcmToken":{"stringValue":"` + fmt.Sprint(tok["token"]) + `"}}},"updateMask":{"fieldPaths":["fcmToken"]}}]}`
	if code, err := loupetest.RESTCommit(context.Background(), inst.URL, "projects/demo-loupe/databases/(default)", "owner", setToken, nil); err != nil || code != 200 {
		t.Fatalf("set user-sam's push token: %d %v", code, err)
	}
	code, out, errOut = loupe(t, inst, "app", "notify", "user-sam", "--title", "Hello", "--message", "From the CLI", "--link", "/notifications")
	if code != 0 || !regexp.MustCompile(`^notified user-sam \(\w+\), pushed\n$`).MatchString(out) {
		t.Errorf("notify: %d %q %q", code, out, errOut)
	}
	code, out, _ = loupe(t, inst, "messages", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^SENT +TO +TITLE +BODY\n.* +Hello +From the CLI$`).MatchString(out) {
		t.Errorf("messages list: %d\n%s", code, out)
	}
	if code, _, errOut := loupe(t, inst, "app", "notify", "nobody", "--title", "x", "--message", "y"); code != 1 || errOut != "loupe: user not found: nobody\n" {
		t.Errorf("notify nobody: %d %q", code, errOut)
	}
	if code, _ := loupetest.Post(t, inst.URL+loupetest.IdentityToolkit+"sendOobCode?key=k", "", `{"requestType":"PASSWORD_RESET","email":"sam@loupe.dev"}`); code != 200 {
		t.Fatalf("sendOobCode: %d", code)
	}
	code, out, _ = loupe(t, inst, "mail", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^TO +TYPE +LINK\nsam@loupe.dev +PASSWORD_RESET +http://.*/emulator/action\?mode=resetPassword`).MatchString(out) {
		t.Errorf("mail list: %d\n%s", code, out)
	}
	if code, _, _ := loupe(t, inst, "app", "users", "delete", uid); code != 0 {
		t.Errorf("delete: %d", code)
	}
}

func TestAdmin_CategoriesRequestsAndData(t *testing.T) {
	inst := withDemo(t)
	for _, tc := range []struct {
		args               []string
		wantCode           int
		wantOut, wantError string
	}{
		{[]string{"app", "categories", "add", "Video Games", "--emoji", "🎮"}, 0, "added category video-games\n", ""},
		{[]string{"app", "categories", "add", "Video Games"}, 1, "", "loupe: category already exists: video-games\n"},
		{[]string{"app", "categories", "remove", "design"}, 0, "removed category design\n", ""},
		{[]string{"app", "categories", "remove", "nope"}, 1, "", "loupe: category not found: nope\n"},
		{[]string{"app", "categories", "list"}, 0, "ID               EMOJI  NAME\ndance            💃      Dance\nfilmmaking       🎬      Filmmaking\nmusic            🎸      Music\npublic-speaking  🎤      Public speaking\nsports           🏀      Sports\nvideo-games      🎮      Video Games\n", ""},
		{[]string{"app", "requests", "get", "nope"}, 1, "", "loupe: request not found: nope\n"},
	} {
		code, out, errOut := loupe(t, inst, tc.args...)
		if code != tc.wantCode || out != tc.wantOut || errOut != tc.wantError {
			t.Errorf("loupe %v = %d %q %q; want %d %q %q", tc.args, code, out, errOut, tc.wantCode, tc.wantOut, tc.wantError)
		}
	}
	_, out, _ := loupe(t, inst, "app", "categories", "list", "--json")
	if !strings.HasPrefix(out, "[\n  {\n    \"id\": \"dance\",\n    \"name\": \"Dance\",\n    \"emoji\": \"💃\"\n  },") {
		t.Errorf("categories list --json:\n%s", out)
	}
	code, out, _ := loupe(t, inst, "app", "requests", "list", "--status", "accepted")
	if code != 0 || !strings.Contains(out, "req-autumn-leaves  accepted  Sam Taylor  Maya Chen  Solo on Autumn Leaves: is my timing rushed?") {
		t.Errorf("requests list:\n%s", out)
	}
	_, out, _ = loupe(t, inst, "app", "requests", "list", "--user", "user-alex", "--json")
	var reqs []map[string]any
	if err := json.Unmarshal([]byte(out), &reqs); err != nil || len(reqs) != 2 || reqs[0]["id"] != "req-seed-pitch" || reqs[1]["id"] != "req-investor-update" {
		t.Errorf("requests for alex: %v %s", err, out)
	}
	_, out, _ = loupe(t, inst, "app", "requests", "get", "req-autumn-leaves")
	if !strings.Contains(out, "comments:  6\n") || !strings.Contains(out, "mentor:    Maya Chen (mentor-maya)\n") {
		t.Errorf("requests get:\n%s", out)
	}
	dir := filepath.Join(t.TempDir(), "export")
	if code, out, _ := loupe(t, inst, "data", "export", dir); code != 0 || out != "exported to "+dir+"\n" {
		t.Errorf("data export: %d %q", code, out)
	}
	if code, _, errOut := loupe(t, inst, "data", "import", filepath.Join(dir, "missing")); code != 1 || !strings.Contains(errOut, "is not a folder") {
		t.Errorf("data import of a missing folder: %d %q", code, errOut)
	}
}

func TestAdmin_RulesCheck(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.rules")
	if err := os.WriteFile(bad, []byte("service cloud.firestore {\n  match /a {\n    allow read: if ;\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args               []string
		wantCode           int
		wantOut, wantError string
	}{
		{[]string{"rules", "check", "../../firestore.rules"}, 0, "../../firestore.rules: rules_version 2, service firestore: ok\n", ""},
		{[]string{"rules", "check", "../../storage.rules"}, 0, "../../storage.rules: rules_version 2, service storage: ok\n", ""},
		{[]string{"rules", "check", bad}, 1, "", "loupe: " + bad + ":3:20: Unexpected ';'.\n"},
		{[]string{"rules", "check"}, 2, "", "loupe: usage: loupe rules check FILE [flags]\n"},
	} {
		code, out, errOut := loupe(t, nil, tc.args...)
		if code != tc.wantCode || out != tc.wantOut || errOut != tc.wantError {
			t.Errorf("loupe %v = %d %q %q; want %d %q %q", tc.args, code, out, errOut, tc.wantCode, tc.wantOut, tc.wantError)
		}
	}
}

func TestAdmin_Targeting(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantCode  int
		wantError string
	}{
		{[]string{"app", "users", "list", "--emulator", "127.0.0.1:1"}, 1, "loupe: cannot reach the emulator at 127.0.0.1:1\n"},
		{[]string{"app", "users", "list"}, 1, "loupe: no credentials: pass --emulator HOST:PORT for a local loupe, or run `gcloud auth application-default login` for production\n"},
		{[]string{"data", "export", "x"}, 2, "loupe: data export needs a running loupe: pass --emulator HOST:PORT\n"},
	} {
		code, _, errOut := loupe(t, nil, tc.args...)
		if code != tc.wantCode || errOut != tc.wantError {
			t.Errorf("loupe %v = %d %q; want %d %q", tc.args, code, errOut, tc.wantCode, tc.wantError)
		}
	}
}

// TestAdmin_JSONForms checks that the commands' --json output is JSON
// carrying the fields scripts rely on (keys compared in sorted order).
func TestAdmin_JSONForms(t *testing.T) {
	inst := withDemo(t)
	for _, tc := range []struct {
		args []string
		want string // a fragment of the compact JSON
	}{
		{[]string{"app", "users", "get", "user-alex", "--json"}, `"disabled":false,"displayName":"Alex Kim","email":"alex@loupe.dev","isMentor":false,"role":"user","uid":"user-alex"`},
		{[]string{"app", "users", "list", "--json"}, `"uid":"mentor-aisha"`},
		{[]string{"app", "users", "set-role", "user-sam", "editor", "--json"}, `{"role":"editor","uid":"user-sam"}`},
		{[]string{"app", "users", "set-mentor", "user-sam", "false", "--json"}, `{"isMentor":false,"uid":"user-sam"}`},
		{[]string{"app", "users", "disable", "user-sam", "--json"}, `{"disabled":true,"uid":"user-sam"}`},
		{[]string{"app", "categories", "list", "--json"}, `{"emoji":"🎸","id":"music","name":"Music"}`},
		{[]string{"app", "categories", "add", "Chess", "--json"}, `{"id":"chess","name":"Chess"}`},
		{[]string{"app", "categories", "remove", "chess", "--json"}, `{"id":"chess","removed":true}`},
		{[]string{"app", "requests", "list", "--json"}, `"id":"req-seed-pitch","mentorId":"mentor-priya","mentorName":"Priya Raman","paymentStatus":"unpaid","requesterId":"user-alex","requesterName":"Alex Kim","status":"pending","title":"Seed pitch rehearsal"`},
		{[]string{"app", "requests", "get", "req-autumn-leaves", "--json"}, `"mentorName":"Maya Chen"`},
		{[]string{"app", "requests", "get", "req-autumn-leaves", "--json"}, `"comments":6`},
		{[]string{"mail", "list", "--json"}, `[]`},
		{[]string{"messages", "list", "--json"}, `[]`},
	} {
		code, out, errOut := loupe(t, inst, tc.args...)
		var v any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Errorf("loupe %v: exit %d, not JSON: %q %q", tc.args, code, out, errOut)
			continue
		}
		compact, _ := json.Marshal(v)
		if !strings.Contains(string(compact), tc.want) {
			t.Errorf("loupe %v --json = %s, want it to contain %s", tc.args, compact, tc.want)
		}
	}
}

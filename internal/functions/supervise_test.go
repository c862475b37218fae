package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// fnState is GET /emulator/v1/functions.
type fnState struct {
	State, Detail, URL string
	Exit               *struct {
		At     time.Time
		Code   *int
		Signal string
	}
	Restarts  int
	RestartAt *time.Time
	Build     struct {
		State string
		At    time.Time
	}
}

// startTiny copies testdata/tiny (a functions module with one trigger,
// notes/{n}, and GET /api/version, which hosting rewrites to) into a
// temporary folder, lets prepare (if not nil) change it,
// runs loupe serve on it with env, and returns the instance and the copy's
// folder.
func startTiny(t *testing.T, prepare func(dir string), env ...string) (*loupetest.Instance, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "functions")
	if err := os.CopyFS(dir, os.DirFS("testdata/tiny")); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(dir)
	}
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	data, _ := json.Marshal(map[string]any{"functions": map[string]string{"source": dir},
		"hosting": map[string]any{"rewrites": []map[string]any{{"source": "/api/**", "run": map[string]string{"serviceId": "tiny"}}}}})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return loupetest.Start(t, loupetest.Options{Process: true, InMemory: true, Config: cfg, Env: env}), dir
}

// waitState polls the functions state until cond holds (a minute at most:
// a build on a busy machine can be slow).
func waitState(t *testing.T, inst *loupetest.Instance, what string, cond func(fnState) bool) fnState {
	t.Helper()
	var st fnState
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		st = fnState{}
		if resp, err := http.Get(inst.URL + "/emulator/v1/functions"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; functions: %+v", what, st)
		}
	}
}

func running(st fnState) bool { return st.State == "running" }

// note writes notes/id over Firestore's REST API as the owner.
func note(t *testing.T, inst *loupetest.Instance, id string) {
	t.Helper()
	body := map[string]any{"writes": []any{map[string]any{"update": map[string]any{
		"name":   "projects/demo-loupe/databases/(default)/documents/notes/" + id,
		"fields": map[string]any{"at": map[string]any{"stringValue": time.Now().String()}},
	}}}}
	if code, err := loupetest.RESTCommit(context.Background(), inst.URL, "projects/demo-loupe/databases/(default)", "owner", body, nil); err != nil || code != 200 {
		t.Fatalf("commit notes/%s: %d %v", id, code, err)
	}
}

// attempts lists the delivery attempts of notes/id.
func attempts(t *testing.T, inst *loupetest.Instance, id string) []triggers.Attempt {
	t.Helper()
	var out struct{ Events []triggers.Attempt }
	resp, err := http.Get(inst.URL + "/emulator/v1/functions/events?document=notes/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Events
}

func delivered(as []triggers.Attempt) bool { return len(as) > 0 && as[len(as)-1].Delivered }

// version is what GET /api/version answers through loupe's hosting rewrite.
func version(t *testing.T, inst *loupetest.Instance) (int, string) {
	t.Helper()
	resp, err := http.Get(inst.URL + "/api/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// logLines is the functions log as GET /emulator/v1/functions/logs has it,
// one "stream: text" a line.
func logLines(t *testing.T, inst *loupetest.Instance) string {
	t.Helper()
	var out struct {
		Lines []struct{ Stream, Text string }
	}
	resp, err := http.Get(inst.URL + "/emulator/v1/functions/logs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&out)
	var b strings.Builder
	for _, l := range out.Lines {
		fmt.Fprintf(&b, "%s: %s\n", l.Stream, l.Text)
	}
	return b.String()
}

// TestSupervise_CrashedProcessIsReportedAndRestarted: a functions process
// that panics during a delivery, then one killed with SIGKILL from outside,
// is noticed at once: the state says exited with the exit code or signal,
// loupe's log says so with the panic, the delivery in flight fails with that
// reason and is retried into the restarted process, and an event committed
// while the process is down fails the same way until the restart (1 s, then
// 2 s: the backoff doubles while the process does not stay up).
func TestSupervise_CrashedProcessIsReportedAndRestarted(t *testing.T) {
	t.Parallel()
	inst, _ := startTiny(t, nil, "TINY_MARKER="+filepath.Join(t.TempDir(), "panicked"))
	first := waitState(t, inst, "the first process", running)

	note(t, inst, "panic")
	down := waitState(t, inst, "the exit after the panic", func(st fnState) bool { return st.State != "running" })
	if down.State != "exited" || down.Exit == nil || down.Exit.Code == nil || *down.Exit.Code != 2 || down.URL != "" ||
		down.RestartAt == nil || down.RestartAt.Sub(down.Exit.At) != time.Second {
		t.Errorf("after the panic: %+v, want exited with code 2 and a restart 1s later", down)
	}
	second := waitState(t, inst, "the restart", func(st fnState) bool { return running(st) && st.Restarts == 1 })
	if second.URL == first.URL || second.Exit == nil || *second.Exit.Code != 2 {
		t.Errorf("after the restart: %+v, want a new URL and the exit kept", second)
	}
	loupetest.Eventually(t, "notes/panic delivered to the restarted process", func() bool { return delivered(attempts(t, inst, "panic")) })
	if as := attempts(t, inst, "panic"); as[0].Delivered || !strings.Contains(as[0].Error, "the functions process exited (exit status 2); loupe restarts it at ") {
		t.Errorf("first attempt of notes/panic = %+v, want it failed with the exit", as[0])
	}
	if log := inst.Log(); !strings.Contains(log, "the functions process exited (exit status 2); loupe restarts it") ||
		!strings.Contains(log, `panic: boom on notes/panic`) {
		t.Errorf("loupe's log does not tell the exit with the panic:\n%s", log)
	}
	if lines := logLines(t, inst); !strings.Contains(lines, "stderr: panic: boom on notes/panic") ||
		!strings.Contains(lines, "loupe: the functions process exited (exit status 2) at ") ||
		strings.Count(lines, "stdout: v1 got notes/panic") != 2 {
		t.Errorf("functions log:\n%s", lines)
	}

	// kill -9 from outside.
	if err := syscall.Kill(functionsChild(t, inst.PID()), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	down = waitState(t, inst, "the exit after SIGKILL", func(st fnState) bool { return st.State != "running" })
	if down.State != "exited" || down.Exit.Signal != "SIGKILL" || down.Exit.Code != nil || down.RestartAt.Sub(down.Exit.At) != 2*time.Second {
		t.Errorf("after kill -9: %+v, want exited by SIGKILL and a restart 2s later", down)
	}
	if code, _ := version(t, inst); code != http.StatusBadGateway {
		t.Errorf("a hosting rewrite to the functions while they are down = %d, want 502", code)
	}
	out, err := exec.Command(loupetest.Binary(t), "functions", "status", "--emulator", inst.Host).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "exited") || !strings.Contains(string(out), "SIGKILL at ") ||
		!strings.Contains(string(out), "the functions process exited (signal: killed) at ") {
		t.Errorf("loupe functions status while down: %v\n%s", err, out)
	}
	note(t, inst, "while-down")
	waitState(t, inst, "the second restart", func(st fnState) bool { return running(st) && st.Restarts == 2 })
	loupetest.Eventually(t, "notes/while-down delivered after the restart", func() bool { return delivered(attempts(t, inst, "while-down")) })
	if as := attempts(t, inst, "while-down"); as[0].Delivered || as[0].Duration > time.Second ||
		!strings.Contains(as[0].Error, "the functions process exited (signal: killed); loupe restarts it at ") {
		t.Errorf("first attempt of an event committed while down = %+v, want it failed at once with the exit", as[0])
	}
}

// flagFile creates an empty file named name in a new temporary folder and
// returns its path.
func flagFile(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSupervise_CrashLoopBacksOff: a process that exits at every start is
// restarted after 1 s, 2 s, 4 s (not in a busy loop), each exit shown with
// its status and its last words; once the cause is gone it runs.
func TestSupervise_CrashLoopBacksOff(t *testing.T) {
	t.Parallel()
	crash := flagFile(t, "crash")
	inst, _ := startTiny(t, nil, "TINY_CRASH="+crash)
	st := waitState(t, inst, "three exits", func(st fnState) bool { return st.Restarts == 3 })
	if st.State != "exited" || st.Exit == nil || st.Exit.Code == nil || *st.Exit.Code != 1 || st.RestartAt.Sub(st.Exit.At) != 4*time.Second {
		t.Errorf("after three exits: %+v, want exited with code 1 and the next restart 4s later", st)
	}
	lines := logLines(t, inst)
	for i, delay := range []string{"1s", "2s", "4s"} {
		if want := fmt.Sprintf("it exited (exit status 1) before it listened at %%s; restart %d in %s", i+1, delay); !containsPattern(lines, want) {
			t.Errorf("functions log lacks %q:\n%s", want, lines)
		}
	}
	if log := inst.Log(); !strings.Contains(log, "crashing at start: "+crash+" exists") {
		t.Errorf("loupe's log does not repeat the process's last words:\n%s", log)
	}
	if err := os.Remove(crash); err != nil {
		t.Fatal(err)
	}
	waitState(t, inst, "running once the crash is gone", running)
}

// containsPattern reports whether s has a line matching format, with %s
// standing for any run of non-space characters.
func containsPattern(s, format string) bool {
	before, after, _ := strings.Cut(format, "%s")
	for _, line := range strings.Split(s, "\n") {
		i := strings.Index(line, before)
		if i >= 0 && strings.Contains(line[i+len(before):], after) {
			return true
		}
	}
	return false
}

// setVersion rewrites the tiny module's version constant (to any Go
// expression, broken ones included).
func setVersion(t *testing.T, dir, expr string) {
	t.Helper()
	file := filepath.Join(dir, "cmd", "functions", "main.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(src), "const version = ")
	j := i + strings.IndexByte(string(src[i:]), '\n')
	if err := os.WriteFile(file, []byte(string(src[:i])+"const version = "+expr+string(src[j:])), fs.FileMode(0o644)); err != nil {
		t.Fatal(err)
	}
}

// gone reports whether the process pid has exited (a zombie counts).
func gone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || strings.Contains(string(stat), ") Z ")
}

// TestSupervise_SourceChangeIsRebuiltAndSwappedIn: an edit to a handler is
// built and its process takes over the deliveries (the old one then goes); an
// edit that does not compile leaves the running process serving, with the
// compiler's error in the state, the functions log and loupe's log; the next
// good edit is swapped in.
func TestSupervise_SourceChangeIsRebuiltAndSwappedIn(t *testing.T) {
	t.Parallel()
	inst, dir := startTiny(t, nil)
	v1 := waitState(t, inst, "the first process", running)
	old := functionsChild(t, inst.PID())
	note(t, inst, "a")
	loupetest.Eventually(t, "notes/a delivered", func() bool { return delivered(attempts(t, inst, "a")) })

	setVersion(t, dir, `"v2"`)
	v2 := waitState(t, inst, "the rebuilt process", func(st fnState) bool { return running(st) && st.URL != v1.URL })
	if v2.Build.State != "ok" || !v2.Build.At.After(v1.Build.At) || v2.Restarts != 0 {
		t.Errorf("after the rebuild: %+v", v2)
	}
	if code, body := version(t, inst); code != 200 || body != "v2" {
		t.Errorf("GET /api/version after the rebuild = %d %q, want v2", code, body)
	}
	note(t, inst, "b")
	loupetest.Eventually(t, "notes/b delivered", func() bool { return delivered(attempts(t, inst, "b")) })
	loupetest.Eventually(t, "the replaced process gone", func() bool { return gone(old) })

	setVersion(t, dir, `v2 +`)
	broken := waitState(t, inst, "the failed rebuild", func(st fnState) bool { return st.Build.State == "failed" })
	if broken.State != "running" || broken.URL != v2.URL || !strings.Contains(broken.Detail, "main.go:") {
		t.Errorf("after a broken edit: %+v, want the v2 process running and the compiler's error", broken)
	}
	if code, body := version(t, inst); code != 200 || body != "v2" {
		t.Errorf("GET /api/version after a broken edit = %d %q, want v2 still", code, body)
	}
	note(t, inst, "c")
	loupetest.Eventually(t, "notes/c delivered", func() bool { return delivered(attempts(t, inst, "c")) })
	if log := inst.Log(); !strings.Contains(log, "functions not rebuilt; the previous build keeps running") || !strings.Contains(log, "main.go:") {
		t.Errorf("loupe's log does not tell the failed rebuild:\n%s", log)
	}
	out, err := exec.Command(loupetest.Binary(t), "functions", "status", "--emulator", inst.Host).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "running") || !strings.Contains(string(out), "failed") || !strings.Contains(string(out), "main.go:") {
		t.Errorf("loupe functions status after a broken edit: %v\n%s", err, out)
	}

	setVersion(t, dir, `"v3"`)
	waitState(t, inst, "the fixed rebuild", func(st fnState) bool { return running(st) && st.Build.State == "ok" && st.URL != v2.URL })
	note(t, inst, "d")
	loupetest.Eventually(t, "notes/d delivered", func() bool { return delivered(attempts(t, inst, "d")) })
	lines := logLines(t, inst)
	for _, want := range []string{"stdout: v1 got notes/a", "stdout: v2 got notes/b", "stdout: v2 got notes/c", "stdout: v3 got notes/d", "loupe: cmd/functions/main.go:"} {
		if !strings.Contains(lines, want) {
			t.Errorf("functions log lacks %q:\n%s", want, lines)
		}
	}
}

// TestSupervise_RewriteUnderWayAtASwapFinishesOnTheOldProcess: a hosting
// rewrite request the old process is serving when an edit is swapped in
// gets the old handler's answer (the old process is stopped only once it is
// done, as the official emulator lets a busy worker finish), while requests
// made after the swap already get the new one; then the old process goes.
func TestSupervise_RewriteUnderWayAtASwapFinishesOnTheOldProcess(t *testing.T) {
	t.Parallel()
	hold := flagFile(t, "hold")
	inst, dir := startTiny(t, nil, "TINY_HOLD="+hold)
	v1 := waitState(t, inst, "the first process", running)
	old := functionsChild(t, inst.PID())

	type answer struct {
		code int
		body string
		err  error
	}
	slow := make(chan answer, 1)
	go func() {
		resp, err := http.Get(inst.URL + "/api/slow")
		if err != nil {
			slow <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		slow <- answer{resp.StatusCode, string(body), err}
	}()
	loupetest.Eventually(t, "the slow request under way in the v1 process", func() bool {
		return strings.Contains(logLines(t, inst), "stdout: v1 slow request")
	})

	setVersion(t, dir, `"v2"`)
	waitState(t, inst, "the rebuilt process", func(st fnState) bool { return running(st) && st.URL != v1.URL })
	if code, body := version(t, inst); code != 200 || body != "v2" {
		t.Errorf("GET /api/version after the swap = %d %q, want v2 from the new process", code, body)
	}
	select {
	case a := <-slow:
		t.Fatalf("the slow request ended before its handler did: %d %q %v", a.code, a.body, a.err)
	default:
	}

	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	if a := <-slow; a.err != nil || a.code != 200 || a.body != "v1" {
		t.Errorf("the slow request started before the swap = %d %q %v, want 200 \"v1\" from the old process", a.code, a.body, a.err)
	}
	loupetest.Eventually(t, "the replaced process gone once its request is done", func() bool { return gone(old) })
}

// TestSupervise_FailedFirstBuildIsBuiltAgainOnChange: functions whose
// source does not compile at start are failed, with the compiler's error;
// fixing the source starts them.
func TestSupervise_FailedFirstBuildIsBuiltAgainOnChange(t *testing.T) {
	t.Parallel()
	inst, dir := startTiny(t, func(dir string) { setVersion(t, dir, "undefinedName") })
	st := waitState(t, inst, "the failed build", func(st fnState) bool { return st.State != "building" })
	if st.State != "failed" || st.Build.State != "failed" || !strings.Contains(st.Detail, "undefined: undefinedName") {
		t.Errorf("with a broken source: %+v, want failed with the compiler's error", st)
	}
	setVersion(t, dir, `"fixed"`)
	waitState(t, inst, "running once fixed", running)
	note(t, inst, "a")
	loupetest.Eventually(t, "notes/a delivered", func() bool { return delivered(attempts(t, inst, "a")) })
	if lines := logLines(t, inst); !strings.Contains(lines, "stdout: fixed got notes/a") {
		t.Errorf("functions log:\n%s", lines)
	}
}

// TestSupervise_ExitDuringARebuildIsToldAtOnce: a process killed while a
// source change is being built is reported exited at once, not when the
// build ends, and is restarted from the new build. A go on PATH that waits
// while a file exists holds the build.
func TestSupervise_ExitDuringARebuildIsToldAtOnce(t *testing.T) {
	t.Parallel()
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin, hold := t.TempDir(), filepath.Join(t.TempDir(), "hold")
	script := "#!/bin/sh\nwhile [ -e " + hold + " ]; do sleep 0.05; done\nexec " + realGo + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	inst, dir := startTiny(t, nil, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	waitState(t, inst, "the first process", running)
	child := functionsChild(t, inst.PID())
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	setVersion(t, dir, `"v2"`)
	waitState(t, inst, "the rebuild under way", func(st fnState) bool { return st.Build.State == "building" })
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, inst, "the exit", func(st fnState) bool { return st.State != "running" })
	if st.State != "exited" || st.Exit == nil || st.Exit.Signal != "SIGKILL" || st.Build.State != "building" {
		t.Errorf("killed during a rebuild: %+v, want exited by SIGKILL while the build is under way", st)
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	waitState(t, inst, "the restart", func(st fnState) bool { return running(st) && st.Restarts == 1 })
	if code, body := version(t, inst); code != 200 || body != "v2" {
		t.Errorf("GET /api/version after the restart = %d %q, want the new build's v2", code, body)
	}
}

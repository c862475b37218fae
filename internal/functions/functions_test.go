package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// startWithFunctions runs loupe serve with the repository's functions module
// and waits until the functions process runs.
func startWithFunctions(t testing.TB, env ...string) (*loupetest.Instance, string) {
	t.Helper()
	inst := loupetest.Start(t, loupetest.Options{Process: true, InMemory: true, Config: functionsConfig(t), Env: env})
	return inst, loupetest.WaitForFunctions(t, inst)
}

// adminClient returns a Go Admin SDK Firestore client of inst, closed when
// the test ends.
func adminClient(t *testing.T, inst *loupetest.Instance) *firestore.Client {
	t.Helper()
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	db, err := firestore.NewClient(context.Background(), "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// functionsConfig writes a firebase.json naming the repository's functions
// module and firebase.json's rewrites to it.
func functionsConfig(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	source := filepath.Join(filepath.Dir(file), "..", "..", "functions")
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	data, _ := json.Marshal(map[string]any{
		"functions": map[string]string{"source": source},
		"hosting": map[string]any{"rewrites": []map[string]any{
			{"source": "/api/rates/**", "run": map[string]string{"serviceId": "rates"}},
			{"source": "/api/payments/**", "run": map[string]string{"serviceId": "payments"}},
		}},
	})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestFunctions_ExecWaitsForTheFunctions: loupe exec runs its command once
// the functions process runs, as firebase emulators:exec waits for the
// functions emulator.
func TestFunctions_ExecWaitsForTheFunctions(t *testing.T) {
	t.Parallel()
	bin := loupetest.Binary(t)
	cmd := exec.Command(bin, "exec", "--config", functionsConfig(t), "--", bin, "functions", "status", "--json")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"state": "running"`) {
		t.Errorf("loupe exec -- loupe functions status: %v\n%s", err, out)
	}
}

// getJSON fetches target and returns its status and decoded body.
func getJSON(target string) (int, map[string]any) {
	resp, err := http.Get(target)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestFunctions_TriggersCountersFanOutAndRates(t *testing.T) {
	ctx := context.Background()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"base": "USD", "rates": map[string]float64{"EUR": 0.92}})
	}))
	defer upstream.Close()
	inst, fnURL := startWithFunctions(t, "RATES_UPSTREAM_URL="+upstream.URL+"/v4/latest/")
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	db, err := firestore.NewClient(ctx, "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// Maya has a push token (from loupe's FCM stand-in); Sam's is stale.
	_, tok := loupetest.Post(t, inst.URL+"/emulator/v1/projects/demo-loupe/messaging/tokens", "", "")
	if _, err := db.Collection("users").Doc("maya").Set(ctx, map[string]any{"name": "Maya Chen", "fcmToken": tok["token"]}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("users").Doc("sam").Set(ctx, map[string]any{"name": "Sam Taylor", "fcmToken": "stale-token"}); err != nil {
		t.Fatal(err)
	}

	req := db.Collection("feedbackRequests").Doc("r1")
	if _, err := req.Set(ctx, map[string]any{"requesterId": "sam", "requesterName": "Sam Taylor", "mentorId": "maya",
		"mentorName": "Maya Chen", "title": "My solo", "status": "pending"}); err != nil {
		t.Fatal(err)
	}
	notes := func(user, kind string) int {
		snaps, _ := db.Collection("notifications").Where("userId", "==", user).Where("type", "==", kind).Documents(ctx).GetAll()
		return len(snaps)
	}
	loupetest.Eventually(t, "the mentor's feedback_request notification", func() bool { return notes("maya", "feedback_request") == 1 })
	loupetest.Eventually(t, "the push to the mentor", func() bool {
		resp, err := http.Get(inst.URL + "/emulator/v1/projects/demo-loupe/messaging/messages")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var inbox struct{ Messages []struct{ Token string } }
		_ = json.NewDecoder(resp.Body).Decode(&inbox)
		return len(inbox.Messages) == 1 && inbox.Messages[0].Token == tok["token"]
	})

	comments := req.Collection("comments")
	top := map[string]any{"userId": "maya", "content": "Timing rushes at 0:03", "isReply": false, "deleted": false, "repliesCount": 0}
	if _, err := comments.Doc("c1").Set(ctx, top); err != nil {
		t.Fatal(err)
	}
	loupetest.Eventually(t, "the requester's feedback_received notification", func() bool { return notes("sam", "feedback_received") == 1 })
	loupetest.Eventually(t, "the stale token removed from the profile", func() bool {
		s, err := db.Collection("users").Doc("sam").Get(ctx)
		return err == nil && s.Data()["fcmToken"] == nil
	})
	for i := 1; i <= 3; i++ {
		reply := map[string]any{"userId": "sam", "content": fmt.Sprint("reply ", i), "isReply": true, "parentCommentId": "c1", "deleted": false, "repliesCount": 0}
		if _, err := comments.Doc(fmt.Sprint("r", i)).Set(ctx, reply); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int64 {
		s, err := comments.Doc("c1").Get(ctx)
		if err != nil {
			return -1
		}
		n, _ := s.DataAt("repliesCount")
		v, _ := n.(int64)
		return v
	}
	loupetest.Eventually(t, "repliesCount 3", func() bool { return count() == 3 })
	if _, err := comments.Doc("r2").Update(ctx, []firestore.Update{{Path: "deleted", Value: true}, {Path: "content", Value: "[Deleted]"}}); err != nil {
		t.Fatal(err)
	}
	loupetest.Eventually(t, "repliesCount 2", func() bool { return count() == 2 })

	// The same event delivered twice changes the count once.
	body := `{"oldValue":{"name":"projects/demo-loupe/databases/(default)/documents/feedbackRequests/r1/comments/r3","fields":{"isReply":{"booleanValue":true},"parentCommentId":{"stringValue":"c1"},"deleted":{"booleanValue":false}}},` +
		`"value":{"name":"projects/demo-loupe/databases/(default)/documents/feedbackRequests/r1/comments/r3","fields":{"isReply":{"booleanValue":true},"parentCommentId":{"stringValue":"c1"},"deleted":{"booleanValue":true}}}}`
	for range 2 {
		r, _ := http.NewRequest("POST", fnURL+"/events/comment-counters", bytes.NewReader([]byte(body)))
		for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": "redelivered-1", "ce-type": "google.cloud.firestore.document.v1.written",
			"ce-source": "//firestore.googleapis.com/projects/demo-loupe/databases/(default)", "Content-Type": "application/json"} {
			r.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("delivery: %d", resp.StatusCode)
		}
	}
	if n := count(); n != 1 {
		t.Errorf("after one event delivered twice: repliesCount %d, want 1", n)
	}

	// The Emulator Hub's switches, as withFunctionTriggersDisabled uses them:
	// a reply written while triggers are off is never counted.
	hubPut := func(path string) {
		r, _ := http.NewRequest(http.MethodPut, inst.URL+path, nil)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("PUT %s: HTTP %d", path, resp.StatusCode)
		}
	}
	reply := func(id string) {
		r := map[string]any{"userId": "sam", "content": id, "isReply": true, "parentCommentId": "c1", "deleted": false, "repliesCount": 0}
		if _, err := comments.Doc(id).Set(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	hubPut("/functions/disableBackgroundTriggers")
	reply("while-off")
	hubPut("/functions/enableBackgroundTriggers")
	reply("after-on")
	loupetest.Eventually(t, "the reply written after enabling counted", func() bool { return count() == 2 })
	if code, out := getJSON(inst.URL + "/emulator/v1/functions/events?document=feedbackRequests/r1/comments/while-off"); code != 200 || len(out["events"].([]any)) != 0 {
		t.Errorf("deliveries of the reply written while triggers were off: %d %v, want none", code, out["events"])
	}

	// The delivery log, through the CLI.
	cli := exec.Command(loupetest.Binary(t), "functions", "events", "--emulator", inst.Host)
	out, err := cli.CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^AT +TRIGGER +DOCUMENT +EVENT +ATTEMPT +STATUS +RESULT +LATENCY +DURATION\n`).Match(out) ||
		!regexp.MustCompile(`(?m) +request-fanout +feedbackRequests/r1 +written +1 +200 +delivered +\S+s +\S+s$`).Match(out) ||
		!regexp.MustCompile(`(?m) +comment-counters +feedbackRequests/r1/comments/r2 +written +1 +200 +delivered +\S+s +\S+s$`).Match(out) {
		t.Errorf("loupe functions events: %v\n%s", err, out)
	}
	cli = exec.Command(loupetest.Binary(t), "functions", "events", "--json", "--document", "feedbackRequests/r1/comments/r2",
		"--trigger", "comment-counters", "--emulator", inst.Host)
	var attempts []struct {
		Trigger, Resource string
		Delivered         bool
		LatencyNs         int64
	}
	if out, err := cli.Output(); err != nil || json.Unmarshal(out, &attempts) != nil {
		t.Errorf("loupe functions events --json --document --trigger: %v\n%s", err, out)
	}
	// r2 was written twice (created, then soft-deleted): two deliveries, both
	// on time and nothing of other documents or triggers.
	if len(attempts) != 2 || attempts[0].Resource != "feedbackRequests/r1/comments/r2" || attempts[1].Trigger != "comment-counters" ||
		!attempts[0].Delivered || attempts[0].LatencyNs <= 0 {
		t.Errorf("filtered events = %+v, want r2's two comment-counters deliveries", attempts)
	}
	if code, _ := getJSON(inst.URL + "/emulator/v1/functions/events?failed=perhaps"); code != http.StatusBadRequest {
		t.Errorf("events?failed=perhaps = %d, want 400", code)
	}
	cli = exec.Command(loupetest.Binary(t), "functions", "status", "--json", "--emulator", inst.Host)
	if out, err := cli.Output(); err != nil || !strings.Contains(string(out), `"state": "running"`) {
		t.Errorf("loupe functions status --json: %v\n%s", err, out)
	}

	resp, err := http.Get(inst.URL + "/api/rates/v4/latest/USD")
	if err != nil {
		t.Fatal(err)
	}
	var rates struct {
		Base  string
		Rates map[string]float64
	}
	_ = json.NewDecoder(resp.Body).Decode(&rates)
	resp.Body.Close()
	if resp.StatusCode != 200 || rates.Base != "USD" || rates.Rates["EUR"] != 0.92 {
		t.Errorf("rates through the hosting rewrite: %d %+v", resp.StatusCode, rates)
	}
}

// TestFunctions_ProcessEndsWithLoupe: however loupe serve ends (SIGTERM,
// SIGINT, or kill -9, where an orphan would hold its port), its functions
// process goes too, and the functions binary it built is not left behind.
// At start each function is named in the log.
func TestFunctions_ProcessEndsWithLoupe(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			inst, _ := startWithFunctions(t)
			// The process's lines reach loupe's log as structured entries.
			if log := inst.Log(); strings.Contains(log, `Serving function: \"\"`) ||
				!strings.Contains(log, `msg="Serving function: \"events/comment-counters\"" service=functions codebase=default`) {
				t.Errorf("start-up log names no function, or some without a name:\n%s", log)
			}
			child := functionsChild(t, inst.PID())
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", child))
			bin, _, _ := strings.Cut(string(cmdline), "\x00")
			inst.Signal(t, sig)
			alive := func() bool {
				stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
				return err == nil && !strings.Contains(string(stat), ") Z ")
			}
			for i := 0; i < 200 && alive(); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			if alive() {
				_ = syscall.Kill(child, syscall.SIGKILL)
				t.Errorf("functions process %d outlived loupe serve ended by %v", child, sig)
			}
			if _, err := os.Stat(bin); !os.IsNotExist(err) {
				t.Errorf("the functions binary %s is left behind after loupe serve ended by %v (%v)", bin, sig, err)
			}
		})
	}
}

// TestFunctions_BuildEndsWithLoupe: loupe serve stopped while it builds the
// functions stops go build and the tools it runs, and leaves no output
// folder behind. A -toolexec wrapper that sleeps holds the build.
func TestFunctions_BuildEndsWithLoupe(t *testing.T) {
	t.Parallel()
	nap := fmt.Sprintf("300.%06d", os.Getpid()%1000000) // a sleep no other test runs
	wrapper := filepath.Join(t.TempDir(), "slow-tool")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nsleep "+nap+"\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{Process: true, InMemory: true, Config: functionsConfig(t), Env: []string{"GOFLAGS=-toolexec=" + wrapper}})
	build := functionsChild(t, inst.PID())
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", build))
	args := strings.Split(string(cmdline), "\x00")
	out := ""
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			out = filepath.Dir(args[i+1])
		}
	}
	if _, st := getJSON(inst.URL + "/emulator/v1/functions"); st["state"] != "building" || out == "" {
		t.Fatalf("state %v, build %q; want a build under way with -o", st["state"], args)
	}
	loupetest.Eventually(t, "the build's wrapped tool", func() bool { return len(processesWith(nap)) > 0 })
	inst.Stop(t)
	loupetest.Eventually(t, "the build and its tools gone", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", build))
		return os.IsNotExist(err) && len(processesWith(nap)) == 0
	})
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the build's output folder %s is left behind (%v)", out, err)
	}
}

// processesWith lists the pids of the live processes with arg in their
// command line.
func processesWith(arg string) []int {
	var pids []int
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		data, _ := os.ReadFile(f)
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "stat"))
		if slices.Contains(strings.Split(string(data), "\x00"), arg) && !strings.Contains(string(stat), ") Z ") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// functionsChild is the pid of the functions process (or its build) that
// loupe (pid) started, waiting for it to start.
func functionsChild(t *testing.T, pid int) int {
	t.Helper()
	child := 0
	loupetest.Eventually(t, fmt.Sprintf("the functions process among the children of %d", pid), func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, f := range tasks {
			data, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(data)) {
				cmdline, _ := os.ReadFile("/proc/" + field + "/cmdline")
				if strings.Contains(string(cmdline), "loupe-functions-") {
					child, _ = strconv.Atoi(field)
					return true
				}
			}
		}
		return false
	})
	return child
}

package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestFunctions_OneBackgroundTriggerSwitchAndLogs: the Emulator Hub's
// disable/enableBackgroundTriggers and the console's backgroundTriggers
// switch one state, which both report: paused with either and resumed with
// the other, a write made while paused is never delivered and one made after
// resuming is. The functions process's own log lines are kept for the console.
func TestFunctions_OneBackgroundTriggerSwitchAndLogs(t *testing.T) {
	ctx := context.Background()
	inst, _ := startWithFunctions(t)
	db := adminClient(t, inst)
	put := func(path, body string) map[string]any {
		t.Helper()
		code, out := loupetest.Call(t, "PUT", inst.URL+path, body)
		if code != 200 {
			t.Fatalf("PUT %s %s: %d %v", path, body, code, out)
		}
		return out
	}
	paused := func() any {
		_, st := getJSON(inst.URL + "/emulator/v1/functions")
		return st["paused"]
	}
	// Each switch answers the state it leaves: the hub as {"enabled"}, the console as {"paused"}.
	hubOff := func() {
		if out := put("/functions/disableBackgroundTriggers", ""); out["enabled"] != false {
			t.Errorf("disableBackgroundTriggers = %v, want {enabled: false}", out)
		}
	}
	hubOn := func() {
		if out := put("/functions/enableBackgroundTriggers", ""); out["enabled"] != true {
			t.Errorf("enableBackgroundTriggers = %v, want {enabled: true}", out)
		}
	}
	consoleOff := func() {
		if out := put("/emulator/v1/functions/backgroundTriggers", `{"paused": true}`); out["paused"] != true {
			t.Errorf("console pause = %v, want {paused: true}", out)
		}
	}
	consoleOn := func() {
		if out := put("/emulator/v1/functions/backgroundTriggers", `{"paused": false}`); out["paused"] != false {
			t.Errorf("console resume = %v, want {paused: false}", out)
		}
	}
	// deliveries counts the events of doc delivered to profile-public.
	deliveries := func(doc string) int {
		_, body := getJSON(inst.URL + "/emulator/v1/functions/events?trigger=profile-public&document=" + url.QueryEscape(doc))
		events, _ := body["events"].([]any)
		ids := map[any]bool{}
		for _, e := range events {
			if a := e.(map[string]any); a["delivered"] == true {
				ids[a["eventId"]] = true
			}
		}
		return len(ids)
	}
	for i, round := range []struct {
		name        string
		off, on     func()
		offBy, onBy string
	}{
		{"paused at the hub, resumed in the console", hubOff, consoleOn, "hub", "console"},
		{"paused in the console, resumed at the hub", consoleOff, hubOn, "console", "hub"},
	} {
		doc := fmt.Sprintf("users/pause-probe-%d", i)
		round.off()
		if p := paused(); p != true {
			t.Errorf("%s: GET /emulator/v1/functions paused = %v after the %s paused", round.name, p, round.offBy)
		}
		if i == 0 { // and the CLI
			out, err := exec.Command(loupetest.Binary(t), "functions", "status", "--emulator", inst.Host).CombinedOutput()
			if err != nil || !regexp.MustCompile(`(?m)^STATE +TRIGGERS +URL.*\nrunning +paused +http://`).Match(out) {
				t.Errorf("loupe functions status while paused: %v\n%s", err, out)
			}
		}
		if _, err := db.Doc(doc).Set(ctx, map[string]any{"displayName": "while paused"}); err != nil {
			t.Fatal(err)
		}
		round.on()
		if p := paused(); p != false {
			t.Errorf("%s: GET /emulator/v1/functions paused = %v after the %s resumed", round.name, p, round.onBy)
		}
		if _, err := db.Doc(doc).Set(ctx, map[string]any{"displayName": "after resuming"}); err != nil {
			t.Fatal(err)
		}
		// One document's events reach a trigger in commit order, so once the
		// second write's is delivered the first's would have been too.
		loupetest.Eventually(t, round.name+": the delivery of the write after resuming", func() bool { return deliveries(doc) > 0 })
		if n := deliveries(doc); n != 1 {
			t.Errorf("%s: %d events of %s delivered, want only the write after resuming", round.name, n, doc)
		}
	}

	if code, _ := loupetest.Call(t, "PUT", inst.URL+"/emulator/v1/functions/backgroundTriggers", `{"paused": "yes"}`); code != 400 {
		t.Errorf("a bad body: %d, want 400", code)
	}
	loupetest.Eventually(t, "the functions process's log lines", func() bool {
		resp, err := http.Get(inst.URL + "/emulator/v1/functions/logs?after=0")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var out struct {
			Lines []struct {
				Seq  int64
				Text string
			}
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return len(out.Lines) > 0 && out.Lines[0].Seq == 1 && strings.TrimSpace(out.Lines[0].Text) != ""
	})
}

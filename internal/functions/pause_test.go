package functions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestFunctions_PauseResumeAndLogs: while background triggers are paused a
// commit triggers nothing; after resuming the next one is delivered; the
// functions process's own log lines are kept for the console.
func TestFunctions_PauseResumeAndLogs(t *testing.T) {
	ctx := context.Background()
	inst, _ := startWithFunctions(t)
	db := adminClient(t, inst)
	put := func(body string) int {
		req, _ := http.NewRequest("PUT", inst.URL+"/emulator/v1/functions/backgroundTriggers", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := put(`{"paused": true}`); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	if _, st := getJSON(inst.URL + "/emulator/v1/functions"); st["paused"] != true {
		t.Errorf("state after pausing: %v", st["paused"])
	}
	request := map[string]any{"requesterId": "sam", "mentorId": "maya", "title": "t", "status": "pending"}
	if _, err := db.Doc("feedbackRequests/while-paused").Set(ctx, request); err != nil {
		t.Fatal(err)
	}
	if code := put(`{"paused": false}`); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	if _, err := db.Doc("feedbackRequests/after-resume").Set(ctx, request); err != nil {
		t.Fatal(err)
	}
	delivered := func(doc string) bool {
		_, body := getJSON(inst.URL + "/emulator/v1/functions/events")
		events, _ := body["events"].([]any)
		for _, e := range events {
			if strings.HasSuffix(e.(map[string]any)["document"].(string), doc) {
				return true
			}
		}
		return false
	}
	loupetest.Eventually(t, "the delivery after resuming", func() bool { return delivered("feedbackRequests/after-resume") })
	// Commits reach the triggers in order: the earlier one was dropped, not queued.
	if delivered("feedbackRequests/while-paused") {
		t.Error("a commit made while paused was delivered")
	}
	if code := put(`{"paused": "yes"}`); code != 400 {
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
		return len(out.Lines) > 0 && out.Lines[0].Seq == 1 && out.Lines[0].Text != ""
	})
}

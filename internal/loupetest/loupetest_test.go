package loupetest

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestStart_InProcessKeepsItsDataForTheNextStart: an in-process loupe
// takes the CLI's flags, prints its start-up lines to Log, and once
// stopped (as SIGTERM stops the binary) has its data on disk for the
// loupe started next on the same data dir; it exits 0, and is not a
// process of its own.
func TestStart_InProcessKeepsItsDataForTheNextStart(t *testing.T) {
	first := Start(t, Options{Args: []string{"--project", "demo-inproc"}})
	if first.cmd != nil {
		t.Fatal("Start made a child process without being asked")
	}
	if !strings.Contains(first.Log(), "Loupe is running at "+first.URL) {
		t.Errorf("the log lacks the start-up line:\n%s", first.Log())
	}
	db := "projects/demo-inproc/databases/(default)"
	body := `{"writes":[{"update":{"name":"` + db + `/documents/notes/n1","fields":{"v":{"integerValue":"7"}}}}]}`
	if code, err := RESTCommit(context.Background(), first.URL, db, "owner", body, nil); err != nil || code != http.StatusOK {
		t.Fatalf("commit: %d %v", code, err)
	}
	first.Stop(t)
	if code := first.ExitCode(); code != 0 {
		t.Errorf("exit code after Stop = %d, want 0\n%s", code, first.Log())
	}
	if _, err := os.Stat(first.DataDir); err != nil {
		t.Fatal(err)
	}
	second := Start(t, Options{DataDir: first.DataDir, Args: []string{"--project", "demo-inproc"}})
	code, doc := Call(t, http.MethodGet, second.URL+"/v1/"+db+"/documents/notes/n1", "", "Authorization", "Bearer owner")
	if fields, _ := doc["fields"].(map[string]any); code != http.StatusOK || fields["v"] == nil {
		t.Errorf("after a restart on the data dir: %d %v", code, doc)
	}
}

// TestStart_InProcessBadFlagExitsAsTheBinaryDoes: a flag the CLI refuses
// stops an in-process loupe with the binary's usage exit code and message.
func TestStart_InProcessBadFlagExitsAsTheBinaryDoes(t *testing.T) {
	inst := &Instance{t: t, log: &syncBuffer{}, done: make(chan struct{})}
	out := inst.startInProcess([]string{"--port", "0", "--in-memory", "--only", "nosuch"}, nil)
	<-inst.done
	_ = out
	if code := inst.ExitCode(); code != 2 || !strings.Contains(inst.Log(), `loupe: --only: unknown service "nosuch"`) {
		t.Errorf("exit code %d, log:\n%s", code, inst.Log())
	}
}

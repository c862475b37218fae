package functions

import (
	"slices"
	"testing"
	"time"
)

// TestProcessLogSplitsLinesAndKeepsTheNewest: writes in pieces become whole
// lines, numbered, and only the newest maxLogLines are kept.
func TestProcessLogSplitsLinesAndKeepsTheNewest(t *testing.T) {
	t.Parallel()
	var l processLog
	w := l.writer("stdout", "default", nil)
	for _, piece := range []string{"Serving fun", "ction\nsecond", " line\n", "third\n"} {
		if _, err := w.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	got := l.after(0)
	if len(got) != 3 || got[0].Text != "Serving function" || got[1].Text != "second line" || got[2].Seq != 3 || got[2].Stream != "stdout" {
		t.Fatalf("lines = %+v", got)
	}
	if after := l.after(2); len(after) != 1 || after[0].Text != "third" {
		t.Errorf("after(2) = %+v", after)
	}
	for i := 0; i < maxLogLines+10; i++ {
		_, _ = w.Write([]byte("x\n"))
	}
	if all := l.after(0); len(all) != maxLogLines || all[len(all)-1].Seq != int64(maxLogLines+13) {
		t.Errorf("kept %d lines ending at %d", len(all), all[len(all)-1].Seq)
	}
}

// TestProcessLogReadsStructuredLines: a JSON line with a severity (the
// firebase-functions logger's, or loupe's Node.js worker's) is kept with its
// severity, function and fields; a plain line is DEFAULT.
func TestProcessLogReadsStructuredLines(t *testing.T) {
	t.Parallel()
	var l processLog
	w := l.writer("stdout", "node", nil)
	_, _ = w.Write([]byte(`{"severity":"WARNING","message":"low stock","loupe.function":"checkStock","sku":"a1"}` + "\n" + `{"not":"structured"}` + "\n"))
	got := l.after(0)
	if len(got) != 2 {
		t.Fatalf("lines = %+v", got)
	}
	if g := got[0]; g.Severity != "WARNING" || g.Text != "low stock" || g.Function != "checkStock" || g.Fields["sku"] != "a1" || g.Codebase != "node" {
		t.Errorf("structured line = %+v", g)
	}
	if g := got[1]; g.Severity != "DEFAULT" || g.Text != `{"not":"structured"}` {
		t.Errorf("plain line = %+v", g)
	}
}

// TestRunLog_CountsRunsAndAttributesTheirLines: each run is counted with
// its errors and last run; a line labelled with a run's execution id is
// that run's (functions-framework-go's LogWriter, the Node.js worker), a
// plain line is the run's when it is the only one under way, and a run's
// start and end are lines of its own.
func TestRunLog_CountsRunsAndAttributesTheirLines(t *testing.T) {
	t.Parallel()
	runs := newRunLog()
	runs.log = &processLog{runs: runs}
	stdout := runs.log.writer("stdout", "default", nil)
	first := runs.begin("default", "payments/checkout")
	_, _ = stdout.Write([]byte("plain line of the only run\n"))
	second := runs.begin("default", "events/comment-counters")
	_, _ = stdout.Write([]byte("plain line of one of two runs\n"))
	_, _ = stdout.Write([]byte(`{"message":"labelled","logging.googleapis.com/labels":{"execution_id":"` + second.ID + `"}}` + "\n"))
	runs.end(second, 500, nil)
	runs.end(first, 401, nil)

	if st := runs.summary("default", "payments/checkout"); st.Calls != 1 || st.Errors != 0 || st.Last.Status != 401 || st.Last.Running {
		t.Errorf("checkout = %+v (last %+v): a 4xx answer is an answer", st, st.Last)
	}
	if st := runs.summary("default", "events/comment-counters"); st.Calls != 1 || st.Errors != 1 || !st.Last.Failed {
		t.Errorf("comment-counters = %+v (last %+v): a 500 is an error", st, st.Last)
	}
	text := func(run string) []string {
		var out []string
		for _, l := range runs.log.after(0) {
			if l.Run == run {
				out = append(out, l.Text)
			}
		}
		return out
	}
	if got := text(first.ID); len(got) != 3 || got[1] != "plain line of the only run" || got[0] != `Beginning execution of "payments/checkout"` {
		t.Errorf("lines of the first run = %q", got)
	}
	if got := text(second.ID); len(got) != 3 || got[1] != "labelled" || got[2] != `Finished "events/comment-counters" in `+second.Duration.Round(time.Microsecond).String()+` with status 500` {
		t.Errorf("lines of the second run = %q", got)
	}
	if got := text(""); len(got) != 1 || got[0] != "plain line of one of two runs" {
		t.Errorf("unattributed lines = %q", got)
	}
}

// TestGoBuild_AnnouncedHTTPFunctions: functions-framework-go's start-up
// lines name the HTTP functions (not the triggers' paths), and a request
// goes to the function whose path serves it, as the framework's mux picks.
func TestGoBuild_AnnouncedHTTPFunctions(t *testing.T) {
	t.Parallel()
	b := &goBuild{codebase: "default", fns: []Function{{Name: "comment-counters", Kind: KindEvent, EntryPoint: "/events/comment-counters"}}}
	c := &codebase{name: "default", serving: &process{build: b}, fns: b.fns}
	for _, line := range []string{`Serving function: "events/comment-counters"`, `Serving function: "api/rates/v4/latest/"`,
		`Serving function: "payments/checkout"`, `Serving function: "payments/checkout"`, `unrelated`} {
		c.announce(c.serving, LogLine{Stream: "stdout", Text: line})
	}
	var names []string
	for _, f := range c.functions() {
		names = append(names, f.Name+":"+f.Kind)
	}
	if want := []string{"comment-counters:event", "api/rates/v4/latest/:https", "payments/checkout:https"}; !slices.Equal(names, want) {
		t.Errorf("functions = %q, want %q", names, want)
	}
	for path, want := range map[string]string{"/api/rates/v4/latest/USD": "api/rates/v4/latest/", "/payments/checkout": "payments/checkout",
		"/payments/checkout/x": "payments", "/elsewhere": "payments"} {
		if got := c.servedAt(path, "payments").Name; got != want {
			t.Errorf("servedAt(%s) = %s, want %s", path, got, want)
		}
	}
}

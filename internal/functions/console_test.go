package functions

import (
	"testing"
)

// TestProcessLogSplitsLinesAndKeepsTheNewest: writes in pieces become whole
// lines, numbered, and only the newest maxLogLines are kept.
func TestProcessLogSplitsLinesAndKeepsTheNewest(t *testing.T) {
	t.Parallel()
	var l processLog
	w := l.writer("stdout", "default")
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
	w := l.writer("stdout", "node")
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

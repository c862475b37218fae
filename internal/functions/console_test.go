package functions

import (
	"strings"
	"testing"
)

// TestProcessLogSplitsLinesAndKeepsTheNewest: writes in pieces become whole
// lines, numbered, and only the newest maxLogLines are kept.
func TestProcessLogSplitsLinesAndKeepsTheNewest(t *testing.T) {
	t.Parallel()
	var l processLog
	var copied strings.Builder
	w := l.writer("stdout", &copied)
	for _, piece := range []string{"Serving fun", "ction\nsecond", " line\n", "third\n"} {
		if _, err := w.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	got := l.after(0)
	if len(got) != 3 || got[0].Text != "Serving function" || got[1].Text != "second line" || got[2].Seq != 3 || got[2].Stream != "stdout" {
		t.Fatalf("lines = %+v", got)
	}
	if copied.String() != "Serving function\nsecond line\nthird\n" {
		t.Errorf("copy = %q", copied.String())
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

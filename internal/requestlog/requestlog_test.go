package requestlog

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func ids(es []Entry) []int64 {
	var out []int64
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestLog_KeepsTheNewestEntriesNewestFirst(t *testing.T) {
	l := New(3)
	for _, m := range []string{"get", "list", "create", "update", "delete"} {
		l.Add(Entry{Service: "firestore", Method: m})
	}
	got, latest := l.After(0, 0, nil)
	if !slices.Equal(ids(got), []int64{5, 4, 3}) || latest != 5 {
		t.Errorf("After(0) = %v latest %d, want [5 4 3] latest 5", ids(got), latest)
	}
	if got, _ := l.After(3, 0, nil); !slices.Equal(ids(got), []int64{5, 4}) {
		t.Errorf("After(3) = %v, want [5 4]", ids(got))
	}
	if got, _ := l.After(0, 1, nil); !slices.Equal(ids(got), []int64{5}) {
		t.Errorf("After(0, limit 1) = %v, want [5]", ids(got))
	}
	if got, _ := l.After(0, 0, func(e *Entry) bool { return e.Method == "create" }); !slices.Equal(ids(got), []int64{3}) {
		t.Errorf("filtered = %v, want [3]", ids(got))
	}
	if _, ok := l.Get(2); ok {
		t.Error("Get(2): an entry that fell off is still there")
	}
	if e, ok := l.Get(4); !ok || e.Method != "update" || e.Time.IsZero() {
		t.Errorf("Get(4) = %+v, %v", e, ok)
	}
	l.Clear()
	if got, latest := l.After(0, 0, nil); len(got) != 0 || latest != 5 {
		t.Errorf("after Clear: %v latest %d, want none and latest 5", ids(got), latest)
	}
	l.Add(Entry{})
	if got, _ := l.After(0, 0, nil); !slices.Equal(ids(got), []int64{6}) {
		t.Errorf("after Clear and Add: %v, want [6]", ids(got))
	}
}

func TestLog_WaitWakesOnANewEntry(t *testing.T) {
	l := New(10)
	done := make(chan bool)
	go func() { done <- l.Wait(context.Background(), 0) }()
	time.Sleep(10 * time.Millisecond)
	l.Add(Entry{})
	if !<-done {
		t.Fatal("Wait returned false after an entry was added")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if l.Wait(ctx, 1) {
		t.Error("Wait(after the newest) returned true with nothing new")
	}
}

func TestLog_NilRecordsNothing(t *testing.T) {
	var l *Log
	l.Add(Entry{}) // must not panic
}

func TestLog_CloseEndsEveryWait(t *testing.T) {
	l := New(10)
	done := make(chan bool)
	go func() { done <- l.Wait(context.Background(), 0) }()
	l.Close()
	if <-done {
		t.Error("Wait reported an entry after Close")
	}
	if l.Wait(context.Background(), 0) {
		t.Error("Wait after Close reported an entry")
	}
	l.Close() // twice is fine
}

// TestLog_EmptyListIsAnEmptyArray: before any request is logged, the list
// is [] (the console renders its length), not null.
func TestLog_EmptyListIsAnEmptyArray(t *testing.T) {
	rec := httptest.NewRecorder()
	New(8).list(rec, httptest.NewRequest("GET", "/emulator/v1/requests?limit=5", nil))
	if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, `"requests":[]`) {
		t.Errorf("empty log answered %d %s, want 200 with \"requests\":[]", rec.Code, body)
	}
}

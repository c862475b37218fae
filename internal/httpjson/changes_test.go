package httpjson

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loupe-dev/loupe/internal/changes"
)

// TestServeChanges: without since the version at once; a since that is not a
// number is refused; with the current version the answer waits for the
// next change and carries it.
func TestServeChanges(t *testing.T) {
	var c changes.Counter
	c.Bump()
	get := func(query string) (int, uint64) {
		t.Helper()
		w := httptest.NewRecorder()
		ServeChanges(w, httptest.NewRequest("GET", "/x:changes"+query, nil), &c)
		var out struct{ Version uint64 }
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out.Version
	}
	if code, v := get(""); code != http.StatusOK || v != 1 {
		t.Fatalf("without since: %d, version %d; want 200, 1", code, v)
	}
	if code, _ := get("?since=x"); code != http.StatusBadRequest {
		t.Fatalf("since=x: %d, want 400", code)
	}
	if code, v := get("?since=0"); code != http.StatusOK || v != 1 {
		t.Fatalf("since an older version: %d, version %d; want 200, 1 at once", code, v)
	}
	woke := make(chan uint64)
	go func() { _, v := get("?since=1"); woke <- v }()
	c.Bump()
	if v := <-woke; v != 2 {
		t.Fatalf("after a change the waiter got version %d, want 2", v)
	}
}

package webchannel_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/webchannel"
)

// BenchmarkHandler_IdleSessionMemory opens b.N sessions that then sit idle,
// as browser tabs do, and reports the heap each one holds (target < 50 KiB).
func BenchmarkHandler_IdleSessionMemory(b *testing.B) {
	h := webchannel.NewHandler(func(_ http.Header, _ url.Values, send func([]byte)) (webchannel.Stream, error) {
		return &echo{send: send}, nil
	}, webchannel.Options{})
	defer h.Close()
	body := url.Values{"count": {"1"}, "ofs": {"0"}, "req0___data__": {`{"database":"projects/p/databases/(default)"}`}}.Encode()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		r := httptest.NewRequest(http.MethodPost, "/channel?VER=8&RID=1&CVER=22", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("handshake = %d", w.Code)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if h.Sessions() != b.N {
		b.Fatalf("%d sessions open, want %d", h.Sessions(), b.N)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-B/session")
}

package rates

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// upstream stands in for the exchange-rate site (the internet is not here).
type upstream struct {
	calls atomic.Int32
	fail  atomic.Bool
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.calls.Add(1)
	if u.fail.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"base": r.URL.Path[len("/v4/latest/"):], "rates": map[string]float64{"EUR": 0.9, "GBP": 0.8}})
}

func get(t *testing.T, h http.Handler, path string) (int, map[string]any, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	return rec.Code, body, rec.Header()
}

func TestHandler_CachesFiveMinutesAndServesStaleRatesWhenTheUpstreamFails(t *testing.T) {
	up := &upstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	clock := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	h := New(srv.URL+"/v4/latest/", nil, func() time.Time { return clock })

	code, body, _ := get(t, h, "/api/rates/v4/latest/USD")
	if code != 200 || body["base"] != "USD" || body["rates"].(map[string]any)["EUR"] != 0.9 {
		t.Fatalf("first: %d %v", code, body)
	}
	clock = clock.Add(CacheTTL - time.Millisecond)
	get(t, h, "/v4/latest/USD")
	if up.calls.Load() != 1 {
		t.Errorf("upstream called %d times within 5 minutes, want 1", up.calls.Load())
	}
	clock = clock.Add(time.Millisecond)
	get(t, h, "/v4/latest/USD")
	if up.calls.Load() != 2 {
		t.Errorf("upstream called %d times after 5 minutes, want 2", up.calls.Load())
	}
	up.fail.Store(true)
	clock = clock.Add(CacheTTL)
	code, body, hdr := get(t, h, "/v4/latest/USD")
	if code != 200 || body["rates"] == nil || hdr.Get("Warning") == "" {
		t.Errorf("stale: %d %v %v", code, body, hdr)
	}
	code, body, _ = get(t, h, "/v4/latest/EUR")
	if code != http.StatusBadGateway || body["error"] == nil {
		t.Errorf("no rates at all: %d %v", code, body)
	}
}

func TestHandler_RejectsUnknownBases(t *testing.T) {
	h := New("http://127.0.0.1:1/", nil, nil)
	for _, path := range []string{"/v4/latest/XYZ", "/v4/latest/usd", "/v4/latest/", "/v4/latest/USD/x", "/other"} {
		if code, _, _ := get(t, h, path); code != http.StatusBadRequest {
			t.Errorf("GET %s = %d, want 400", path, code)
		}
	}
}

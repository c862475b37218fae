package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAllowedOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"http://localhost:5173", "127.0.0.1:8080", true},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"http://127.0.0.2:3000", "127.0.0.1:8080", true},
		{"http://[::1]:8080", "[::1]:8080", true},
		{"http://192.168.1.20:8080", "192.168.1.20:8080", true}, // the app served by loupe itself on a LAN address
		{"https://evil.example", "127.0.0.1:8080", false},
		{"http://192.168.1.21:8080", "192.168.1.20:8080", false},
		{"http://localhost.evil.example", "127.0.0.1:8080", false},
		{"null", "127.0.0.1:8080", false},
		{"file://", "127.0.0.1:8080", false},
	} {
		if got := allowedOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("allowedOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.want)
		}
	}
}

func TestWithCORS_RefusesOtherOrigins(t *testing.T) {
	reached := false
	h := withCORS(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/google.firestore.v1.Firestore/Write/channel", nil)
	req.Header.Set("Origin", "https://evil.example")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || reached || rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("cross-site POST: status %d, reached %v, allow-origin %q; want 403, not reached, none", rec.Code, reached, rec.Header().Get("Access-Control-Allow-Origin"))
	}
}

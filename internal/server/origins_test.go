package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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
		{"http://evil.example:8080", "evil.example:8080", false}, // a page that rebound its name to loupe
		{"https://app.example", "127.0.0.1:8080", true},          // allowed with --allow-origin
		{"https://app.example:444", "127.0.0.1:8080", false},
	} {
		if got := NewHostPolicy("127.0.0.1", []string{"https://app.example"}, false, nil).AllowedOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("allowedOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.want)
		}
	}
}

// postFromEach sends a WebChannel POST through h from each of origins and
// then from twice maxNamesLogged made-up ones, and returns every origin
// with its answer, in order.
func postFromEach(h http.Handler, origins ...string) ([]string, []*httptest.ResponseRecorder) {
	for i := range 2 * maxNamesLogged {
		origins = append(origins, fmt.Sprintf("https://made-up-%d.example", i))
	}
	answers := make([]*httptest.ResponseRecorder, len(origins))
	for i, origin := range origins {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/google.firestore.v1.Firestore/Write/channel", nil)
		req.Header.Set("Origin", origin)
		answers[i] = httptest.NewRecorder()
		h.ServeHTTP(answers[i], req)
	}
	return origins, answers
}

// TestWithCORS_RefusesOtherOrigins: under strict credentials a page of
// another origin is refused before it reaches a service, and each refused
// origin is logged once, up to the bound (a page making up origins grows
// neither memory nor the log).
func TestWithCORS_RefusesOtherOrigins(t *testing.T) {
	reached := false
	var log bytes.Buffer
	h := withCORS(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }), NewHostPolicy("127.0.0.1", nil, false, slog.New(slog.NewTextHandler(&log, nil))))
	origins, answers := postFromEach(h, "https://evil.example", "https://evil.example")
	for i, rec := range answers {
		if rec.Code != http.StatusForbidden || reached || rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("cross-site POST from %s: status %d, reached %v, allow-origin %q; want 403, not reached, none", origins[i], rec.Code, reached, rec.Header().Get("Access-Control-Allow-Origin"))
		}
	}
	if !strings.Contains(log.String(), "--allow-origin https://evil.example") || strings.Count(log.String(), "origin=https://evil.example") != 1 {
		t.Errorf("the refusal of evil.example is not logged once saying how to allow it:\n%s", &log)
	}
	if got := strings.Count(log.String(), "origin="); got != maxNamesLogged {
		t.Errorf("%d refused origins logged, want the bound %d", got, maxNamesLogged)
	}
}

// TestWithCORS_DefaultModeAnswersEveryPage: as the official emulators do, a
// page of any origin is answered (its origin echoed with credentials), and
// each such origin is logged once, up to the bound.
func TestWithCORS_DefaultModeAnswersEveryPage(t *testing.T) {
	var log bytes.Buffer
	reached := 0
	h := withCORS(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ }),
		NewHostPolicy("127.0.0.1", nil, true, slog.New(slog.NewTextHandler(&log, nil))))
	origins, answers := postFromEach(h, "https://app.example.test", "https://app.example.test", "null")
	for i, rec := range answers {
		if origin := origins[i]; rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != origin || rec.Header().Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("POST from %s: status %d, allow-origin %q; want 200 and the origin echoed with credentials", origin, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
	}
	if reached != len(origins) {
		t.Errorf("%d of %d requests reached the service", reached, len(origins))
	}
	if got := strings.Count(log.String(), "origin=https://app.example.test"); got != 1 {
		t.Errorf("the origin app.example.test is logged %d times, want once:\n%s", got, &log)
	}
	if got := strings.Count(log.String(), "origin="); got != maxNamesLogged {
		t.Errorf("%d origins logged, want the bound %d", got, maxNamesLogged)
	}
}

func TestHostPolicy_Allowed(t *testing.T) {
	p := NewHostPolicy("devbox.lan", []string{"https://app.example:3000"}, false, nil)
	for host, want := range map[string]bool{
		"localhost:8080": true, "127.0.0.1:8080": true, "[::1]:8080": true, "192.168.1.20:8080": true,
		"app.localhost:5173": true, "devbox.lan:8080": true, "DEVBOX.LAN": true, "app.example": true,
		"evil.example:8080": false, "localhost.evil.example": false, "": false,
	} {
		if got := p.Allowed(host); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

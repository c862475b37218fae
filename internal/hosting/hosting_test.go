package hosting

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/server"
)

func newTestServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := server.NewMux()
	routes := &server.Routes{HTTP: mux}
	h.Register(routes)
	mux.Handle("/", routes.Unmatched())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

func TestService_ServesTheAppLikeFirebaseHosting(t *testing.T) {
	public := t.TempDir()
	must(t, os.WriteFile(filepath.Join(public, "index.html"), []byte("<html>app</html>"), 0o644))
	must(t, os.MkdirAll(filepath.Join(public, "assets"), 0o755))
	must(t, os.WriteFile(filepath.Join(public, "assets", "app-1.js"), []byte("js"), 0o644))
	must(t, os.WriteFile(filepath.Join(public, "terms.html"), []byte("terms"), 0o644))

	ts := newTestServer(t, Options{
		Sites: []SiteOptions{{Public: public, Rewrites: []config.Rewrite{
			{Source: "/api/rates/**", Function: "rates"},
			{Source: "/legal", Destination: "/terms.html"},
		}}},
		InitConfig: map[string]string{"projectId": "demo-x"},
		Functions: func(w http.ResponseWriter, r *http.Request, name string) bool {
			if name != "rates" {
				return false
			}
			_, _ = io.WriteString(w, "fn:"+r.URL.Path)
			return true
		},
	})

	for _, tc := range []struct {
		path       string
		wantStatus int
		wantBody   string
	}{
		{"/", 200, "<html>app</html>"},
		{"/profile", 200, "<html>app</html>"},
		{"/landing/mentors", 200, "<html>app</html>"},
		{"/assets/app-1.js", 200, "js"},
		{"/assets/missing.js", 404, "404 page not found\n"},
		{"/legal", 200, "terms"},
		{"/api/rates/v4/latest/USD", 200, "fn:/api/rates/v4/latest/USD"},
		{"/__/firebase/init.json", 200, "{\"projectId\":\"demo-x\"}\n"},
		{"/../../etc/passwd", 200, "<html>app</html>"},
	} {
		status, body, _ := get(t, ts.URL+tc.path)
		if status != tc.wantStatus || body != tc.wantBody {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, status, body, tc.wantStatus, tc.wantBody)
		}
	}
	if _, _, h := get(t, ts.URL+"/assets/app-1.js"); h.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("hashed asset Cache-Control = %q", h.Get("Cache-Control"))
	}
	if _, _, h := get(t, ts.URL+"/profile"); h.Get("Cache-Control") != "no-cache" {
		t.Errorf("index.html Cache-Control = %q", h.Get("Cache-Control"))
	}
}

func TestService_CompressesTextForClientsThatAcceptGzip(t *testing.T) {
	public := t.TempDir()
	js := bytes.Repeat([]byte("export const a = 1;\n"), 200)
	must(t, os.MkdirAll(filepath.Join(public, "assets"), 0o755))
	must(t, os.WriteFile(filepath.Join(public, "assets", "app-1.js"), js, 0o644))
	must(t, os.WriteFile(filepath.Join(public, "assets", "clip.mp4"), js, 0o644))
	ts := newTestServer(t, Options{Sites: []SiteOptions{{Public: public}}})

	for _, tc := range []struct {
		path, accept, wantEncoding string
	}{
		{"/assets/app-1.js", "gzip, deflate, br", "gzip"},
		{"/assets/app-1.js", "br;q=1.0, gzip;q=0.8", "gzip"},
		{"/assets/app-1.js", "gzip;q=0", ""},
		{"/assets/app-1.js", "", ""},
		{"/assets/clip.mp4", "gzip", ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+tc.path, nil)
		req.Header.Set("Accept-Encoding", tc.accept)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Encoding"); got != tc.wantEncoding {
			t.Errorf("%s with Accept-Encoding %q: Content-Encoding %q, want %q", tc.path, tc.accept, got, tc.wantEncoding)
			continue
		}
		if tc.wantEncoding == "gzip" {
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
				t.Errorf("Content-Type = %q", ct)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(zr)
			if len(body) >= len(js) && resp.ContentLength >= int64(len(js)) {
				t.Errorf("not smaller: %d bytes", resp.ContentLength)
			}
		}
		if !bytes.Equal(body, js) {
			t.Errorf("%s with Accept-Encoding %q: body differs from the file", tc.path, tc.accept)
		}
	}
}

func TestService_FunctionNotRunning(t *testing.T) {
	ts := newTestServer(t, Options{Sites: []SiteOptions{{Rewrites: []config.Rewrite{{Source: "/api/**", Function: "rates"}}}}})
	status, body, _ := get(t, ts.URL+"/api/x")
	if status != http.StatusBadGateway || body != "function rates is not running\n" {
		t.Errorf("got %d %q", status, body)
	}
}

func TestGlobRegexp(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"**", "/a/b/c", true},
		{"/api/**", "/api/rates/v4", true},
		{"/api/**", "/apix", false},
		{"/a/*", "/a/b", true},
		{"/a/*", "/a/b/c", false},
		{"/{foo,bar}/x", "/bar/x", true},
		{"/file?.txt", "/file1.txt", true},
	} {
		re, err := globRegexp(tc.glob)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(tc.path); got != tc.want {
			t.Errorf("glob %q on %q = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestService_ServesEachSiteForItsPort: with several sites (firebase.json's
// hosting array), each request gets the files and rewrites of the site
// SiteOf names for it, and the first site answers the rest.
func TestService_ServesEachSiteForItsPort(t *testing.T) {
	app, admin := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(app, "index.html"), []byte("app"), 0o644))
	must(t, os.WriteFile(filepath.Join(admin, "index.html"), []byte("admin"), 0o644))
	ts := newTestServer(t, Options{
		Sites: []SiteOptions{{Public: app}, {Public: admin, Rewrites: []config.Rewrite{{Source: "/old", Destination: "/index.html"}}}},
		SiteOf: func(r *http.Request) int {
			if r.Header.Get("X-Site") == "admin" {
				return 1
			}
			return 0
		},
	})
	for _, tc := range []struct{ site, path, want string }{
		{"", "/", "app"}, {"", "/deep/link", "app"}, {"admin", "/", "admin"}, {"admin", "/old", "admin"},
	} {
		req, _ := http.NewRequest("GET", ts.URL+tc.path, nil)
		req.Header.Set("X-Site", tc.site)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tc.want {
			t.Errorf("site %q GET %s = %q, want %q", tc.site, tc.path, body, tc.want)
		}
	}
}

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/loupe-dev/loupe/internal/identity"
	"strings"
	"testing"
)

// fakeService records what the server asked of it; it stands in for a real
// service only to test the server's life-cycle plumbing.
type fakeService struct {
	exported, imported []string
}

func (f *fakeService) Name() string { return "fake" }
func (f *fakeService) Register(r *Routes) {
	r.HTTP.HandleFunc("GET /fake", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("fake")) })
}
func (f *fakeService) Export(_ context.Context, dir string) error {
	f.exported = append(f.exported, dir)
	return os.WriteFile(filepath.Join(dir, "fake_export"), []byte("state"), 0o644)
}
func (f *fakeService) Import(_ context.Context, dir string) error {
	f.imported = append(f.imported, dir)
	return nil
}

// names lists a folder's entries, comma-separated.
func names(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return strings.Join(out, ",")
}

func writeFiles(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServer_ExportTouchesOnlyItsOwnEntries: an export replaces an earlier
// export's entries and nothing else; a folder holding other files and no
// export is refused unless forced, and forced it keeps every other file.
func TestServer_ExportTouchesOnlyItsOwnEntries(t *testing.T) {
	s := New(Options{}, []Service{&fakeService{}})
	ctx := context.Background()

	earlier := t.TempDir()
	writeFiles(t, earlier, "firebase-export-metadata.json", "stale_export/x", "fake_export", "README.md", "notes/n.txt")
	if err := s.Export(ctx, earlier); err != nil {
		t.Fatal(err)
	}
	if got := names(t, earlier); got != "README.md,fake_export,firebase-export-metadata.json,notes" {
		t.Errorf("earlier export folder holds %s", got)
	}

	project := t.TempDir()
	writeFiles(t, project, ".git/HEAD", "src/main.go", "web/index.html", "README.md")
	before := names(t, project)
	if err := s.Export(ctx, project); !errors.Is(err, ErrNotAnExport) {
		t.Fatalf("export into a project folder: %v, want ErrNotAnExport", err)
	}
	if got := names(t, project); got != before {
		t.Errorf("a refused export changed the folder: %s, was %s", got, before)
	}
	if err := s.ExportServices(ctx, project, FormatLoupe, nil, true); err != nil {
		t.Fatal(err)
	}
	if got := names(t, project); got != ".git,README.md,fake_export,firebase-export-metadata.json,src,web" {
		t.Errorf("forced export folder holds %s", got)
	}
	if got := names(t, filepath.Join(project, ".git")); got != "HEAD" {
		t.Errorf(".git holds %s", got)
	}
}

func TestServer_DataEndpoints(t *testing.T) {
	svc := &fakeService{}
	s := New(Options{}, []Service{svc})
	s.ready.Store(true)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		path, body string
		want       int
		status     string // the Google error body's status, for a refusal
	}{
		{"/emulator/v1/export", `{"path":"` + filepath.Join(dir, "out") + `"}`, 200, ""},
		{"/emulator/v1/import", `{"path":"` + dir + `"}`, 200, ""},
		{"/emulator/v1/import", `{"path":"` + filepath.Join(dir, "missing") + `"}`, 500, "INTERNAL"},
		{"/emulator/v1/export", `not json`, 400, "INVALID_ARGUMENT"},
		{"/emulator/v1/export", `{"path":"/"}`, 400, "INVALID_ARGUMENT"},
	} {
		resp, err := http.Post(ts.URL+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct {
				Code            int
				Status, Message string
			}
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || body.Error.Status != tc.status || (tc.status != "" && (body.Error.Code != tc.want || body.Error.Message == "")) {
			t.Errorf("POST %s %s = %d %+v, want %d with status %q", tc.path, tc.body, resp.StatusCode, body.Error, tc.want, tc.status)
		}
	}
	if len(svc.exported) != 1 || len(svc.imported) != 1 || svc.imported[0] != dir {
		t.Errorf("exported %v imported %v", svc.exported, svc.imported)
	}
}

func TestServer_AnswersOnceReady(t *testing.T) {
	s := New(Options{}, []Service{&fakeService{}})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/fake")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("before ready: %d, want 503", resp.StatusCode)
	}
	s.ready.Store(true)
	resp, err = http.Get(ts.URL + "/fake")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after ready: %d, want 200", resp.StatusCode)
	}
}

// adminService registers one admin route and one ordinary route.
type adminService struct{}

func (adminService) Name() string { return "admin" }
func (adminService) Register(r *Routes) {
	r.Admin("DELETE /emulator/v1/projects/{project}/state", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("reset")) })
	r.HTTP.HandleFunc("POST /emulator/v1/projects/{project}/relay", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("relayed")) })
}

func TestServer_StrictRefusesAdminRoutesOnly(t *testing.T) {
	for _, strict := range []bool{false, true} {
		creds := identity.Local
		if strict {
			creds = identity.Strict([]byte("k"))
		}
		s := New(Options{Host: "127.0.0.1", Credentials: creds}, []Service{adminService{}})
		s.ready.Store(true)
		ts := httptest.NewServer(s.Handler())
		for _, tc := range []struct {
			method, path string
			local, want  int
		}{
			{"DELETE", "/emulator/v1/projects/p/state", 200, 403},
			{"POST", "/emulator/v1/projects/p/state", 404, 404},
			{"POST", "/emulator/v1/export", 400, 403},
			{"GET", "/emulator/v1/debug/vars", 200, 403},
			{"POST", "/emulator/v1/projects/p/relay", 200, 200},
			{"GET", "/healthz", 200, 200},
		} {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := tc.local
			if strict {
				want = tc.want
			}
			if resp.StatusCode != want {
				t.Errorf("strict=%v %s %s = %d, want %d", strict, tc.method, tc.path, resp.StatusCode, want)
			}
		}
		// The admin credential opens the admin routes in either mode; under
		// strict credentials a Host naming another site (DNS rebinding)
		// closes them, in default mode it is answered as firebase-tools does.
		for _, tc := range []struct {
			host string
			want int
		}{{"", 200}, {"evil.example", map[bool]int{false: 200, true: 403}[strict]}} {
			req, _ := http.NewRequest("DELETE", ts.URL+"/emulator/v1/projects/p/state", nil)
			req.Header.Set("Authorization", "Bearer "+creds.AdminToken())
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("strict=%v host %q with the admin credential: %d, want %d", strict, tc.host, resp.StatusCode, tc.want)
			}
		}
		ts.Close()
	}
}

// TestServer_DefaultModeAnswersAnyName: loupe is called by other containers
// under their name for it (docker compose's service name) and by names a
// developer gave this machine: as firebase-tools does, it answers the owner
// credential and the admin routes for any Host, naming each such host once
// in the log; --strict-credentials refuses them.
func TestServer_DefaultModeAnswersAnyName(t *testing.T) {
	for _, strict := range []bool{false, true} {
		creds := identity.Local
		if strict {
			creds = identity.Strict([]byte("k"))
		}
		var log bytes.Buffer
		s := New(Options{Host: "127.0.0.1", Credentials: creds, Logger: slog.New(slog.NewTextHandler(&log, nil))}, []Service{adminService{}})
		s.ready.Store(true)
		ts := httptest.NewServer(s.Handler())
		for range 2 {
			req, _ := http.NewRequest("DELETE", ts.URL+"/emulator/v1/projects/p/state", nil)
			req.Header.Set("Authorization", "Bearer owner")
			req.Host = "loupe:8080"
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := map[bool]int{false: 200, true: 403}[strict]; resp.StatusCode != want {
				t.Errorf("strict=%v: the owner credential for host loupe:8080 = %d %s, want %d", strict, resp.StatusCode, body, want)
			}
		}
		// A client sending endless made-up names is answered, and logged only up to the bound.
		for i := range 2 * maxNamesLogged {
			req, _ := http.NewRequest("DELETE", ts.URL+"/emulator/v1/projects/p/state", nil)
			req.Host = fmt.Sprintf("made-up-%d", i)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		ts.Close()
		if got, want := strings.Count(log.String(), "host=loupe"), map[bool]int{false: 1, true: 0}[strict]; got != want {
			t.Errorf("strict=%v: the log names host loupe %d times, want %d:\n%s", strict, got, want, &log)
		}
		if got, want := strings.Count(log.String(), "host="), map[bool]int{false: maxNamesLogged, true: 0}[strict]; got != want {
			t.Errorf("strict=%v: %d host names logged, want %d", strict, got, want)
		}
	}
}

// takePort holds a free loopback port for the rest of the test.
func takePort(t *testing.T) int {
	t.Helper()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	return taken.Addr().(*net.TCPAddr).Port
}

// TestServer_ListenSearchesPastATakenMainPort: with PortSearch, a taken main
// port moves the server to the next free one and says so; without it, the
// taken port is the error a user sees.
func TestServer_ListenSearchesPastATakenMainPort(t *testing.T) {
	port := takePort(t)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))

	strict := New(Options{Host: "127.0.0.1", Port: port, Logger: logger}, []Service{&fakeService{}})
	if err := strict.Listen(); err == nil || err.Error() != fmt.Sprintf("port %d is already in use on 127.0.0.1", port) {
		t.Errorf("without PortSearch: %v", err)
	}

	s := New(Options{Host: "127.0.0.1", Port: port, PortSearch: 10, Logger: logger}, []Service{&fakeService{}})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	defer s.closeListeners()
	got := s.Port("fake")
	if got <= port || got > port+10 {
		t.Errorf("serving on %d, want one of the 10 ports after %d", got, port)
	}
	if want := fmt.Sprintf("port %d is already in use; serving on %d instead", port, got); !strings.Contains(log.String(), want) {
		t.Errorf("log %q lacks %q", log.String(), want)
	}
}

// TestServer_StrictPortsHoldsOnlyNamedPorts: with StrictPorts a taken port
// firebase.json names is the error; a taken default port (firebase-tools'
// 4400 for the hub, say) is replaced by the next free one, as firebase-tools
// picks its hub's and UI's.
func TestServer_StrictPortsHoldsOnlyNamedPorts(t *testing.T) {
	port := takePort(t)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))

	named := New(Options{Host: "127.0.0.1", StrictPorts: true, Logger: logger,
		ExtraPorts: []ServicePort{{Service: "hub", Port: port}}}, []Service{&fakeService{}})
	if err := named.Listen(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("hub: port %d is already in use", port)) {
		t.Errorf("a taken named port under StrictPorts: %v", err)
	}

	s := New(Options{Host: "127.0.0.1", StrictPorts: true, Logger: logger,
		ExtraPorts: []ServicePort{{Service: "hub", Port: port, Default: true}}}, []Service{&fakeService{}})
	if err := s.Listen(); err != nil {
		t.Fatalf("a taken default port under StrictPorts: %v", err)
	}
	defer s.closeListeners()
	got, own := s.OwnPort("hub")
	if !own || got <= port || got > port+defaultPortSearch {
		t.Errorf("hub on %d (own port %v), want one of the ports after %d", got, own, port)
	}
	if want := fmt.Sprintf("port %d for hub is taken; hub listens on %d instead", port, got); !strings.Contains(log.String(), want) {
		t.Errorf("log %q lacks %q", log.String(), want)
	}
}

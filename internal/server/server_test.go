package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

func TestServer_ExportReplacesThePreviousExportWhole(t *testing.T) {
	svc := &fakeService{}
	s := New(Options{}, []Service{svc})
	dir := filepath.Join(t.TempDir(), "export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "stale_export"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Export(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, ","); got != "README.md,fake_export,firebase-export-metadata.json" {
		t.Errorf("export folder holds %s", got)
	}
	siblings, _ := os.ReadDir(filepath.Dir(dir))
	if len(siblings) != 1 {
		t.Errorf("temporary folders left beside the export: %v", siblings)
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
	}{
		{"/emulator/v1/export", `{"path":"` + filepath.Join(dir, "out") + `"}`, 200},
		{"/emulator/v1/import", `{"path":"` + dir + `"}`, 200},
		{"/emulator/v1/import", `{"path":"` + filepath.Join(dir, "missing") + `"}`, 500},
		{"/emulator/v1/export", `not json`, 400},
	} {
		resp, err := http.Post(ts.URL+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("POST %s %s = %d, want %d", tc.path, tc.body, resp.StatusCode, tc.want)
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
		s := New(Options{Strict: strict}, []Service{adminService{}})
		s.ready.Store(true)
		ts := httptest.NewServer(s.Handler())
		for _, tc := range []struct {
			method, path string
			local, want  int
		}{
			{"DELETE", "/emulator/v1/projects/p/state", 200, 403},
			{"POST", "/emulator/v1/projects/p/state", 404, 403},
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
		ts.Close()
	}
}

// TestServer_ListenSearchesPastATakenMainPort: with PortSearch, a taken main
// port moves the server to the next free one and says so; without it, the
// taken port is the error a user sees.
func TestServer_ListenSearchesPastATakenMainPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
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

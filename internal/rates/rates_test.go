package rates_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/loupe-dev/loupe/internal/rates"
	"github.com/loupe-dev/loupe/internal/server"
)

// demoData is the repository's emulator-data folder, whose table make run serves.
func demoData() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "emulator-data")
}

func serve(t *testing.T, env server.Env) *httptest.Server {
	t.Helper()
	s := rates.New(env)
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	routes := &server.Routes{HTTP: server.NewMux()}
	s.Register(routes)
	srv := httptest.NewServer(routes.HTTP)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, base string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(srv.URL + rates.Path + base)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// TestService_ServesTheDemoTable answers the real service's v4 shape from
// the demo table, re-based for other bases, and keeps the imported table in
// the data dir for runs without --import.
func TestService_ServesTheDemoTable(t *testing.T) {
	data := t.TempDir()
	srv := serve(t, server.Env{ImportDir: demoData(), DataDir: data})
	code, usd := get(t, srv, "USD")
	if code != http.StatusOK || usd["base"] != "USD" || usd["date"] != "2026-11-21" || usd["provider"] == nil || usd["time_last_updated"] == nil {
		t.Fatalf("USD = %d %v", code, usd)
	}
	r := usd["rates"].(map[string]any)
	if r["EUR"] != 0.8659 || r["USD"] != 1.0 || len(r) < 45 {
		t.Errorf("USD rates: EUR %v, USD %v, %d codes", r["EUR"], r["USD"], len(r))
	}
	code, eur := get(t, srv, "EUR")
	er := eur["rates"].(map[string]any)
	if code != http.StatusOK || eur["base"] != "EUR" || er["EUR"] != 1.0 || er["USD"] != 1.15487 || er["GBP"] != 0.879663 {
		t.Errorf("EUR = %d %v", code, eur)
	}
	if code, out := get(t, srv, "XYZ"); code != http.StatusNotFound || out["error-type"] != "unsupported-code" {
		t.Errorf("XYZ = %d %v", code, out)
	}

	kept := serve(t, server.Env{DataDir: data})
	if code, out := get(t, kept, "USD"); code != http.StatusOK || out["date"] != "2026-11-21" {
		t.Errorf("after a restart without --import: %d %v", code, out)
	}
}

// TestService_NoTable answers 503 for every base, so the app shows USD.
func TestService_NoTable(t *testing.T) {
	srv := serve(t, server.Env{DataDir: t.TempDir()})
	if code, out := get(t, srv, "USD"); code != http.StatusServiceUnavailable || out["result"] != "error" {
		t.Errorf("USD without a table = %d %v", code, out)
	}
}

// TestService_RejectsABadTable fails Open instead of serving wrong prices.
func TestService_RejectsABadTable(t *testing.T) {
	for name, body := range map[string]string{
		"not json":      `{`,
		"no rates":      `{"base":"USD","rates":{}}`,
		"negative rate": `{"base":"USD","rates":{"EUR":-1}}`,
		"bad code":      `{"base":"USD","rates":{"EURO":0.9}}`,
		"tiny rate":     `{"base":"USD","rates":{"EUR":1e-320}}`,
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, rates.TableFile)
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		_ = os.WriteFile(path, []byte(body), 0o644)
		if err := rates.New(server.Env{ImportDir: dir}).Open(context.Background()); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
}

// FuzzService_Table loads arbitrary tables: Open never panics, and a table
// it accepts quotes every base it holds with positive rates.
func FuzzService_Table(f *testing.F) {
	demo, err := os.ReadFile(filepath.Join(demoData(), rates.TableFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add([]byte(`{"base":"USD","rates":{"EUR":0.9,"JPY":150}}`))
	f.Add([]byte(`{"base":"USD","rates":{"EUR":1e-320}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, rates.TableFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := rates.New(server.Env{ImportDir: dir})
		if err := s.Open(context.Background()); err != nil {
			return
		}
		var table rates.Table
		_ = json.Unmarshal(data, &table)
		for base := range table.Rates {
			q, ok := table.Quote(base)
			if !ok {
				continue
			}
			for code, r := range q.Rates {
				if !(r > 0) || math.IsInf(r, 0) {
					t.Fatalf("%s→%s = %v", base, code, r)
				}
			}
		}
	})
}

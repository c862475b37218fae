package stripe

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/wal"
)

// openService opens a stand-in kept in dir and serves it.
func openService(t *testing.T, dir string) (*Service, *httptest.Server) {
	t.Helper()
	s := New(server.Env{DataDir: dir}, func(http.ResponseWriter, *http.Request) bool { return false })
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	routes := &server.Routes{HTTP: server.NewMux()}
	s.Register(routes)
	srv := httptest.NewServer(routes.HTTP)
	t.Cleanup(func() { srv.Close(); s.Close() })
	return s, srv
}

// call sends form to srv's path with the local key and an Idempotency-Key
// when key is not "", and returns the status and the JSON answer.
func call(t *testing.T, srv *httptest.Server, method, path, key string, form url.Values) (int, map[string]any) {
	t.Helper()
	// Not loupetest.Call: loupetest runs loupe in process, which imports
	// this package.
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+SecretKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// failingFile fails every write, as a full disk does.
type failingFile struct{ wal.File }

func (failingFile) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestStore_FailedWriteChangesNothing: a change the disk refuses fails
// with Stripe's api_error, is not visible afterwards, does not keep its
// Idempotency-Key, and is not in the log; once the disk takes writes
// again the same request succeeds.
func TestStore_FailedWriteChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s, srv := openService(t, dir)
	account := url.Values{"type": {"express"}, "email": {"kept@example.com"}}
	code, kept := call(t, srv, http.MethodPost, "/v1/accounts", "", account)
	if code != http.StatusOK {
		t.Fatalf("create = %d %v", code, kept)
	}
	good := s.log.SwapFile(nil)
	s.log.SwapFile(failingFile{good})
	code, out := call(t, srv, http.MethodPost, "/v1/accounts", "k-full", url.Values{"type": {"express"}})
	if e, _ := out["error"].(map[string]any); code != http.StatusInternalServerError || e["type"] != "api_error" {
		t.Fatalf("create on a full disk = %d %v, want 500 api_error", code, out)
	}
	s.mu.Lock()
	n, answered := len(s.accounts), len(s.answered)
	s.mu.Unlock()
	if n != 1 || answered != 0 {
		t.Errorf("after the refused change: %d accounts, %d kept answers; want 1 and 0", n, answered)
	}
	s.log.SwapFile(good)
	code, out = call(t, srv, http.MethodPost, "/v1/accounts", "k-full", url.Values{"type": {"express"}})
	if code != http.StatusOK || out["id"] == nil || out["id"] == kept["id"] {
		t.Fatalf("retry once the disk has room = %d %v", code, out)
	}
	srv.Close()
	s.Close()

	reopened, srv := openService(t, dir)
	for _, id := range []any{kept["id"], out["id"]} {
		if code, got := call(t, srv, http.MethodGet, "/v1/accounts/"+id.(string), "", nil); code != http.StatusOK || got["id"] != id {
			t.Errorf("account %v after reopening = %d %v", id, code, got)
		}
	}
	if n := len(reopened.accounts); n != 2 {
		t.Errorf("reopened with %d accounts, want 2", n)
	}
}

// TestStore_CompactsAndForgetsOldAnswers: opening rewrites the log one
// object a record, and drops idempotent answers older than a day, as
// Stripe forgets its keys, and expired account links.
func TestStore_CompactsAndForgetsOldAnswers(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-25 * time.Hour).Unix()
	var lines []byte
	for _, change := range [][]entry{
		{{Account: &storedAccount{account: account{ID: "acct_1", Object: "account", Type: "express"}}}, {Answer: &storedAnswer{"/v1/accounts old", 200, `{"id":"acct_1"}`, old, ""}}},
		{{Account: &storedAccount{account: account{ID: "acct_1", Object: "account", Type: "express", ChargesEnabled: true}}}},
		{{Link: &storedLink{"gone", link{Account: "acct_1", ExpiresAt: old}}}},
		{{Answer: &storedAnswer{"/v1/accounts new", 200, `{"id":"acct_1"}`, time.Now().Unix(), "type=express"}}},
	} {
		payload, err := encodeChange(change)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, wal.Frame(payload)...)
	}
	if err := os.WriteFile(filepath.Join(dir, logName), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := openService(t, dir)
	if a := s.accounts["acct_1"]; a == nil || !a.ChargesEnabled {
		t.Errorf("acct_1 = %+v, want its last version", a)
	}
	if _, ok := s.answered["/v1/accounts old"]; ok || len(s.answered) != 1 || len(s.links) != 0 {
		t.Errorf("kept answers %v and links %v, want only the new answer", s.answered, s.links)
	}
	if n := s.log.Records(); n != 2 {
		t.Errorf("the compacted log holds %d records, want 2 (the account, the new answer)", n)
	}
}

// FuzzDecodeChange: a log record either decodes into entries that encode
// and decode back to themselves, or is an error; nothing panics, and
// applying what decodes is safe.
func FuzzDecodeChange(f *testing.F) {
	for _, seed := range []string{
		`[{"account":{"id":"acct_1","object":"account","type":"express","metadata":{"uid":"u"},"charges_enabled":true,"payouts_enabled":false,"details_submitted":false,"created":1,"loupe_api_version":"2025-01-01"}}]`,
		`[{"session":{"id":"cs_test_1","object":"checkout.session","mode":"payment","status":"complete","payment_intent":"pi_1","url":null,"metadata":{},"loupe":{"product":"P","intent_metadata":{"requestId":"r"}}}},{"payment_intent":{"id":"pi_1","latest_charge":"ch_1"}},{"charge":{"id":"ch_1","amount":5}}]`,
		`[{"refund":{"id":"re_1","reason":null}},{"answer":{"key":"/v1/refunds k","status":200,"body":"{}\n","created":5}}]`,
		`[{"link":{"id":"l","account":"acct_1","expires_at":9}},{"unlink":"l"}]`,
		`[]`, `[{}]`, `[{"account":{"id":""}}]`, `[{"charge":{"id":"ch_1"},"refund":{"id":"re_1"}}]`, `[{"nope":1}]`, `{"account":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		entries, err := decodeChange(payload)
		if err != nil {
			return
		}
		again, err := encodeChange(entries)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", payload, err)
		}
		back, err := decodeChange(again)
		if err != nil {
			t.Fatalf("%q decodes, its encoding %q does not: %v", payload, again, err)
		}
		if twice, _ := encodeChange(back); !bytes.Equal(twice, again) {
			t.Fatalf("round trip changed %q into %q", again, twice)
		}
		o := newObjects()
		for _, e := range entries {
			o.apply(e)
		}
		o.snapshot()
	})
}

// FuzzParseExport: an export file either loads or fails naming its line;
// what loads writes back out and loads the same.
func FuzzParseExport(f *testing.F) {
	f.Add([]byte("{\"account\":{\"id\":\"acct_1\",\"metadata\":{}}}\n{\"charge\":{\"id\":\"ch_1\",\"amount\":3897,\"receipt_url\":\"http://x/r\"}}\n"))
	f.Add([]byte("\n\n{\"answer\":{\"key\":\"k\",\"status\":200,\"body\":\"{}\",\"created\":1}}"))
	f.Add([]byte("{\"account\":{\"id\":\"a\"}}{\"account\":{\"id\":\"b\"}}\n"))
	f.Add([]byte("not json\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := parseExport("objects.jsonl", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "objects.jsonl line ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		dir := t.TempDir()
		entries := o.snapshot()
		if err := writeExport(dir, entries); err != nil {
			t.Fatal(err)
		}
		back, err := readExport(dir)
		if err != nil {
			t.Fatalf("an export loupe wrote does not load: %v", err)
		}
		a, _ := json.Marshal(entries)
		b, _ := json.Marshal(back.snapshot())
		if !bytes.Equal(a, b) {
			t.Fatalf("export round trip changed\n%s\ninto\n%s", a, b)
		}
	})
}

// TestStore_ImportOfADamagedExportChangesNothing names the line and keeps
// the objects as they were.
func TestStore_ImportOfADamagedExportChangesNothing(t *testing.T) {
	s, srv := openService(t, t.TempDir())
	if code, _ := call(t, srv, http.MethodPost, "/v1/accounts", "", url.Values{"type": {"express"}}); code != http.StatusOK {
		t.Fatal(code)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, exportDir), 0o755); err != nil {
		t.Fatal(err)
	}
	data := "{\"account\":{\"id\":\"acct_2\"}}\n{\"account\":{\"id\":\"acct_3\",\"typo\":1}}\n"
	if err := os.WriteFile(filepath.Join(dir, exportDir, exportFile), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	err := s.Import(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), exportFile+" line 2") {
		t.Fatalf("import of a damaged file: %v, want an error naming line 2", err)
	}
	if n := len(s.accounts); n != 1 {
		t.Errorf("%d accounts after the failed import, want the 1 before it", n)
	}
	if err := s.Import(context.Background(), t.TempDir()); err != nil || len(s.accounts) != 1 {
		t.Errorf("import without a Stripe part: %v, %d accounts; want nothing changed", err, len(s.accounts))
	}
}

// TestStore_ClearEmptiesTheLog: DELETE /emulator/v1/stripe removes every
// object and kept answer, also from the log, so they stay gone after a
// restart; a reused Idempotency-Key then creates anew.
func TestStore_ClearEmptiesTheLog(t *testing.T) {
	dir := t.TempDir()
	s, srv := openService(t, dir)
	_, first := call(t, srv, http.MethodPost, "/v1/accounts", "k-1", url.Values{"type": {"express"}})
	if code, out := call(t, srv, http.MethodDelete, "/emulator/v1/stripe", "", nil); code != http.StatusOK {
		t.Fatalf("clear = %d %v", code, out)
	}
	if code, _ := call(t, srv, http.MethodGet, "/v1/accounts/"+first["id"].(string), "", nil); code != http.StatusNotFound {
		t.Errorf("the account after clearing = %d, want 404", code)
	}
	srv.Close()
	s.Close()
	_, srv = openService(t, dir)
	if code, _ := call(t, srv, http.MethodGet, "/v1/accounts/"+first["id"].(string), "", nil); code != http.StatusNotFound {
		t.Errorf("the account after clearing and reopening = %d, want 404", code)
	}
	if _, again := call(t, srv, http.MethodPost, "/v1/accounts", "k-1", url.Values{"type": {"express"}}); again["id"] == nil || again["id"] == first["id"] {
		t.Errorf("k-1 after clearing answered %v, want a new account", again)
	}
}

package loupetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The helpers tests across packages share: calls to a running loupe over
// its REST APIs, polling, and process memory.

// client keeps enough idle connections for tests that call in parallel.
var client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 64}}

// IdentityToolkit is the path prefix of the Identity Toolkit's account methods.
const IdentityToolkit = "/identitytoolkit.googleapis.com/v1/accounts:"

// PostJSON posts body to url, with bearer as the Authorization token when
// not "", and decodes the answer into out when not nil. A string or
// []byte body is sent as it is, anything else as its JSON; out may be a
// *string for the raw answer. It returns the HTTP status.
func PostJSON(ctx context.Context, url, bearer string, body, out any) (int, error) {
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	case []byte:
		data = b
	default:
		var err error
		if data, err = json.Marshal(body); err != nil {
			return 0, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	switch o := out.(type) {
	case nil:
	case *string:
		*o = string(raw)
	default:
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return resp.StatusCode, fmt.Errorf("decode %s answer %q: %w", url, raw, err)
			}
		}
	}
	return resp.StatusCode, nil
}

// SignUp creates an e-mail account through the Identity Toolkit at base
// (a loupe URL) and returns its uid and ID token.
func SignUp(ctx context.Context, base, email, password string) (uid, idToken string, err error) {
	var out struct {
		LocalID string `json:"localId"`
		IDToken string `json:"idToken"`
	}
	code, err := PostJSON(ctx, base+IdentityToolkit+"signUp?key=fake", "",
		map[string]any{"email": email, "password": password, "returnSecureToken": true}, &out)
	if err != nil {
		return "", "", err
	}
	if code != http.StatusOK || out.LocalID == "" {
		return "", "", fmt.Errorf("signUp %s: HTTP %d", email, code)
	}
	return out.LocalID, out.IDToken, nil
}

// RESTCommit commits body (a CommitRequest, as JSON or a string) to
// database ("projects/P/databases/D") over Firestore's REST API at base,
// as bearer, and decodes the answer into out (see PostJSON).
func RESTCommit(ctx context.Context, base, database, bearer string, body, out any) (int, error) {
	return PostJSON(ctx, base+"/v1/"+database+"/documents:commit", bearer, body, out)
}

// Eventually polls cond until it holds, failing the test after ten seconds.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// RSSKiB is a process's resident set size in KiB, from /proc; the test is
// skipped where that cannot be read.
func RSSKiB(t testing.TB, pid int) int {
	t.Helper()
	return procStatusKiB(t, pid, "VmRSS")
}

// PeakRSSKiB is the largest resident set size a process has had, in KiB
// (VmHWM); the test is skipped where that cannot be read.
func PeakRSSKiB(t testing.TB, pid int) int {
	t.Helper()
	return procStatusKiB(t, pid, "VmHWM")
}

// procStatusKiB reads the field (in kB) of a process's /proc status.
func procStatusKiB(t testing.TB, pid int, field string) int {
	t.Helper()
	n, err := ProcStatusKiB(pid, field)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		t.Skipf("resident memory not readable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ProcStatusKiB reads the field (in kB, as VmRSS or VmHWM) of a process's
// /proc status; an error once the process is gone (or a zombie).
func ProcStatusKiB(pid int, field string) (int, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return 0, fmt.Errorf("%s %q: %v", field, rest, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// RepoFile is the absolute path of a file in the repository, e.g.
// RepoFile("firestore.rules").
func RepoFile(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", name)
}

// Rules writes a firebase.json naming the given rules files ("" leaves a
// service without one) and returns its path, for Options.Config.
func Rules(t testing.TB, firestoreRules, storageRules string) string {
	t.Helper()
	cfg := map[string]any{}
	if firestoreRules != "" {
		cfg["firestore"] = map[string]string{"rules": firestoreRules}
	}
	if storageRules != "" {
		cfg["storage"] = map[string]string{"rules": storageRules}
	}
	data, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Post is PostJSON for a test's own goroutine: a failed request fails the
// test, and the answer comes back as a JSON object (nil when it is not one).
func Post(t testing.TB, url, bearer string, body any) (int, map[string]any) {
	t.Helper()
	var raw string
	code, err := PostJSON(context.Background(), url, bearer, body, &raw)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(raw), &out)
	return code, out
}

// MockToken is an unsigned ID token for uid, as @firebase/rules-unit-testing
// makes them for the emulators (no signature, never expiring).
func MockToken(uid string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+uid+`","user_id":"`+uid+`","iat":0,"exp":9999999999}`)) + "."
}

// FreePorts returns n distinct ports of 127.0.0.1 that were free a moment
// ago, for a firebase.json that names ports.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// WaitForFunctions waits until inst's functions process runs (building it
// can take minutes on a cold cache) and returns its URL; it fails t if the
// build fails or it is not running after 4 minutes. With
// --strict-credentials it asks on the admin port.
func WaitForFunctions(t testing.TB, inst *Instance) string {
	t.Helper()
	status := inst.URL + "/emulator/v1/functions"
	if inst.AdminHost != "" {
		status = "http://" + inst.AdminHost + "/emulator/v1/functions"
	}
	req, _ := http.NewRequest(http.MethodGet, status, nil)
	req.Header.Set("Authorization", "Bearer owner")
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var st struct{ State, Detail, URL string }
		if resp, err := client.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		switch {
		case st.State == "running":
			return st.URL
		case st.State == "failed":
			t.Fatalf("functions failed: %s", st.Detail)
		case time.Now().After(deadline):
			t.Fatalf("functions still %q after 4 minutes", st.State)
		}
	}
}

// Timed runs f b.N times and reports its p50 and p99 latency in
// microseconds; an error fails the benchmark.
func Timed(b *testing.B, f func() error) {
	b.Helper()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}

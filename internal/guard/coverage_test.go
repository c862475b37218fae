package guard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(data)
}

// TestGuard_MissingRulesFile: firebase-tools warns and runs the emulator
// open when firebase.json names a rules file that does not exist; --strict
// makes it an error.
func TestGuard_MissingRulesFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore":{"rules":"missing.rules"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(loupetest.Binary(t), "serve", "--port", "0", "--in-memory", "--config", cfg, "--strict").CombinedOutput()
	if err == nil || !strings.Contains(string(out), filepath.Join(dir, "missing.rules")+", named in firebase.json, does not exist") {
		t.Errorf("--strict with a missing rules file: err=%v, output:\n%s", err, out)
	}

	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	if log := inst.Log(); !strings.Contains(log, "missing.rules named in firebase.json does not exist") || !strings.Contains(log, "runs open") {
		t.Errorf("no warning about the missing file:\n%s", log)
	}
	ctx := context.Background()
	notes := userClient(t, inst, "demo-loupe", "(default)", "alice").Doc("notes/n1")
	if _, err := notes.Set(ctx, map[string]any{"n": 1}); err != nil {
		t.Errorf("write with no rules file: %v, want it allowed", err)
	}
	// The file appears: its rules apply from then on.
	if err := os.WriteFile(filepath.Join(dir, "missing.rules"), []byte(notesRules("false")), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := notes.Set(ctx, map[string]any{"n": 2})
		if status.Code(err) == codes.PermissionDenied {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("write after the rules file appeared: %v, want PERMISSION_DENIED", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGuard_RuleCoverage checks GET :ruleCoverage and :ruleCoverage.html
// after Go SDK requests, in the Firestore emulator's report shape.
func TestGuard_RuleCoverage(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	source := notesRules("request.auth.uid == 'alice'")
	putProjectRules(t, inst, "demo-cov", source)
	ctx := context.Background()
	if _, err := userClient(t, inst, "demo-cov", "(default)", "alice").Doc("notes/a").Set(ctx, map[string]any{"n": 1}); err != nil {
		t.Fatalf("alice writes: %v", err)
	}
	bob := userClient(t, inst, "demo-cov", "(default)", "bob")
	for range 2 {
		if _, err := bob.Doc("notes/b").Set(ctx, map[string]any{"n": 1}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("bob writes: %v, want PERMISSION_DENIED", err)
		}
	}
	code, ctype, body := get(t, inst.URL+"/emulator/v1/projects/demo-cov:ruleCoverage")
	var report struct {
		Rules struct {
			Files []struct{ Name, Content string }
		}
		Report []struct {
			SourcePosition struct{ Line, Column, CurrentOffset, EndOffset int }
			Values         []struct {
				Value map[string]any
				Count int
			}
			Children []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(body), &report); err != nil || code != 200 || !strings.HasPrefix(ctype, "application/json") {
		t.Fatalf("ruleCoverage: %d %s %s", code, ctype, body)
	}
	if len(report.Rules.Files) != 1 || report.Rules.Files[0].Content != source || len(report.Report) != 1 {
		t.Fatalf("report = %s", body)
	}
	top := report.Report[0]
	if got := source[top.SourcePosition.CurrentOffset : top.SourcePosition.EndOffset+1]; got != "request.auth.uid == 'alice'" {
		t.Errorf("top expression covers %q", got)
	}
	counts := map[any]int{}
	for _, v := range top.Values {
		counts[v.Value["boolValue"]] = v.Count
	}
	if counts[true] != 1 || counts[false] != 2 || len(top.Children) != 1 {
		t.Errorf("values = %+v (children %d), want true once and false twice, one child (the literal is left out)", top.Values, len(top.Children))
	}
	// Another project has its own (empty) report.
	if _, _, other := get(t, inst.URL+"/emulator/v1/projects/demo-other:ruleCoverage"); strings.Contains(other, "alice") {
		t.Errorf("demo-other's coverage shows demo-cov's rules: %s", other)
	}
	code, ctype, page := get(t, inst.URL+"/emulator/v1/projects/demo-cov:ruleCoverage.html")
	if code != 200 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(page, `class="false"`) || !strings.Contains(page, "== &#39;alice&#39;") || !strings.Contains(page, `data-line="1"`) {
		t.Errorf("ruleCoverage.html: %d %s\n%s", code, ctype, page)
	}
}

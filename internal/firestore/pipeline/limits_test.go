package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// startWithRules runs loupe with the Enterprise database "ent" under
// rules that let anyone read open/ and nobody read secret/.
func startWithRules(t testing.TB, process bool) *loupetest.Instance {
	t.Helper()
	dir := t.TempDir()
	rules := `rules_version = '2';
service cloud.firestore { match /databases/{db}/documents {
  match /open/{d} { allow read: if true; }
  match /secret/{d} { allow read: if false; }
} }`
	files := map[string]string{
		"firestore.rules": rules,
		"firebase.json":   `{"firestore": [{"database": "ent", "edition": "enterprise", "rules": "firestore.rules"}]}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return loupetest.Start(t, loupetest.Options{InMemory: true, Process: process, Config: filepath.Join(dir, "firebase.json")})
}

// executeREST runs stages (the JSON of a pipeline's stages) through REST
// :executePipeline on "ent" as nobody, as a page would, and returns the
// status and the error's status and message.
func executeREST(t testing.TB, inst *loupetest.Instance, stages string) (int, string, string) {
	t.Helper()
	body := `{"structuredPipeline": {"pipeline": {"stages": [` + stages + `]}}}`
	resp, err := http.Post(inst.URL+"/v1/projects/"+project+"/databases/ent/documents:executePipeline", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out []struct {
		Error struct{ Status, Message string }
	}
	var one struct {
		Error struct{ Status, Message string }
	}
	if json.Unmarshal(raw, &out) == nil && len(out) > 0 {
		one.Error = out[0].Error
	} else {
		_ = json.Unmarshal(raw, &one)
	}
	return resp.StatusCode, one.Error.Status, one.Error.Message
}

// literalsOf1MB is a pipeline's stages that read no document and make
// rows 1 MB rows from a few literals: literals → unnest → add_fields(
// string_repeat) → aggregate.
func literalsOf1MB(rows int) string {
	var n []string
	for i := range rows {
		n = append(n, `{"integerValue": "`+strings.Repeat("1", 1+i%3)+`"}`)
	}
	return `{"name": "literals", "args": [{"mapValue": {"fields": {"n": {"arrayValue": {"values": [` + strings.Join(n, ",") + `]}}}}}]},
		{"name": "unnest", "args": [{"fieldReferenceValue": "n"}, {"fieldReferenceValue": "i"}]},
		{"name": "add_fields", "args": [{"mapValue": {"fields": {"big": {"functionValue": {"name": "string_repeat",
			"args": [{"stringValue": "x"}, {"integerValue": "1000000"}]}}}}}]},
		{"name": "aggregate", "args": [{"mapValue": {"fields": {"rows": {"functionValue": {"name": "count"}}}}}]}`
}

// TestLimits_LiteralsCountAgainstTheDefaultMemoryLimit: a pipeline that
// reads no document (so no rule applies) and makes 200 rows of 1 MB from a
// few literals fails with RESOURCE_EXHAUSTED under the default memory
// limit (128 MiB) as it passes it, though the request sets no memory_limit.
func TestLimits_LiteralsCountAgainstTheDefaultMemoryLimit(t *testing.T) {
	inst := startWithRules(t, false)
	stages := literalsOf1MB(200)
	code, status, msg := executeREST(t, inst, stages)
	if code != http.StatusTooManyRequests || status != "RESOURCE_EXHAUSTED" || !strings.Contains(msg, "memory limit of 134217728 bytes") {
		t.Errorf("unbounded literals pipeline: HTTP %d %s %q, want 429 RESOURCE_EXHAUSTED naming the 128 MiB limit", code, status, msg)
	}
	// A small one still runs.
	small := strings.Replace(stages, `"1000000"`, `"1000"`, 1)
	if code, status, msg := executeREST(t, inst, small); code != http.StatusOK {
		t.Errorf("small literals pipeline: HTTP %d %s %q", code, status, msg)
	}
}

// TestLimits_RulesDenialInASubqueryIsPermissionDenied: a subquery the
// rules deny fails the pipeline with PERMISSION_DENIED, as the same read
// outside a subquery does, not INVALID_ARGUMENT.
func TestLimits_RulesDenialInASubqueryIsPermissionDenied(t *testing.T) {
	inst := startWithRules(t, false)
	sub := func(collection string) string {
		return `{"name": "literals", "args": [{"mapValue": {"fields": {"k": {"integerValue": "1"}}}}]},
		{"name": "add_fields", "args": [{"mapValue": {"fields": {"s": {"functionValue": {"name": "array",
			"args": [{"pipelineValue": {"stages": [{"name": "collection", "args": [{"referenceValue": "/` + collection + `"}]}]}}]}}}}}]}`
	}
	if code, status, msg := executeREST(t, inst, `{"name": "collection", "args": [{"referenceValue": "/secret"}]}`); code != http.StatusForbidden {
		t.Errorf("denied read at the top: HTTP %d %s %q, want 403", code, status, msg)
	}
	if code, status, msg := executeREST(t, inst, sub("secret")); code != http.StatusForbidden || status != "PERMISSION_DENIED" {
		t.Errorf("denied read in a subquery: HTTP %d %s %q, want 403 PERMISSION_DENIED", code, status, msg)
	}
	if code, status, msg := executeREST(t, inst, sub("open")); code != http.StatusOK {
		t.Errorf("allowed read in a subquery: HTTP %d %s %q, want 200", code, status, msg)
	}
}

// BenchmarkServe_UnboundedPipelineRSS: against a real loupe serve, four
// anonymous callers at a time send a 1,000-row literals pipeline that
// would make 1 GB (it fails at the default 128 MiB memory limit), while
// another client commits one document at a time: it reports loupe's peak
// RSS and that client's commit latency.
func BenchmarkServe_UnboundedPipelineRSS(b *testing.B) {
	inst := startWithRules(b, true)
	hostile := literalsOf1MB(1000)
	done := make(chan struct{})
	var durations []time.Duration
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			start := time.Now()
			body := fmt.Sprintf(`{"writes": [{"update": {"name": "projects/%s/databases/ent/documents/w/d%d", "fields": {"n": {"integerValue": "%d"}}}}]}`, project, i%100, i)
			if code, err := loupetest.RESTCommit(context.Background(), inst.URL, "projects/"+project+"/databases/ent", "owner", body, nil); err != nil || code != 200 {
				b.Errorf("commit: HTTP %d %v", code, err)
				return
			}
			durations = append(durations, time.Since(start))
		}
	}()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if code, status, _ := executeREST(b, inst, hostile); code != http.StatusTooManyRequests {
					b.Errorf("hostile pipeline: HTTP %d %s, want 429", code, status)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	close(done)
	<-writer
	b.ReportMetric(float64(loupetest.PeakRSSKiB(b, inst.PID()))/1024, "peak-RSS-MiB")
	if len(durations) > 0 {
		slices.Sort(durations)
		b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "commit-p99-ms")
	}
}

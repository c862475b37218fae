package firestore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// BenchmarkServe_DeclaredIndexFirstQuery starts `loupe serve` on the data
// dir of BenchmarkServe_QueryLimit20 (1,000,000 documents of about 1 KiB)
// with (group ASC, n DESC) declared in firestore.indexes.json, waits until
// the admin endpoint reports the declared indexes built (build-after-healthy-ms:
// from answering /healthz to built), then runs the query the index serves:
// first-query-ms is its first run, p50/p99 the runs after.
func BenchmarkServe_DeclaredIndexFirstQuery(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "firestore.indexes.json"), []byte(`{"indexes": [{"collectionGroup": "items", "queryScope": "COLLECTION",
		"fields": [{"fieldPath": "group", "order": "ASCENDING"}, {"fieldPath": "n", "order": "DESCENDING"}]}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(dir, "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore": {"indexes": "firestore.indexes.json"}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	data := bigDataDir(b)
	start := time.Now()
	inst := loupetest.Start(b, loupetest.Options{Process: true, DataDir: data, Config: cfg, Args: []string{"--enforce-indexes"}})
	healthy := time.Since(start)
	for {
		resp, err := http.Get(inst.URL + "/emulator/v1/projects/" + project + "/databases/(default)/indexes")
		if err != nil {
			b.Fatal(err)
		}
		var st struct{ Ready bool }
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		if st.Ready {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	built := time.Since(start) - healthy
	run := group7Run(context.Background(), dial(b, inst))
	first := time.Now()
	if err := run(); err != nil {
		b.Fatal(err)
	}
	firstQuery := time.Since(first)
	loupetest.Timed(b, run)
	b.ReportMetric(float64(healthy.Milliseconds()), "start-healthy-ms")
	b.ReportMetric(float64(built.Milliseconds()), "build-after-healthy-ms")
	b.ReportMetric(float64(firstQuery.Microseconds())/1000, "first-query-ms")
}

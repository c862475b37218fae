package firestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// BenchmarkServe_MemoryPerDocumentSDK loads 20,000 small documents (a
// string, an integer, a double and a boolean) into an in-memory `loupe
// serve` through the Go SDK in write batches of 500, one batch after another
// ("sequential") and all 40 at once ("concurrent", as a loader that awaits
// its batches together does), and reports the resident memory a second
// later, the bytes per document it grew by over the idle process, and the Go
// heap in use then (issue 22: ≤ 120 MB RSS for this load).
func BenchmarkServe_MemoryPerDocumentSDK(b *testing.B) {
	b.Run("sequential", func(b *testing.B) { memoryPerDocumentSDK(b, 1) })
	b.Run("concurrent", func(b *testing.B) { memoryPerDocumentSDK(b, 40) })
}

func memoryPerDocumentSDK(b *testing.B, parallel int) {
	const docs, batch = 20_000, 500
	ctx := context.Background()
	var idle, loaded int
	var heap float64
	for range b.N {
		inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: true})
		b.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
		client, err := firestore.NewClient(ctx, "demo-loupe")
		if err != nil {
			b.Fatal(err)
		}
		idle = loupetest.RSSKiB(b, inst.PID())
		slots := make(chan struct{}, parallel) // batches in flight
		errs := make(chan error, docs/batch)
		var wg sync.WaitGroup
		for start := 0; start < docs; start += batch {
			//lint:ignore SA1019 the load is batches of 500, which the SDKs send as WriteBatch commits
			wb := client.Batch()
			for i := start; i < start+batch; i++ {
				wb.Set(client.Doc(fmt.Sprintf("small/d%05d", i)), map[string]any{
					"title": fmt.Sprintf("item %d", i), "n": i, "price": float64(i) / 7, "done": i%2 == 0,
				})
			}
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := wb.Commit(ctx); err != nil {
					errs <- err
				}
				<-slots
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		time.Sleep(time.Second) // as a person would look at the process after the load
		loaded = loupetest.RSSKiB(b, inst.PID())
		heap = heapInuseMiB(b, inst)
		b.StopTimer()
		client.Close()
		inst.Stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(loaded)/1024, "RSS-MiB")
	b.ReportMetric(float64(loaded-idle)*1024/docs, "bytes/doc")
	b.ReportMetric(heap, "heap-MiB")
}

// heapInuseMiB is the Go heap in use of a running loupe, from its
// /emulator/v1/debug/vars.
func heapInuseMiB(b *testing.B, inst *loupetest.Instance) float64 {
	resp, err := http.Get(inst.URL + "/emulator/v1/debug/vars")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var vars struct {
		HeapInuseBytes float64 `json:"heapInuseBytes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		b.Fatal(err)
	}
	return vars.HeapInuseBytes / (1 << 20)
}

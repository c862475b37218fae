package functions

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/triggers"
)

const benchDB = "projects/bench/databases/(default)"

// benchService wires an in-memory engine to the trigger table as loupe serve
// does, with fn as the function: everything but the functions process.
func benchService(b *testing.B, fn http.HandlerFunc) *firestore.Engine {
	b.Helper()
	engine, err := firestore.Open(firestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	function := httptest.NewServer(fn)
	b.Cleanup(function.Close)
	s := &Service{engine: engine, table: triggers.New(triggers.Options{Logger: slog.New(slog.DiscardHandler)})}
	if err := s.table.SetTriggers("default", []triggers.Trigger{{Name: "bench", Source: triggers.Firestore, EventType: triggers.Written,
		Instance: "(default)", Pattern: "events/{e}", Deliver: cloudEventPost{url: function.URL}}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(engine.Subscribe(s.onCommit))
	b.Cleanup(s.table.Close)
	return engine
}

func write(engine *firestore.Engine, id string) error {
	_, err := engine.Commit(context.Background(), identity.Owner, benchDB, []*pb.Write{{
		Operation: &pb.Write_Update{Update: &pb.Document{Name: benchDB + "/documents/events/" + id,
			Fields: map[string]*pb.Value{"n": {ValueType: &pb.Value_StringValue{StringValue: id}}}}},
	}}, nil)
	return err
}

// BenchmarkTrigger_CommitToFunctionStart measures a commit's return to the
// moment its CloudEvent reaches the function (target p50 < 10 ms).
func BenchmarkTrigger_CommitToFunctionStart(b *testing.B) {
	arrived := make(chan time.Time, 1)
	engine := benchService(b, func(w http.ResponseWriter, _ *http.Request) { arrived <- time.Now() })
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		committed := time.Now()
		if err := write(engine, fmt.Sprint(i)); err != nil {
			b.Fatal(err)
		}
		latencies = append(latencies, (<-arrived).Sub(committed))
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkTrigger_SustainedEvents commits b.N documents from 16 writers and
// waits until the function has received every event: events per second,
// with a lost event failing the benchmark.
func BenchmarkTrigger_SustainedEvents(b *testing.B) {
	var received atomic.Int64
	var seen sync.Map
	engine := benchService(b, func(w http.ResponseWriter, r *http.Request) {
		if _, dup := seen.LoadOrStore(r.Header.Get("ce-id"), true); !dup {
			received.Add(1)
		}
	})
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := write(engine, fmt.Sprint(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for deadline := time.Now().Add(time.Minute); received.Load() < int64(b.N); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d events delivered", received.Load(), b.N)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

package firestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// These benchmarks measure a real `loupe serve` over gRPC. The large data
// dir is built once per run with LOUPE_BENCH_DOCS documents of about 1 KiB
// (default 1,000,000) and reused by every benchmark that needs it.

const serveDB = "projects/" + project + "/databases/(default)"

// docBytes is the size of each benchmark document's body field.
const docBytes = 1000

// TestMain removes the large data dir once every benchmark is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

func benchDocs() int {
	if n, err := strconv.Atoi(os.Getenv("LOUPE_BENCH_DOCS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

var (
	bigDirOnce sync.Once
	bigDir     string
	bigDirErr  error
)

// bigDataDir returns a loupe data dir holding benchDocs() documents of
// about 1 KiB in collection items, fields n (unique), group (n % 100), title and body.
func bigDataDir(b *testing.B) string {
	bigDirOnce.Do(func() {
		bigDir, bigDirErr = os.MkdirTemp("", "loupe-bench-")
		if bigDirErr != nil {
			return
		}
		bigDirErr = seedDir(filepath.Join(bigDir, "firestore"), benchDocs())
	})
	if bigDirErr != nil {
		b.Fatal(bigDirErr)
	}
	return bigDir
}

func seedDir(dir string, n int) error {
	e, err := firestore.Open(firestore.Options{Dir: dir})
	if err != nil {
		return err
	}
	body := &pb.Value{ValueType: &pb.Value_StringValue{StringValue: strings.Repeat("x", docBytes)}}
	for i := 0; i < n; i += firestore.MaxWritesPerCommit {
		var writes []*pb.Write
		for j := i; j < min(n, i+firestore.MaxWritesPerCommit); j++ {
			writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
				Name: fmt.Sprintf("%s/documents/items/d%07d", serveDB, j),
				Fields: map[string]*pb.Value{
					"n":     {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(j)}},
					"group": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(j % 100)}},
					"title": {ValueType: &pb.Value_StringValue{StringValue: fmt.Sprint("item ", j)}},
					"body":  body,
				},
			}}})
		}
		if _, err := e.Commit(context.Background(), identity.Owner, serveDB, writes, nil); err != nil {
			e.Close()
			return err
		}
	}
	if err := e.Close(); err != nil {
		return err
	}
	// Opening again folds the log into the snapshot, as a long-running data dir would be.
	e, err = firestore.Open(firestore.Options{Dir: dir})
	if err != nil {
		return err
	}
	return e.Close()
}

// dial connects as the Admin SDKs do in emulator mode: as the owner.
func dial(b *testing.B, inst *loupetest.Instance) pb.FirestoreClient {
	owner := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer owner"), method, req, reply, cc, opts...)
	}
	ownerStream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer owner"), desc, cc, method, opts...)
	}
	conn, err := grpc.NewClient(inst.Host, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(owner), grpc.WithStreamInterceptor(ownerStream))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return pb.NewFirestoreClient(conn)
}

// BenchmarkServe_StartHealthy measures `loupe serve` from exec to /healthz
// answering 200, with an empty data dir and with the large one; the latter
// also reports the server's RSS against the raw document bytes.
func BenchmarkServe_StartHealthy(b *testing.B) {
	for _, tc := range []struct {
		name string
		dir  func() string
	}{
		{"empty", func() string { return b.TempDir() }},
		{fmt.Sprintf("docs=%d", benchDocs()), func() string { return bigDataDir(b) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := tc.dir()
			var rss int
			b.ResetTimer()
			for range b.N {
				inst := loupetest.Start(b, loupetest.Options{Process: true, DataDir: dir})
				b.StopTimer()
				rss = loupetest.RSSKiB(b, inst.PID())
				inst.Stop(b)
				b.StartTimer()
			}
			b.ReportMetric(float64(rss)/1024, "RSS-MiB")
			if tc.name != "empty" {
				b.ReportMetric(float64(rss)*1024/float64(benchDocs()*docBytes), "RSS/raw")
			}
		})
	}
}

// BenchmarkServe_GetDocument compares GetDocument over gRPC with a call the
// server answers with almost no work: listing the collections of an empty
// database (a full unary round trip with an empty response).
func BenchmarkServe_GetDocument(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: true})
	client := dial(b, inst)
	ctx := context.Background()
	name := serveDB + "/documents/items/one"
	if _, err := client.Commit(ctx, &pb.CommitRequest{Database: serveDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
		Name: name, Fields: map[string]*pb.Value{"title": {ValueType: &pb.Value_StringValue{StringValue: "hello"}}},
	}}}}}); err != nil {
		b.Fatal(err)
	}
	b.Run("GetDocument", func(b *testing.B) {
		loupetest.Timed(b, func() error {
			_, err := client.GetDocument(ctx, &pb.GetDocumentRequest{Name: name})
			return err
		})
	})
	b.Run("EmptyCall", func(b *testing.B) {
		loupetest.Timed(b, func() error {
			_, err := client.ListCollectionIds(ctx, &pb.ListCollectionIdsRequest{Parent: "projects/empty/databases/(default)/documents"})
			return err
		})
	})
}

// BenchmarkServe_QueryLimit20 runs `group == 7 order by n desc limit 20`
// over the large data dir through gRPC RunQuery. It also reports how long
// the first query took (it builds the index) and the slowest of the commits
// another client made meanwhile.
func BenchmarkServe_QueryLimit20(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true, DataDir: bigDataDir(b)})
	client := dial(b, inst)
	ctx := context.Background()
	run := group7Run(ctx, client)
	// The first query builds its index; commits made meanwhile should not
	// wait for it. Report the slowest one.
	stop := make(chan struct{})
	slowest := make(chan time.Duration)
	go func() {
		var worst time.Duration
		for i := 0; ; i++ {
			select {
			case <-stop:
				slowest <- worst
				return
			default:
			}
			start := time.Now()
			if _, err := client.Commit(ctx, &pb.CommitRequest{Database: serveDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
				Name: serveDB + "/documents/other/w", Fields: map[string]*pb.Value{"i": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}}},
			}}}}}); err != nil {
				b.Error(err)
			}
			worst = max(worst, time.Since(start))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	if err := run(); err != nil { // builds the indexes
		b.Fatal(err)
	}
	first := time.Since(start)
	close(stop)
	worstCommit := <-slowest
	loupetest.Timed(b, run)
	b.ReportMetric(float64(first.Milliseconds()), "first-query-ms")
	b.ReportMetric(float64(worstCommit.Milliseconds()), "slowest-commit-during-first-query-ms")
	b.ReportMetric(float64(loupetest.RSSKiB(b, inst.PID()))/1024, "RSS-MiB")
}

// group7Run returns a function running group == 7 ordered by n descending,
// limit 20, over items, that fails unless it returns 20 documents.
func group7Run(ctx context.Context, client pb.FirestoreClient) func() error {
	req := &pb.RunQueryRequest{Parent: serveDB + "/documents", QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
		From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}},
		Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
			Field: &pb.StructuredQuery_FieldReference{FieldPath: "group"}, Op: pb.StructuredQuery_FieldFilter_EQUAL,
			Value: &pb.Value{ValueType: &pb.Value_IntegerValue{IntegerValue: 7}},
		}}},
		OrderBy: []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}, Direction: pb.StructuredQuery_DESCENDING}},
		Limit:   wrapperspb.Int32(20),
	}}}
	return func() error {
		stream, err := client.RunQuery(ctx, req)
		if err != nil {
			return err
		}
		n := 0
		for {
			resp, err := stream.Recv()
			if err != nil {
				if n != 20 {
					return fmt.Errorf("got %d documents: %v", n, err)
				}
				return nil
			}
			if resp.GetDocument() != nil {
				n++
			}
		}
	}
}

// BenchmarkServe_CommitDurable compares durable one-document commits from
// 64 concurrent writers (a data dir, so each is fsynced before its answer)
// with empty calls at the same concurrency over the same gRPC connection.
func BenchmarkServe_CommitDurable(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true, DataDir: b.TempDir()})
	client := dial(b, inst)
	ctx := context.Background()
	const writers = 64
	concurrently := func(b *testing.B, call func(i int) error) {
		b.SetParallelism(writers / runtime.GOMAXPROCS(0))
		var next atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(p *testing.PB) {
			for p.Next() {
				if err := call(int(next.Add(1))); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	}
	b.Run("Commit", func(b *testing.B) {
		concurrently(b, func(i int) error {
			_, err := client.Commit(ctx, &pb.CommitRequest{Database: serveDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
				Name:   fmt.Sprintf("%s/documents/writes/w%d", serveDB, i%10000),
				Fields: map[string]*pb.Value{"n": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(i)}}},
			}}}}})
			return err
		})
	})
	b.Run("EmptyCall", func(b *testing.B) {
		concurrently(b, func(int) error {
			_, err := client.ListCollectionIds(ctx, &pb.ListCollectionIdsRequest{Parent: "projects/empty/databases/(default)/documents"})
			return err
		})
	})
}

// BenchmarkServe_CommitToListen measures commit → Listen delivery over gRPC
// on a durable data dir: listeners streams (spread over 8 connections, as
// many clients would be) watch one document; each op commits a new value
// and waits until every stream received it. Reports the p50 and p99 of
// commit start → receipt over all deliveries.
func BenchmarkServe_CommitToListen(b *testing.B) {
	for _, listeners := range []int{1, 1000} {
		b.Run(fmt.Sprintf("listeners=%d", listeners), func(b *testing.B) {
			inst := loupetest.Start(b, loupetest.Options{Process: true, DataDir: b.TempDir()})
			clients := make([]pb.FirestoreClient, 8)
			for i := range clients {
				clients[i] = dial(b, inst)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			name := serveDB + "/documents/listen/doc"
			commit := func(v int) {
				if _, err := clients[0].Commit(ctx, &pb.CommitRequest{Database: serveDB, Writes: []*pb.Write{{Operation: &pb.Write_Update{Update: &pb.Document{
					Name: name, Fields: map[string]*pb.Value{"v": {ValueType: &pb.Value_IntegerValue{IntegerValue: int64(v)}}},
				}}}}}); err != nil {
					b.Fatal(err)
				}
			}
			commit(0)
			type delivery struct {
				v  int64
				at time.Time
			}
			received := make(chan delivery, listeners)
			for i := range listeners {
				stream, err := clients[i%len(clients)].Listen(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := stream.Send(&pb.ListenRequest{Database: serveDB, TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{
					TargetId: 1, TargetType: &pb.Target_Documents{Documents: &pb.Target_DocumentsTarget{Documents: []string{name}}},
				}}}); err != nil {
					b.Fatal(err)
				}
				go func() {
					for {
						resp, err := stream.Recv()
						if err != nil {
							return
						}
						if doc := resp.GetDocumentChange().GetDocument(); doc != nil {
							received <- delivery{doc.Fields["v"].GetIntegerValue(), time.Now()}
						}
					}
				}()
			}
			for range listeners { // every stream has its first snapshot
				<-received
			}
			latencies := make([]time.Duration, 0, b.N*listeners)
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				start := time.Now()
				commit(i)
				for range listeners {
					d := <-received
					if d.v != int64(i) {
						b.Fatalf("a listener received v=%d, want %d", d.v, i)
					}
					latencies = append(latencies, d.at.Sub(start))
				}
			}
			b.StopTimer()
			sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
			b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
		})
	}
}

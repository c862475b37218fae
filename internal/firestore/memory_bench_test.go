package firestore_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// BenchmarkServe_MemoryPerDocument loads 20,000 small documents (four
// fields) in batches of 500 into an in-memory `loupe serve` over gRPC and
// reports its resident memory and the bytes it grew by per document
// (issue 22: ≤ 120 MB RSS for this load).
func BenchmarkServe_MemoryPerDocument(b *testing.B) {
	b.Run("grpc", func(b *testing.B) { memoryPerDocument(b, commitGRPC) })
	b.Run("batchwrite", func(b *testing.B) { memoryPerDocument(b, batchWriteGRPC) })
	b.Run("rest", func(b *testing.B) {
		memoryPerDocument(b, func(b *testing.B, inst *loupetest.Instance) func([]*pb.Write) {
			return func(writes []*pb.Write) { commitREST(b, inst, writes) }
		})
	})
}

// commitGRPC commits over one gRPC connection, as the owner.
func commitGRPC(b *testing.B, inst *loupetest.Instance) func([]*pb.Write) {
	client := dial(b, inst)
	return func(writes []*pb.Write) {
		if _, err := client.Commit(context.Background(), &pb.CommitRequest{Database: serveDB, Writes: writes}); err != nil {
			b.Fatal(err)
		}
	}
}

// batchWriteGRPC writes with BatchWrite, as the Node Admin SDK's
// BulkWriter does: each write commits on its own.
func batchWriteGRPC(b *testing.B, inst *loupetest.Instance) func([]*pb.Write) {
	client := dial(b, inst)
	return func(writes []*pb.Write) {
		if _, err := client.BatchWrite(context.Background(), &pb.BatchWriteRequest{Database: serveDB, Writes: writes}); err != nil {
			b.Fatal(err)
		}
	}
}

// commitREST commits over the REST API, as the owner.
func commitREST(b *testing.B, inst *loupetest.Instance, writes []*pb.Write) {
	body, err := protojson.Marshal(&pb.CommitRequest{Writes: writes})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, inst.URL+"/v1/"+serveDB+"/documents:commit", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("commit: HTTP %d", resp.StatusCode)
	}
}

func memoryPerDocument(b *testing.B, connect func(*testing.B, *loupetest.Instance) func([]*pb.Write)) {
	const docs, batch = 20_000, 500
	var idle, loaded int
	for range b.N {
		inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: true})
		commit := connect(b, inst)
		idle = loupetest.RSSKiB(b, inst.PID())
		for start := 0; start < docs; start += batch {
			commit(firestore.SmallDocWrites(serveDB, start, batch))
		}
		time.Sleep(time.Second) // as a person would look at the process after the load
		loaded = loupetest.RSSKiB(b, inst.PID())
		b.StopTimer()
		inst.Stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(loaded)/1024, "RSS-MiB")
	b.ReportMetric(float64(loaded-idle)*1024/docs, "bytes/doc")
}

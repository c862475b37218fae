// Package fakegcsbench compares loupe's GCS JSON API with fake-gcs-server
// (github.com/fsouza/fake-gcs-server), the GCS emulator our storage follows,
// through the same Go client and the same object sizes. It is a module of its
// own so that fake-gcs-server and its dependencies stay out of loupe's
// go.mod; run it with `make bench` or
// `cd internal/storage/fakegcsbench && go test -run '^$' -bench . -benchmem`.
//
// loupe runs as its own process (loupe serve, data on disk); fake-gcs-server
// runs inside the benchmark process with its filesystem backend, so its B/op
// include the server's allocations while loupe's do not.
package fakegcsbench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

const (
	bucket = "demo-loupe.appspot.com"
	size   = 64 << 20
)

// content is n bytes of reproducible noise, generated as they are read.
func content(n int64) io.Reader { return io.LimitReader(rand.NewChaCha8([32]byte{}), n) }

// servers starts each emulator and returns its host:port, for STORAGE_EMULATOR_HOST.
var servers = []struct {
	name  string
	start func(b *testing.B) string
}{
	{"loupe", func(b *testing.B) string { return loupetest.Start(b, loupetest.Options{Process: true}).Host }},
	{"fake-gcs-server", func(b *testing.B) string {
		// The Go client reads objects through the XML API at the emulator
		// host, which fake-gcs-server serves only as its PublicHost.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		host := fmt.Sprintf("127.0.0.1:%d", port)
		s, err := fakestorage.NewServerWithOptions(fakestorage.Options{
			Scheme: "http", Host: "127.0.0.1", Port: uint16(port), PublicHost: host,
			StorageRoot: b.TempDir(), Writer: io.Discard,
		})
		if err != nil {
			b.Fatalf("start fake-gcs-server: %v", err)
		}
		b.Cleanup(s.Stop)
		s.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
		return host
	}},
}

func client(b *testing.B, host string) *storage.Client {
	b.Setenv("STORAGE_EMULATOR_HOST", host)
	c, err := storage.NewClient(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func upload(b *testing.B, c *storage.Client, name string) {
	w := c.Bucket(bucket).Object(name).NewWriter(context.Background())
	w.ChunkSize = 16 << 20
	if _, err := io.Copy(w, content(size)); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGoClient_Upload(b *testing.B) {
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			c := client(b, srv.start(b))
			b.SetBytes(size)
			for b.Loop() {
				upload(b, c, "bench/up.bin")
			}
		})
	}
}

func BenchmarkGoClient_Download(b *testing.B) {
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			c := client(b, srv.start(b))
			upload(b, c, "bench/down.bin")
			obj := c.Bucket(bucket).Object("bench/down.bin")
			b.SetBytes(size)
			for b.Loop() {
				r, err := obj.NewReader(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, r); err != nil || n != size {
					b.Fatalf("read %d bytes: %v", n, err)
				}
				r.Close()
			}
		})
	}
}

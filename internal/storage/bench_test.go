package storage_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// Throughput of a real `loupe serve` (a child process, data on disk) through
// the Go storage client (GCS JSON API) and the Firebase API (/v0) as the JS
// SDK calls it, and loupe's memory while a 1 GiB upload streams through it.
// Figures and commands are in docs/benchmarks.md.

// benchSize is the object size of the throughput benchmarks.
const benchSize = 64 << 20

// content is n bytes of reproducible noise, generated as they are read.
func content(n int64) io.Reader { return io.LimitReader(rand.NewChaCha8([32]byte{}), n) }

func goClientUpload(tb testing.TB, c *storage.Client, name string, size int64) {
	w := c.Bucket(bucket).Object(name).NewWriter(context.Background())
	w.ChunkSize = 16 << 20
	if _, err := io.Copy(w, content(size)); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// firebaseUpload sends size bytes as the JS SDK's uploadBytesResumable does
// (start, then chunks, the last one finalizing) and returns the download token.
func firebaseUpload(tb testing.TB, inst *loupetest.Instance, name string, size, chunk int64) string {
	do := func(req *http.Request) (*http.Response, []byte) {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			tb.Fatalf("%s: %d %s", req.URL, resp.StatusCode, body)
		}
		return resp, body
	}
	req, _ := http.NewRequest("POST", inst.URL+"/v0/b/"+bucket+"/o?name="+url.QueryEscape(name), strings.NewReader(`{"contentType":"video/mp4"}`))
	req.Header.Set("X-Goog-Upload-Protocol", "resumable")
	req.Header.Set("X-Goog-Upload-Command", "start")
	req.Header.Set("X-Goog-Upload-Header-Content-Length", strconv.FormatInt(size, 10))
	resp, _ := do(req)
	uploadURL := resp.Header.Get("X-Goog-Upload-URL")
	data := content(size)
	var body []byte
	for offset := int64(0); offset < size; offset += chunk {
		n, cmd := min(chunk, size-offset), "upload"
		if offset+n == size {
			cmd = "upload, finalize"
		}
		req, _ := http.NewRequest("POST", uploadURL, io.LimitReader(data, n))
		req.ContentLength = n
		req.Header.Set("X-Goog-Upload-Command", cmd)
		req.Header.Set("X-Goog-Upload-Offset", strconv.FormatInt(offset, 10))
		_, body = do(req)
	}
	var meta struct {
		DownloadTokens string `json:"downloadTokens"`
	}
	if err := json.Unmarshal(body, &meta); err != nil || meta.DownloadTokens == "" {
		tb.Fatalf("final response %s: %v", body, err)
	}
	return meta.DownloadTokens
}

func BenchmarkGoClient_Upload(b *testing.B) {
	c := client(b, loupetest.Start(b, loupetest.Options{Process: true}))
	b.SetBytes(benchSize)
	for b.Loop() {
		goClientUpload(b, c, "bench/up.bin", benchSize)
	}
}

func BenchmarkGoClient_Download(b *testing.B) {
	c := client(b, loupetest.Start(b, loupetest.Options{Process: true}))
	goClientUpload(b, c, "bench/down.bin", benchSize)
	obj := c.Bucket(bucket).Object("bench/down.bin")
	b.SetBytes(benchSize)
	for b.Loop() {
		r, err := obj.NewReader(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, r); err != nil || n != benchSize {
			b.Fatalf("read %d bytes: %v", n, err)
		}
		r.Close()
	}
}

func BenchmarkFirebaseAPI_Upload(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true})
	b.SetBytes(benchSize)
	for b.Loop() {
		firebaseUpload(b, inst, "videos/sam/up.mp4", benchSize, 16<<20)
	}
}

func BenchmarkFirebaseAPI_Download(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true})
	token := firebaseUpload(b, inst, "videos/sam/down.mp4", benchSize, 16<<20)
	u := inst.URL + "/v0/b/" + bucket + "/o/videos%2Fsam%2Fdown.mp4?alt=media&token=" + token
	b.SetBytes(benchSize)
	for b.Loop() {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != benchSize {
			b.Fatalf("read %d bytes: %v", n, err)
		}
	}
}

// memory reads a process's resident set and its peak (VmRSS, VmHWM) in bytes.
func memory(tb testing.TB, pid int) (rss, peak int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb int64
		if _, err := fmt.Sscanf(sc.Text(), "VmRSS: %d kB", &kb); err == nil {
			rss = kb << 10
		}
		if _, err := fmt.Sscanf(sc.Text(), "VmHWM: %d kB", &kb); err == nil {
			peak = kb << 10
		}
	}
	return rss, peak
}

// BenchmarkUpload_1GiB_RSS streams 1 GiB into loupe through each API and
// reports how far loupe's resident memory rose above its idle size
// (target: < 64 MB, as uploads stream to disk).
func BenchmarkUpload_1GiB_RSS(b *testing.B) {
	const size = 1 << 30
	for _, api := range []struct {
		name   string
		upload func(testing.TB, *loupetest.Instance)
	}{
		{"FirebaseAPI", func(tb testing.TB, inst *loupetest.Instance) {
			firebaseUpload(tb, inst, "videos/sam/big.mp4", size, 32<<20)
		}},
		{"GoClient", func(tb testing.TB, inst *loupetest.Instance) {
			goClientUpload(tb, client(tb, inst), "big.bin", size)
		}},
	} {
		b.Run(api.name, func(b *testing.B) {
			inst := loupetest.Start(b, loupetest.Options{Process: true})
			idle, _ := memory(b, inst.PID())
			b.SetBytes(size)
			for b.Loop() {
				api.upload(b, inst)
			}
			_, peak := memory(b, inst.PID())
			b.ReportMetric(float64(idle)/1e6, "idle-RSS-MB")
			b.ReportMetric(float64(peak-idle)/1e6, "RSS-growth-MB")
		})
	}
}

// BenchmarkGoClient_SmallObjects uploads (one request, not resumable) and
// downloads objects of 64 KiB, one after another (and uploads 32 at a
// time), against a loupe in the
// benchmark's process (so -cpuprofile sees the server), on disk and in
// memory.
func BenchmarkGoClient_SmallObjects(b *testing.B) {
	const size = 64 << 10
	for _, inMemory := range []bool{false, true} {
		b.Run(map[bool]string{false: "OnDisk", true: "InMemory"}[inMemory], func(b *testing.B) {
			c := client(b, loupetest.Start(b, loupetest.Options{InMemory: inMemory}))
			data := make([]byte, size)
			b.Run("Upload", func(b *testing.B) {
				b.SetBytes(size)
				for i := 0; b.Loop(); i++ {
					w := c.Bucket(bucket).Object("small/" + strconv.Itoa(i%100)).NewWriter(context.Background())
					w.ChunkSize = 0 // one request
					if _, err := w.Write(data); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("UploadParallel", func(b *testing.B) {
				b.SetBytes(size)
				b.SetParallelism(16) // 32 uploads at a time on 2 cores
				var next atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						w := c.Bucket(bucket).Object("parallel/" + strconv.FormatInt(next.Add(1)%100, 10)).NewWriter(context.Background())
						w.ChunkSize = 0
						if _, err := w.Write(data); err != nil {
							b.Error(err)
							return
						}
						if err := w.Close(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			b.Run("Download", func(b *testing.B) {
				b.SetBytes(size)
				for i := 0; b.Loop(); i++ {
					r, err := c.Bucket(bucket).Object("small/" + strconv.Itoa(i%100)).NewReader(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, r); err != nil || n != size {
						b.Fatalf("read %d bytes: %v", n, err)
					}
					r.Close()
				}
			})
		})
	}
}

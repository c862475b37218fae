package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// killSwitch is a proxy in front of the loupe a pull writes to. It passes
// every request on, streaming, and once a request body of the chosen kind
// has sent more than after bytes it closes fire, so the test can SIGKILL the
// pull with that request half sent (the rest of it never arrives). With
// after < 0 it closes fire once loupe has answered that request, and holds
// the answer back, so the pull is killed with the request done but unseen.
type killSwitch struct {
	mu    sync.Mutex
	match func(*http.Request) bool
	seen  int   // requests matched in this run
	nth   int   // the matched request whose body trips the switch
	after int64 // bytes of that body first; < 0: its answer
	fire  chan struct{}
	once  *sync.Once
}

// holdAnswer is the context key of the trip of a request whose answer
// trips the switch.
type holdAnswer struct{}

func (k *killSwitch) arm(match func(*http.Request) bool, nth int, after int64) chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.match, k.seen, k.nth, k.after = match, 0, nth, after
	k.fire, k.once = make(chan struct{}), &sync.Once{}
	return k.fire
}

type countingBody struct {
	io.ReadCloser
	n     atomic.Int64
	after int64
	trip  func()
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.n.Load() > b.after {
		// The pull is being killed: nothing more of it arrives, and the
		// request fails rather than completing before the kill lands.
		return 0, errors.New("the pull was killed")
	}
	n, err := b.ReadCloser.Read(p)
	if b.n.Add(int64(n)) > b.after {
		b.trip()
	}
	return n, err
}

func startKillSwitch(t *testing.T, target string) (*killSwitch, string) {
	k := &killSwitch{}
	u, _ := url.Parse("http://" + target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	var self string
	// A resumable upload's session URL points at the loupe: point it here.
	rp.ModifyResponse = func(r *http.Response) error {
		if trip, ok := r.Request.Context().Value(holdAnswer{}).(func()); ok {
			trip()
			<-r.Request.Context().Done() // the pull, killed, hung up
			return r.Request.Context().Err()
		}
		if loc := r.Header.Get("Location"); loc != "" {
			r.Header.Set("Location", strings.Replace(loc, target, self, 1))
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		if k.match != nil && k.match(r) {
			k.seen++
			if k.seen == k.nth {
				fire, once := k.fire, k.once
				trip := func() { once.Do(func() { close(fire) }) }
				if k.after < 0 {
					r = r.WithContext(context.WithValue(r.Context(), holdAnswer{}, trip))
				} else {
					r.Body = &countingBody{ReadCloser: r.Body, after: k.after, trip: trip}
				}
			}
		}
		k.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	self = strings.TrimPrefix(srv.URL, "http://")
	return k, self
}

// runKillable runs loupe with args (and TMPDIR tmp) until it ends, which
// must be with success, or until fire closes, when it kills it (SIGKILL);
// it reports which, and what the run printed on stderr.
func runKillable(t *testing.T, args []string, tmp string, fire chan struct{}) (killed bool, stderr string) {
	t.Helper()
	cmd := exec.Command(loupetest.Binary(t), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + tmp}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-fire:
		_ = cmd.Process.Kill()
		<-done
		return true, errOut.String()
	case err := <-done:
		if err != nil {
			t.Fatalf("pull: %v\n%s", err, errOut.String())
		}
		return false, errOut.String()
	}
}

// TestPull_KilledAndResumed kills `loupe data pull` (SIGKILL) in the middle
// of writing its documents, then in the middle of uploading a large object,
// and runs it a third time: the target then holds every document once, with
// its fields and times, and every object whole, with nothing partial.
func TestPull_KilledAndResumed(t *testing.T) {
	prod := loupetest.Start(t, loupetest.Options{InMemory: true})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	ctx := context.Background()

	// 3,000 documents of 4 KB (two restore requests of 8 MiB at most), a
	// few small objects and one of 20 MB (a resumable upload in chunks).
	const docs = 3000
	pfs := firestoreAt(t, prod.Host)
	pad := strings.Repeat("x", 4000)
	for start := 0; start < docs; start += 500 {
		b := pfs.BulkWriter(ctx)
		for i := start; i < start+500; i++ {
			if _, err := b.Set(pfs.Collection("orders").Doc(fmt.Sprintf("o%04d", i)), map[string]any{"i": i, "pad": pad, "tags": []any{"a", i}}); err != nil {
				t.Fatal(err)
			}
		}
		b.End()
	}
	sc, err := storage.NewClient(ctx, option.WithEndpoint("http://"+prod.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	bucket := pullProject + ".appspot.com"
	want := map[string][]byte{"files/z-big": bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)}
	for i := range 4 {
		want[fmt.Sprintf("files/small-%d", i)] = []byte(fmt.Sprintf("small object %d", i))
	}
	for name, body := range want {
		w := sc.Bucket(bucket).Object(name).NewWriter(ctx)
		w.Metadata = map[string]string{"firebaseStorageDownloadTokens": "tok-" + strings.TrimPrefix(name, "files/")}
		if _, err := w.Write(body); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	k, proxy := startKillSwitch(t, local.Host)
	args := []string{"data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject,
		"--collection", "orders", "--prefix", "files/", "--emulator", proxy}
	tmp := t.TempDir()
	run := func(fire chan struct{}) (bool, string) { return runKillable(t, args, tmp, fire) }
	restore := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "documents:restore") }
	upload := func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/upload/") && strings.Contains(r.URL.RawQuery, "upload_id")
	}

	// Killed 1 MB into its second restore request, then 1 MB into the
	// second chunk of the large object.
	if killed, errOut := run(k.arm(restore, 2, 1<<20)); !killed {
		t.Fatalf("the pull finished before its second restore request:\n%s", errOut)
	}
	lfs := firestoreAt(t, local.Host)
	if n := countOf(t, lfs.Collection("orders").Query); n == 0 || n == docs {
		t.Fatalf("the killed pull wrote %d documents: it was not killed half way", n)
	}
	// The second run continues after the first's one whole batch; the
	// third finds every document written.
	killed, errOut := run(k.arm(upload, 2, 1<<20))
	if !killed {
		t.Fatalf("the pull finished before the large object's second chunk:\n%s", errOut)
	}
	if !strings.Contains(errOut, "firestore: continuing the pull that stopped after 500 documents") {
		t.Errorf("the second run did not continue the first:\n%s", errOut)
	}
	_, errOut = run(k.arm(func(*http.Request) bool { return false }, 1, 0))
	for _, line := range []string{"firestore: an earlier run of this pull wrote its 3000 documents", "storage: wrote 5 objects"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("the resumed pull's progress lacks %q:\n%s", line, errOut)
		}
	}

	// The killed pulls' copies of the objects are gone with the last one.
	if left, _ := filepath.Glob(filepath.Join(tmp, "loupe-pull-*")); len(left) > 0 {
		t.Errorf("the killed pulls left their copies behind: %v", left)
	}

	// Every document once, with its fields and times.
	lfs = firestoreAt(t, local.Host)
	got, err := lfs.Collection("orders").Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	pfs = firestoreAt(t, prod.Host)
	all, err := pfs.Collection("orders").Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != docs {
		t.Fatalf("%d documents after the resumed pull, want %d", len(got), docs)
	}
	byID := map[string]*firestore.DocumentSnapshot{}
	for _, d := range all {
		byID[d.Ref.ID] = d
	}
	for _, d := range got {
		w := byID[d.Ref.ID]
		if w == nil {
			t.Fatalf("%s is not in production", d.Ref.ID)
		}
		delete(byID, d.Ref.ID)
		if fmt.Sprint(d.Data()) != fmt.Sprint(w.Data()) || !d.CreateTime.Equal(w.CreateTime) || !d.UpdateTime.Equal(w.UpdateTime) {
			t.Fatalf("%s: %v %v %v, want %v %v %v", d.Ref.ID, d.Data()["i"], d.CreateTime, d.UpdateTime, w.Data()["i"], w.CreateTime, w.UpdateTime)
		}
	}

	// Every object whole, with its token, and no other.
	lsc, err := storage.NewClient(ctx, option.WithEndpoint("http://"+local.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer lsc.Close()
	it := lsc.Bucket(bucket).Objects(ctx, nil)
	n := 0
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		body, ok := want[attrs.Name]
		if !ok {
			t.Errorf("object %s (%d bytes) is not in production", attrs.Name, attrs.Size)
			continue
		}
		sum := md5.Sum(body)
		if attrs.Size != int64(len(body)) || !bytes.Equal(attrs.MD5, sum[:]) || attrs.Metadata["firebaseStorageDownloadTokens"] != "tok-"+strings.TrimPrefix(attrs.Name, "files/") {
			t.Errorf("object %s: %d bytes, md5 %x, metadata %v; want %d bytes, md5 %x", attrs.Name, attrs.Size, attrs.MD5, attrs.Metadata, len(body), sum)
		}
	}
	if n != len(want) {
		t.Errorf("%d objects after the resumed pull, want %d", n, len(want))
	}
}

// countOf is how many documents q matches.
func countOf(t *testing.T, q firestore.Query) int64 {
	res, err := q.NewAggregationQuery().WithCount("n").Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := res["n"].(*firestorepb.Value)
	return v.GetIntegerValue()
}

// patternReader yields a byte sequence that does not repeat within a
// chunk, generated as it is read.
type patternReader struct{ n uint64 }

func (r *patternReader) Read(p []byte) (int, error) {
	for i := range p {
		r.n++
		p[i] = byte(r.n ^ r.n>>8 ^ r.n>>16)
	}
	return len(p), nil
}

// BenchmarkPull_LargeObject pulls one 200 MB object (generated as it is
// uploaded to the loupe playing production) and reports the pull
// process's peak resident memory, which stays far below the object's size
// because objects are streamed through a file; the copy is checked to be
// byte-identical (its MD5). Run with:
//
//	LOUPE_BIN=$PWD/bin/loupe go test ./cmd/loupe -run '^$' -bench Pull_LargeObject -benchtime 1x
func BenchmarkPull_LargeObject(b *testing.B) {
	const size = 200 << 20
	prod := loupetest.Start(b, loupetest.Options{})
	ctx := context.Background()
	bucket := pullProject + ".appspot.com"
	client := func(host string) *storage.Client {
		c, err := storage.NewClient(ctx, option.WithEndpoint("http://"+host+"/storage/v1/"), option.WithoutAuthentication())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	w := client(prod.Host).Bucket(bucket).Object("big/blob").NewWriter(ctx)
	if _, err := io.CopyN(w, &patternReader{}, size); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	want := w.Attrs()
	b.SetBytes(size)
	var peak int64
	for b.Loop() {
		b.StopTimer()
		local := loupetest.Start(b, loupetest.Options{Args: []string{"--project", pullProject}})
		b.StartTimer()
		cmd := exec.Command(loupetest.Binary(b), "data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject,
			"--prefix", "big/", "--emulator", local.Host)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir(), "TMPDIR=" + b.TempDir()}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("pull: %v\n%s", err, out)
		}
		b.StopTimer()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss<<10) // KiB on Linux
		}
		got, err := client(local.Host).Bucket(bucket).Object("big/blob").Attrs(ctx)
		if err != nil || got.Size != size || !bytes.Equal(got.MD5, want.MD5) {
			b.Fatalf("the pulled copy: %v %+v, want %d bytes of md5 %x", err, got, size, want.MD5)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
}

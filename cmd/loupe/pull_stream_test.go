package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
)

var (
	pullKillDocs = flag.Int("pull-kill-docs", 20_000, "documents TestPull_KilledThreeTimesContinues pulls (a multiple of 500)")
	pullKillSeed = flag.Uint64("pull-kill-seed", 41, "seed of the batches TestPull_KilledThreeTimesContinues kills the pull at")
)

// itemName is the name of the i-th document seedItems puts.
func itemName(i int) string {
	return fmt.Sprintf("projects/%s/databases/(default)/documents/items/i%07d", pullProject, i)
}

// seedItems puts n small documents (items/i0000000 on) into the loupe at
// host.
func seedItems(t testing.TB, host string, n int) { seedDocs(t, host, n, itemName) }

// seedDocs puts n small documents, the i-th named name(i) with the fields i
// and tag "x", into the loupe at host through its restore endpoint, 500 a
// request: the fastest way in for hundreds of thousands.
func seedDocs(t testing.TB, host string, n int, name func(int) string) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for start := 0; start < n; start += 500 {
		docs := make([]map[string]any, 0, 500)
		for i := start; i < min(start+500, n); i++ {
			docs = append(docs, map[string]any{"name": name(i), "createTime": now, "updateTime": now,
				"fields": map[string]any{"i": map[string]any{"integerValue": strconv.Itoa(i)}, "tag": map[string]any{"stringValue": "x"}}})
		}
		code, out := loupetest.Post(t, "http://"+host+"/emulator/v1/projects/"+pullProject+"/databases/(default)/documents:restore", "owner",
			map[string]any{"documents": docs})
		if code != http.StatusOK {
			t.Fatalf("seed: %d %v", code, out)
		}
	}
}

// killablePull is a pull from a loupe playing production into a second
// loupe through a kill switch.
type killablePull struct {
	prod, local *loupetest.Instance
	k           *killSwitch
	proxy       string
	args        []string
	tmp         string
}

// startKillablePull starts the two loupes (production's with prodArgs) and
// the kill switch; pulling says what the pull copies.
func startKillablePull(t *testing.T, prodArgs ...string) *killablePull {
	p := &killablePull{tmp: t.TempDir()}
	p.prod = loupetest.Start(t, loupetest.Options{InMemory: true, Args: prodArgs})
	p.local = loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	p.k, p.proxy = startKillSwitch(t, p.local.Host)
	return p
}

// pulling sets the flags that say what the pull copies.
func (p *killablePull) pulling(what ...string) *killablePull {
	p.args = append([]string{"data", "pull", "--from-emulator", p.prod.Host, "--from-project", pullProject, "--emulator", p.proxy}, what...)
	return p
}

// startItemsPull is a killable pull of the collection items, seeded with n
// documents.
func startItemsPull(t *testing.T, n int, prodArgs ...string) *killablePull {
	p := startKillablePull(t, prodArgs...).pulling("--collection", "items")
	seedItems(t, p.prod.Host, n)
	return p
}

// run runs the pull until it ends, or until its nth restore request trips
// the kill switch (after bytes of it sent; < 0: answered; nth 0: never).
func (p *killablePull) run(t *testing.T, nth int, after int64) (killed bool, stderr string) {
	restore := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "documents:restore") }
	return runKillable(t, p.args, p.tmp, p.k.arm(restore, nth, after))
}

// TestPull_KilledThreeTimesContinues pulls a collection of small documents
// (-pull-kill-docs; the figure is 200,000), killing the pull
// (SIGKILL) three times at batches chosen by -pull-kill-seed: once with a
// batch stored but its answer held back, once with a batch half sent, once
// stored again. Each run continues exactly where the one before stopped
// (whole batches only), at the first run's read time, so that writes to
// the source after it are not copied; the last run reads only the
// documents left, and the target ends with every document once.
func TestPull_KilledThreeTimesContinues(t *testing.T) {
	n := *pullKillDocs
	batches := n / 500
	if n%500 != 0 || batches < 8 {
		t.Fatalf("-pull-kill-docs %d: want a multiple of 500, at least 4000", n)
	}
	pull := startItemsPull(t, n)
	lfs := firestoreAt(t, pull.local.Host)
	items := lfs.Collection("items").Query

	rng := rand.New(rand.NewPCG(*pullKillSeed, 0))
	quarter := batches / 4
	kills := []struct {
		nth   int
		after int64 // bytes of the nth batch sent; < 0: all, and stored
	}{{1 + rng.IntN(quarter), -1}, {2 + rng.IntN(quarter-1), 16 << 10}, {1 + rng.IntN(quarter), -1}}
	t.Logf("%d documents in %d batches; killed at batches %+v", n, batches, kills)
	stored := 0
	for run, kill := range kills {
		killed, errOut := pull.run(t, kill.nth, kill.after)
		if !killed {
			t.Fatalf("run %d finished before its batch %d:\n%s", run+1, kill.nth, errOut)
		}
		if run > 0 && !strings.Contains(errOut, fmt.Sprintf("firestore: continuing the pull that stopped after %d documents", stored)) {
			t.Fatalf("run %d did not continue after the %d documents stored:\n%s", run+1, stored, errOut)
		}
		whole := kill.nth
		if kill.after >= 0 {
			whole-- // the half-sent batch is not stored
		}
		stored += whole * 500
		if got := countOf(t, items); got != int64(stored) {
			t.Fatalf("after run %d (killed at its batch %d): %d documents, want %d", run+1, kill.nth, got, stored)
		}
		if run == 0 {
			// Writes after the pull's read time, past where it stopped.
			pfs := firestoreAt(t, pull.prod.Host)
			ctx := context.Background()
			if _, err := pfs.Doc(fmt.Sprintf("items/i%07d", n-1)).Update(ctx, []firestore.Update{{Path: "tag", Value: "changed"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := pfs.Doc(fmt.Sprintf("items/i%07d", n-2)).Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := pfs.Doc("items/z-new").Set(ctx, map[string]any{"i": -1, "tag": "new"}); err != nil {
				t.Fatal(err)
			}
			lfs = firestoreAt(t, pull.local.Host)
			items = lfs.Collection("items").Query
		}
	}

	_, errOut := pull.run(t, 0, 0)
	for _, line := range []string{fmt.Sprintf("firestore: continuing the pull that stopped after %d documents", stored),
		fmt.Sprintf("firestore: read %d documents", n-stored), fmt.Sprintf("firestore: wrote %d documents, %d of them in this run", n, n-stored)} {
		if !strings.Contains(errOut, line) {
			t.Errorf("the last run's progress lacks %q:\n%s", line, errOut)
		}
	}

	// Every document once, as it was at the first run's read time.
	it := items.OrderBy(firestore.DocumentID, firestore.Asc).Documents(context.Background())
	defer it.Stop()
	i := 0
	for ; ; i++ {
		d, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i >= n || d.Ref.ID != fmt.Sprintf("i%07d", i) || d.Data()["i"] != int64(i) || d.Data()["tag"] != "x" {
			t.Fatalf("document %d: %s %v", i, d.Ref.Path, d.Data())
		}
	}
	if i != n {
		t.Fatalf("%d documents after the last run, want %d", i, n)
	}

	// Done, the pull forgets its checkpoint: run again, it reads it all.
	if _, errOut = pull.run(t, 0, 0); !strings.Contains(errOut, fmt.Sprintf("firestore: read %d documents", n)) ||
		strings.Contains(errOut, "continuing") {
		t.Errorf("a pull run after it finished did not start over:\n%s", errOut)
	}
}

// TestPull_RecursiveKilledContinues kills a --recursive pull of rooms,
// their messages and the messages' reactions twice in the middle of the
// tree (the checkpoint then holds a cursor per level), and checks that the
// last run, reading only what was left, ends with every document of every
// level.
func TestPull_RecursiveKilledContinues(t *testing.T) {
	var names []string
	root := "projects/" + pullProject + "/databases/(default)/documents/"
	for r := range 30 {
		room := fmt.Sprintf("rooms/r%02d", r)
		names = append(names, root+room)
		for m := range 40 {
			msg := fmt.Sprintf("%s/messages/m%02d", room, m)
			names = append(names, root+msg, root+msg+"/reactions/a", root+msg+"/reactions/b")
		}
	}
	n := len(names) // 3,630: 8 batches
	pull := startKillablePull(t).pulling("--collection", "rooms", "--recursive")
	seedDocs(t, pull.prod.Host, n, func(i int) string { return names[i] })
	if killed, errOut := pull.run(t, 3, -1); !killed {
		t.Fatalf("the pull finished before its third batch:\n%s", errOut)
	}
	if killed, errOut := pull.run(t, 2, 16<<10); !killed || !strings.Contains(errOut, "continuing the pull that stopped after 1500 documents") {
		t.Fatalf("the second run (killed %v) did not continue after 1500 documents:\n%s", killed, errOut)
	}
	_, errOut := pull.run(t, 0, 0)
	for _, line := range []string{"continuing the pull that stopped after 2000 documents", "firestore: read 1630 documents",
		"firestore: wrote 3630 documents, 1630 of them in this run"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("the last run's progress lacks %q:\n%s", line, errOut)
		}
	}
	lfs := firestoreAt(t, pull.local.Host)
	for group, want := range map[string]int64{"rooms": 30, "messages": 1200, "reactions": 2400} {
		if got := countOf(t, lfs.CollectionGroup(group).Query); got != want {
			t.Errorf("%d %s after the last run, want %d", got, group, want)
		}
	}
}

// stallingProxy forwards TCP connections to a target; once it has passed
// on after bytes of what the target sent (in all, since it was armed), it
// passes on nothing more and closes stalled, so that a pull reading
// through it waits for ever, and can be killed at leisure.
type stallingProxy struct {
	addr    string
	mu      sync.Mutex
	after   int64 // bytes left to pass on
	stalled chan struct{}
	once    *sync.Once
}

func startStallingProxy(t *testing.T, target string) *stallingProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	t.Cleanup(func() { close(quit); l.Close() })
	p := &stallingProxy{addr: l.Addr().String()}
	p.arm(math.MaxInt64)
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			upstream, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			context.AfterFunc(t.Context(), func() { client.Close(); upstream.Close() })
			go func() { _, _ = io.Copy(upstream, client) }()
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := upstream.Read(buf)
					if n > 0 {
						p.mu.Lock()
						p.after -= int64(n)
						left, stalled, once := p.after, p.stalled, p.once
						p.mu.Unlock()
						if left < 0 {
							once.Do(func() { close(stalled) })
							<-quit
							return
						}
						if _, err := client.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						client.Close()
						return
					}
				}
			}()
		}
	}()
	return p
}

// arm lets after more bytes through before stalling, and returns the
// channel closed then.
func (p *stallingProxy) arm(after int64) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.after, p.stalled, p.once = after, make(chan struct{}), &sync.Once{}
	return p.stalled
}

// TestPull_IntoADataDirKilledContinues kills a pull into a data dir (the
// loupe it writes through runs in the pull's own process) while its reads
// of the source stall, then runs it again: the checkpoint it left in the
// data dir makes the second run continue after the documents stored, and
// the folder, served, holds every document once.
func TestPull_IntoADataDirKilledContinues(t *testing.T) {
	const n = 20_000
	prod := loupetest.Start(t, loupetest.Options{InMemory: true})
	seedItems(t, prod.Host, n)
	proxy := startStallingProxy(t, prod.Host)
	dir, tmp := t.TempDir(), t.TempDir()
	args := []string{"data", "pull", "--from-emulator", proxy.addr, "--from-project", pullProject, "--collection", "items", "--data-dir", dir}
	checkpoints := filepath.Join(dir, "firestore", "pulls", "*", "*.json")

	// Once the source has sent 1 MB (a few pages), it sends nothing more;
	// the pull is killed once it has stored a batch.
	stalled, fire := proxy.arm(1<<20), make(chan struct{})
	go func() {
		<-stalled
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if found, _ := filepath.Glob(checkpoints); len(found) > 0 {
				break
			}
		}
		close(fire)
	}()
	if killed, errOut := runKillable(t, args, tmp, fire); !killed {
		t.Fatalf("the pull finished through a stalled source:\n%s", errOut)
	}
	found, _ := filepath.Glob(checkpoints)
	if len(found) != 1 {
		t.Fatalf("checkpoints in the data dir: %v", found)
	}
	data, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	var cp struct{ Documents int }
	if err := json.Unmarshal(data, &cp); err != nil || cp.Documents <= 0 || cp.Documents >= n {
		t.Fatalf("the checkpoint: %v %s", err, data)
	}

	proxy.arm(math.MaxInt64)
	_, errOut := runKillable(t, args, tmp, make(chan struct{}))
	for _, line := range []string{fmt.Sprintf("firestore: continuing the pull that stopped after %d documents", cp.Documents),
		fmt.Sprintf("firestore: read %d documents", n-cp.Documents)} {
		if !strings.Contains(errOut, line) {
			t.Errorf("the second run's progress lacks %q:\n%s", line, errOut)
		}
	}
	if found, _ := filepath.Glob(checkpoints); len(found) != 0 {
		t.Errorf("the finished pull left its checkpoint: %v", found)
	}
	served := loupetest.Start(t, loupetest.Options{DataDir: dir, Args: []string{"--project", pullProject}})
	if got := countOf(t, firestoreAt(t, served.Host).Collection("items").Query); got != n {
		t.Errorf("%d documents in the data dir, want %d", got, n)
	}
}

// TestPull_ContinuedPastTheVersionsKept: a pull continued once the source
// no longer keeps the versions of its read time (a loupe with a 1 MiB
// --history-budget, overrun by writes after the pull stopped, as
// production forgets after an hour) says so and goes on at the current
// time, ending with every document once.
func TestPull_ContinuedPastTheVersionsKept(t *testing.T) {
	const n = 4000
	pull := startItemsPull(t, n, "--history-budget", "1")
	if killed, errOut := pull.run(t, 2, -1); !killed {
		t.Fatalf("the pull finished before its second batch:\n%s", errOut)
	}
	// 2 MiB of old versions: each of 600 documents of 2 KB written twice.
	pfs := firestoreAt(t, pull.prod.Host)
	ctx := context.Background()
	for _, pass := range []string{"a", "b"} {
		bw := pfs.BulkWriter(ctx)
		for i := range 600 {
			if _, err := bw.Set(pfs.Collection("pad").Doc(strconv.Itoa(i)), map[string]any{"pad": strings.Repeat(pass, 2000)}); err != nil {
				t.Fatal(err)
			}
		}
		bw.End()
	}
	_, errOut := pull.run(t, 0, 0)
	for _, line := range []string{"firestore: continuing the pull that stopped after 1000 documents",
		"firestore: the source no longer keeps the documents as of", "firestore: wrote 4000 documents, 3000 of them in this run"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("the continued pull's progress lacks %q:\n%s", line, errOut)
		}
	}
	if got := countOf(t, firestoreAt(t, pull.local.Host).Collection("items").Query); got != n {
		t.Errorf("%d documents after the continued pull, want %d", got, n)
	}
}

// BenchmarkPull_MillionDocuments pulls 1,000,000 small documents from a
// second loupe and reports the pull process's peak resident memory, which
// stays flat in the number of documents because they are written in
// batches as they are read. The peak is the process's VmHWM, sampled while
// it runs: its rusage maxrss would count the benchmark's own memory, which
// the child shares until it execs. Run with:
//
//	LOUPE_BIN=$PWD/bin/loupe go test ./cmd/loupe -run '^$' -bench Pull_MillionDocuments -benchtime 1x -timeout 60m
func BenchmarkPull_MillionDocuments(b *testing.B) {
	const n = 1_000_000
	prod := loupetest.Start(b, loupetest.Options{InMemory: true})
	seedItems(b, prod.Host, n)
	peak := 0
	for b.Loop() {
		b.StopTimer()
		local := loupetest.Start(b, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
		b.StartTimer()
		cmd := exec.Command(loupetest.Binary(b), "data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject,
			"--collection", "items", "--emulator", local.Host)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir()}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
	sample:
		for tick := time.NewTicker(50 * time.Millisecond); ; {
			if kib, rerr := loupetest.ProcStatusKiB(cmd.Process.Pid, "VmHWM"); rerr == nil {
				peak = max(peak, kib)
			}
			select {
			case err = <-done:
				tick.Stop()
				break sample
			case <-tick.C:
			}
		}
		if err != nil || !strings.Contains(out.String(), fmt.Sprintf("firestore: wrote %d documents (%d changed)", n, n)) {
			b.Fatalf("pull: %v\n%s", err, out.String())
		}
		b.StopTimer()
		local.Stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

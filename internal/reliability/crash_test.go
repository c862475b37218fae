package reliability

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
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

// ledger records every write loupe acknowledged, across crashes.
type ledger struct {
	mu sync.Mutex
	// acked counts, per kind of write, the acknowledgements since the last
	// call of busy.
	acked    map[string]int
	docs     map[string]bool   // "c/<id>" documents created, and "pair/<id>-a|b" pairs
	counters map[string]int64  // "counter/<worker>" → last acknowledged value
	objects  map[string][]byte // object name → acknowledged content's MD5
	shared   map[string]int64  // "shared/<worker>" object → last acknowledged sequence
	users    map[string]string // email → uid
}

func newLedger() *ledger {
	return &ledger{acked: map[string]int{}, docs: map[string]bool{}, counters: map[string]int64{}, objects: map[string][]byte{}, shared: map[string]int64{}, users: map[string]string{}}
}

// crashLoad is the concurrent work done between kills.
type crashLoad struct {
	inst    *loupetest.Instance
	c       *clients
	led     *ledger
	round   int
	workers int
}

const password = "crash-secret-1"

// run writes until ctx ends: each worker creates documents, commits
// two-document batches, bumps its counter document, uploads new objects,
// overwrites its shared object, and signs up users. Only writes that returned
// success are recorded.
func (l *crashLoad) run(ctx context.Context) {
	var wg sync.WaitGroup
	for w := range l.workers {
		wg.Go(func() { l.firestoreWorker(ctx, w) })
		wg.Go(func() { l.storageWorker(ctx, w) })
		wg.Go(func() { l.authWorker(ctx, w) })
	}
	wg.Wait()
}

func (l *crashLoad) firestoreWorker(ctx context.Context, w int) {
	counter := fmt.Sprintf("counter/w%d", w)
	l.led.mu.Lock()
	n := l.led.counters[counter]
	l.led.mu.Unlock()
	for i := 0; ctx.Err() == nil; i++ {
		id := fmt.Sprintf("r%d-w%d-%d", l.round, w, i)
		if _, err := l.c.fs.Doc("c/"+id).Create(ctx, map[string]any{"round": l.round, "i": i}); err == nil {
			l.led.record("document", func(led *ledger) { led.docs["c/"+id] = true })
		}
		//lint:ignore SA1019 WriteBatch is what the SDKs still send for batched writes; loupe serves it as Firestore does
		b := l.c.fs.Batch()
		b.Set(l.c.fs.Doc("pair/"+id+"-a"), map[string]any{"i": i})
		b.Set(l.c.fs.Doc("pair/"+id+"-b"), map[string]any{"i": i})
		if _, err := b.Commit(ctx); err == nil {
			l.led.record("batch", func(led *ledger) { led.docs["pair/"+id+"-a"], led.docs["pair/"+id+"-b"] = true, true })
		}
		if _, err := l.c.fs.Doc(counter).Set(ctx, map[string]any{"n": n + 1}); err == nil {
			n++
			l.led.record("counter", func(led *ledger) { led.counters[counter] = n })
		}
	}
}

func (l *crashLoad) storageWorker(ctx context.Context, w int) {
	shared := fmt.Sprintf("shared/w%d", w)
	l.led.mu.Lock()
	seq := l.led.shared[shared]
	l.led.mu.Unlock()
	for i := 0; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("videos/r%d-w%d-%d.bin", l.round, w, i)
		content := objectContent(name, 64<<10+i*4099)
		if upload(ctx, l.c, name, content, 0) == nil {
			sum := md5.Sum(content)
			l.led.record("object", func(led *ledger) { led.objects[name] = sum[:] })
		}
		// The shared object is overwritten in resumable chunks: a crash
		// mid-upload must leave the previous generation whole.
		next := seq + 1
		if upload(ctx, l.c, shared, objectContent(shared+"#"+strconv.FormatInt(next, 10), 600<<10), 256<<10) == nil {
			seq = next
			l.led.record("shared object", func(led *ledger) { led.shared[shared] = seq })
		}
	}
}

func (l *crashLoad) authWorker(ctx context.Context, w int) {
	for i := 0; ctx.Err() == nil; i++ {
		email := fmt.Sprintf("r%d-w%d-%d@crash.test", l.round, w, i)
		if uid, _, err := loupetest.SignUp(ctx, l.inst.URL, email, password); err == nil {
			l.led.record("account", func(led *ledger) { led.users[email] = uid })
		}
	}
}

// record applies an acknowledged write of the given kind to the ledger.
func (led *ledger) record(kind string, f func(*ledger)) {
	led.mu.Lock()
	f(led)
	led.acked[kind]++
	led.mu.Unlock()
}

// ackKinds are the kinds of write a round must have had acknowledged.
var ackKinds = []string{"document", "batch", "counter", "object", "shared object", "account"}

// busy reports whether every kind of write was acknowledged since its last
// true answer.
func (led *ledger) busy() bool {
	led.mu.Lock()
	defer led.mu.Unlock()
	for _, k := range ackKinds {
		if led.acked[k] == 0 {
			return false
		}
	}
	clear(led.acked)
	return true
}

// objectContent is deterministic content whose first line names what it is,
// so a reader can tell which write it sees.
func objectContent(label string, size int) []byte {
	head := []byte(label + "\n")
	body := bytes.Repeat([]byte{byte(len(label))}, max(size-len(head), 0))
	return append(head, body...)
}

func upload(ctx context.Context, c *clients, name string, content []byte, chunk int) error {
	w := c.st.Bucket(bucket).Object(name).NewWriter(ctx)
	w.ChunkSize = chunk
	w.ContentType = "application/octet-stream"
	if _, err := w.Write(content); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// verify checks that every acknowledged write is present and that every
// visible object is whole (its content matches its recorded MD5 and size).
func (led *ledger) verify(t *testing.T, inst *loupetest.Instance, c *clients) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	led.mu.Lock()
	defer led.mu.Unlock()

	var refs []*firestore.DocumentRef
	for path := range led.docs {
		refs = append(refs, c.fs.Doc(path))
	}
	for path := range led.counters {
		refs = append(refs, c.fs.Doc(path))
	}
	for start := 0; start < len(refs); start += 300 {
		snaps, err := c.fs.GetAll(ctx, refs[start:min(start+300, len(refs))])
		if err != nil {
			t.Fatalf("read acknowledged documents: %v", err)
		}
		for _, s := range snaps {
			path := s.Ref.Parent.ID + "/" + s.Ref.ID
			if !s.Exists() {
				t.Errorf("acknowledged document %s is missing", path)
				continue
			}
			if want, ok := led.counters[path]; ok {
				if n, _ := s.DataAt("n"); n.(int64) < want {
					t.Errorf("%s: n = %v, want at least the acknowledged %d", path, n, want)
				}
			}
		}
	}
	// Batches are atomic: both documents of a pair or neither.
	pairs := map[string]int{}
	iter := c.fs.Collection("pair").Documents(ctx)
	for {
		s, err := iter.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatalf("list pairs: %v", err)
		}
		pairs[s.Ref.ID[:len(s.Ref.ID)-2]]++
	}
	for id, n := range pairs {
		if n != 2 {
			t.Errorf("batch %s is half there (%d of 2 documents)", id, n)
		}
	}

	visible := map[string]bool{}
	objs := c.st.Bucket(bucket).Objects(ctx, nil)
	for {
		attrs, err := objs.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatalf("list objects: %v", err)
		}
		visible[attrs.Name] = true
		r, err := c.st.Bucket(bucket).Object(attrs.Name).NewReader(ctx)
		if err != nil {
			t.Errorf("listed object %s cannot be read: %v", attrs.Name, err)
			continue
		}
		content, err := io.ReadAll(r)
		r.Close()
		sum := md5.Sum(content)
		if err != nil || int64(len(content)) != attrs.Size || !bytes.Equal(sum[:], attrs.MD5) {
			t.Errorf("object %s is partial: read %d bytes (err %v), metadata says %d bytes md5 %x, content md5 %x", attrs.Name, len(content), err, attrs.Size, attrs.MD5, sum)
			continue
		}
		if want, ok := led.objects[attrs.Name]; ok && !bytes.Equal(want, sum[:]) {
			t.Errorf("object %s has other content than acknowledged", attrs.Name)
		}
		if want, ok := led.shared[attrs.Name]; ok {
			label, _, _ := bytes.Cut(content, []byte("\n"))
			_, seqText, _ := bytes.Cut(label, []byte("#"))
			if seq, _ := strconv.ParseInt(string(seqText), 10, 64); seq < want {
				t.Errorf("object %s is generation %d, want at least the acknowledged %d", attrs.Name, seq, want)
			}
		}
	}
	for name := range led.objects {
		if !visible[name] {
			t.Errorf("acknowledged object %s is missing", name)
		}
	}
	for name, seq := range led.shared {
		if seq > 0 && !visible[name] {
			t.Errorf("acknowledged object %s is missing", name)
		}
	}
	for email, uid := range led.users {
		got, err := signIn(ctx, inst, email, password)
		if err != nil || got != uid {
			t.Errorf("acknowledged account %s (uid %s): sign-in gives uid %q, err %v", email, uid, got, err)
		}
	}
}

// checkStoreTidy checks what a restart promises to clean up: no temporary
// upload is left, and every content file is the generation its metadata names.
func checkStoreTidy(t *testing.T, dir string) {
	t.Helper()
	if tmp, _ := os.ReadDir(filepath.Join(dir, "storage", "tmp")); len(tmp) > 0 {
		t.Errorf("%d temporary files survived the restart", len(tmp))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "storage", "objects", "*", "*#*"))
	for _, f := range files {
		oid, gen, _ := strings.Cut(filepath.Base(f), "#")
		data, err := os.ReadFile(filepath.Join(filepath.Dir(f), oid+".meta"))
		var meta struct {
			Generation int64 `json:"generation"`
		}
		if err != nil || json.Unmarshal(data, &meta) != nil || strconv.FormatInt(meta.Generation, 10) != gen {
			t.Errorf("content %s is named by no metadata after the restart", f)
		}
	}
}

func (led *ledger) counts() string {
	led.mu.Lock()
	defer led.mu.Unlock()
	return fmt.Sprintf("%d documents, %d counters, %d objects, %d shared objects, %d users",
		len(led.docs), len(led.counters), len(led.objects), len(led.shared), len(led.users))
}

// TestCrash_KillUnderLoad kills loupe with SIGKILL at random moments while
// Firestore commits, storage uploads and sign-ups run concurrently, several
// times on one data dir, and checks after every restart that the data dir
// opens, every acknowledged write is there, batches are whole and no partial
// object is visible. -long runs 20 rounds instead of 3.
func TestCrash_KillUnderLoad(t *testing.T) {
	rounds, workers := 3, 3
	if *long {
		rounds, workers = 20, 6
	}
	dir := t.TempDir()
	led := newLedger()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	for round := range rounds {
		inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
		c := connect(t, inst)
		led.verify(t, inst, c)
		checkStoreTidy(t, dir)
		if t.Failed() {
			c.close()
			t.Fatalf("round %d: the data dir lost acknowledged writes", round)
		}
		ctx, cancel := context.WithCancel(context.Background())
		load := &crashLoad{inst: inst, c: c, led: led, round: round, workers: workers}
		done := make(chan struct{})
		go func() { load.run(ctx); close(done) }()
		waitForWork(t, fmt.Sprintf("round %d: acknowledged %s", round, strings.Join(ackKinds, ", ")), led.busy)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		inst.Kill()
		cancel()
		<-done
		c.close()
		t.Logf("round %d killed; acknowledged so far: %s", round, led.counts())
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	c := connect(t, inst)
	defer c.close()
	led.verify(t, inst, c)
}

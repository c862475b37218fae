package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// mount runs mount(8) with args and unmounts target when the test ends; it
// skips the test where mounting is not allowed (not root).
func mount(t *testing.T, target string, args ...string) {
	t.Helper()
	out, err := exec.Command("mount", append(args, target)...).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", target).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", target, err, out)
		}
	})
}

// commitBlob commits one document write over the REST API as the owner and
// returns the HTTP status and the error status name ("" on success).
func commitBlob(inst *loupetest.Instance, id string, size int) (int, string, error) {
	body := map[string]any{"writes": []any{map[string]any{"update": map[string]any{
		"name":   "projects/" + project + "/databases/(default)/documents/big/" + id,
		"fields": map[string]any{"blob": map[string]any{"stringValue": strings.Repeat("x", size)}},
	}}}}
	var out struct {
		Error struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	code, err := loupetest.RESTCommit(context.Background(), inst.URL, "projects/"+project+"/databases/(default)", "owner", body, &out)
	return code, out.Error.Status, err
}

// TestFaults_FullDisk fills the data dir's file system: the commit that does
// not fit fails with RESOURCE_EXHAUSTED and is not visible, reads still
// answer, writes succeed again once space is freed, and after a kill -9
// every acknowledged write is there and the failed one is not. Uploads and
// sign-ups that do not fit fail and leave nothing behind.
func TestFaults_FullDisk(t *testing.T) {
	mnt := t.TempDir()
	mount(t, mnt, "-t", "tmpfs", "-o", "size=3m", "tmpfs")
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "data")
	inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	if _, _, err := loupetest.SignUp(context.Background(), inst.URL, "before@full.test", password); err != nil {
		t.Fatal(err)
	}
	if code, body := send(t, "PUT", inst.URL+rtdbNotes, `{"a":1}`); code != 200 {
		t.Fatalf("database write: HTTP %d %s", code, body)
	}
	var acked []string
	failed := ""
	for i := range 60 {
		id := fmt.Sprintf("d%02d", i)
		code, st, err := commitBlob(inst, id, 100<<10)
		if err != nil {
			t.Fatal(err)
		}
		if code == 200 {
			acked = append(acked, id)
			continue
		}
		if code != 429 || st != "RESOURCE_EXHAUSTED" {
			t.Fatalf("commit on a full disk: HTTP %d %s, want 429 RESOURCE_EXHAUSTED", code, st)
		}
		failed = id
		break
	}
	if failed == "" {
		t.Fatal("the disk never filled")
	}
	c := connect(t, inst)
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.fs.Doc("big/" + failed).Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("the failed commit's document: err = %v, want NotFound (nothing of it visible)", err)
	}
	if _, err := c.fs.Doc("big/" + acked[len(acked)-1]).Get(ctx); err != nil {
		t.Errorf("reads on a full disk: %v", err)
	}
	if err := upload(ctx, c, "videos/too-big.bin", bytes.Repeat([]byte("v"), 2<<20), 0); err == nil {
		t.Error("an upload larger than the free space succeeded")
	}
	if _, err := c.st.Bucket(bucket).Object("videos/too-big.bin").Attrs(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
		t.Errorf("the failed upload: attrs err = %v, want ErrObjectNotExist", err)
	}

	// Auth on the full disk: the sign-up fails as production fails out of
	// a resource, naming no file of the server.
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err = filler.Write(make([]byte, 64<<10)); err == nil; _, err = filler.Write(make([]byte, 4<<10)) {
	}
	filler.Close()
	var signUp map[string]any
	pages := strings.Repeat("n", 8<<10) // more than the free bytes of the log's last page
	code, err := loupetest.PostJSON(ctx, inst.URL+idt+"signUp?key=fake", "", map[string]any{"email": "full@full.test", "password": password, "returnSecureToken": true, "displayName": pages}, &signUp)
	if e, _ := signUp["error"].(map[string]any); err != nil || code != 429 || e["status"] != "RESOURCE_EXHAUSTED" || strings.Contains(fmt.Sprint(e["message"]), mnt) {
		t.Errorf("sign-up on a full disk: HTTP %d %v %v, want 429 RESOURCE_EXHAUSTED naming no path", code, signUp, err)
	}
	fullDiskWritesRefused(t, inst, mnt, pages)

	// A restart on the full disk serves what is stored and refuses writes
	// as the running loupe did (it used to exit: auth: compact: no space).
	c.close()
	inst.Kill()
	inst = loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	c = connect(t, inst)
	if _, err := c.fs.Doc("big/" + acked[len(acked)-1]).Get(ctx); err != nil {
		t.Errorf("a read after a restart on the full disk: %v", err)
	}
	if _, err := signIn(ctx, inst, "before@full.test", password); err != nil {
		t.Errorf("a sign-in after a restart on the full disk: %v", err)
	}
	signUp = nil
	code, err = loupetest.PostJSON(ctx, inst.URL+idt+"signUp?key=fake", "", map[string]any{"email": "full2@full.test", "password": password, "returnSecureToken": true, "displayName": pages}, &signUp)
	if e, _ := signUp["error"].(map[string]any); err != nil || code != 429 || e["status"] != "RESOURCE_EXHAUSTED" {
		t.Errorf("sign-up after a restart on the full disk: HTTP %d %v %v, want 429 RESOURCE_EXHAUSTED", code, signUp, err)
	}
	if code, st, err := commitBlob(inst, "restarted", 100<<10); err != nil || code != 429 || st != "RESOURCE_EXHAUSTED" {
		t.Errorf("commit after a restart on the full disk: HTTP %d %s %v, want 429 RESOURCE_EXHAUSTED", code, st, err)
	}
	fullDiskWritesRefused(t, inst, mnt, pages)

	if err := os.Remove(filepath.Join(mnt, "filler")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if code, st, err := commitBlob(inst, "after", 10); err != nil || code != 200 {
		t.Fatalf("commit after space was freed: HTTP %d %s %v", code, st, err)
	}
	acked = append(acked, "after")
	if _, _, err := loupetest.SignUp(ctx, inst.URL, "after@full.test", password); err != nil {
		t.Errorf("sign-up after space was freed: %v", err)
	}
	c.close()
	inst.Kill()

	inst = loupetest.Start(t, loupetest.Options{DataDir: dir})
	c = connect(t, inst)
	for _, id := range acked {
		if _, err := c.fs.Doc("big/" + id).Get(ctx); err != nil {
			t.Errorf("acknowledged document big/%s after restart: %v", id, err)
		}
	}
	if _, err := c.fs.Doc("big/" + failed).Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("the failed commit's document after restart: err = %v, want NotFound", err)
	}
	if _, err := signIn(ctx, inst, "after@full.test", password); err != nil {
		t.Errorf("acknowledged account after restart: %v", err)
	}
}

// rtdbNotes is a location of the default Realtime Database instance,
// written over REST as the owner.
const rtdbNotes = "/notes.json?ns=" + project + "-default-rtdb&access_token=owner"

// send makes an HTTP request as the owner and returns the status and body.
func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// fullDiskWritesRefused checks, on a full disk, that a Storage upload (GCS
// JSON API and Firebase API) and a Realtime Database write are refused with
// a message that says the disk is full and names no server folder, and
// that nothing of them is visible: no object, the database tree unchanged.
func fullDiskWritesRefused(t *testing.T, inst *loupetest.Instance, mnt, content string) {
	t.Helper()
	refused := func(what string, wantCode int, code int, body string) {
		t.Helper()
		if code != wantCode || !strings.Contains(body, "disk of loupe's data dir is full") || strings.Contains(body, mnt) {
			t.Errorf("%s on a full disk: HTTP %d %.300s, want %d saying the disk is full, naming no path", what, code, body, wantCode)
		}
	}
	code, body := send(t, "POST", inst.URL+"/upload/storage/v1/b/"+bucket+"/o?uploadType=media&name=full/gcs.bin", content)
	refused("a GCS upload", 429, code, body)
	if code, body := send(t, "GET", inst.URL+"/storage/v1/b/"+bucket+"/o/full%2Fgcs.bin", ""); code != 404 {
		t.Errorf("the refused GCS upload: HTTP %d %.200s, want 404", code, body)
	}
	code, body = send(t, "POST", inst.URL+"/v0/b/"+bucket+"/o?name=full%2Ffirebase.bin", content)
	refused("a Firebase Storage upload", 429, code, body)
	if code, body := send(t, "GET", inst.URL+"/v0/b/"+bucket+"/o/full%2Ffirebase.bin", ""); code != 404 {
		t.Errorf("the refused Firebase Storage upload: HTTP %d %.200s, want 404", code, body)
	}
	code, body = send(t, "PATCH", inst.URL+rtdbNotes, `{"b":"`+content+`"}`)
	refused("a database write", 503, code, body)
	if code, body := send(t, "GET", inst.URL+rtdbNotes, ""); code != 200 || strings.TrimSpace(body) != `{"a":1}` {
		t.Errorf("the database after a refused write: HTTP %d %.200s, want {\"a\":1}", code, body)
	}
}

// TestFaults_ReadOnlyDataDir: loupe refuses to start on a data dir it cannot
// write, exits with status 1 and names the folder, rather than serving data it
// would silently fail to keep.
func TestFaults_ReadOnlyDataDir(t *testing.T) {
	dir := t.TempDir()
	first := loupetest.Start(t, loupetest.Options{DataDir: dir})
	if code, _, err := commitBlob(first, "kept", 10); err != nil || code != 200 {
		t.Fatalf("commit: HTTP %d %v", code, err)
	}
	first.Stop(t)
	mount(t, dir, "--bind", dir)
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v %s", err, out)
	}
	out, code := runServe(t, dir)
	if code != 1 || !strings.Contains(out, dir) || !strings.Contains(out, "read-only file system") {
		t.Errorf("loupe serve on a read-only data dir: exit %d, output:\n%s\nwant exit 1 naming %s as read-only", code, out, dir)
	}
}

// runServe runs `loupe serve` on dir expecting it to exit by itself, and
// returns its output and exit code.
func runServe(t *testing.T, dir string) (string, int) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, loupetest.Binary(t), "serve", "--port", "0", "--data-dir", dir, "--config", cfg)
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("loupe serve kept running on %s:\n%s", dir, out)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestFaults_CorruptFiles damages each data file of a populated data dir in
// turn: a torn last line of the commit log (a crash mid-write) is cut off and
// everything before it recovered; any other damage stops loupe at start with
// exit status 1 and a message naming the file (and the byte, for the logs),
// so nothing is silently dropped.
func TestFaults_CorruptFiles(t *testing.T) {
	seed := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{DataDir: seed})
	for _, id := range []string{"a", "b", "c"} {
		if code, _, err := commitBlob(inst, id, 10); err != nil || code != 200 {
			t.Fatalf("commit: HTTP %d %v", code, err)
		}
	}
	for _, email := range []string{"kept@corrupt.test", "second@corrupt.test"} { // two records: the first is not the last
		if _, _, err := loupetest.SignUp(context.Background(), inst.URL, email, password); err != nil {
			t.Fatal(err)
		}
	}
	inst.Stop(t)

	appendBytes := func(b string) func(string) error {
		return func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(b)
			return err
		}
	}
	flipByte := func(p string) error {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data[20] ^= 0x01
		return os.WriteFile(p, data, 0o644)
	}
	truncateHalf := func(p string) error {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		return os.Truncate(p, info.Size()/2)
	}
	writeSnapshot := func(p string) error {
		log, err := os.ReadFile(filepath.Join(filepath.Dir(p), "commits.log"))
		if err != nil {
			return err
		}
		return os.WriteFile(p, append(log[:len(log)-5], '\n'), 0o644)
	}
	cases := []struct {
		name    string
		file    string
		damage  func(string) error
		wantErr string // "" means loupe starts and keeps every acknowledged write
	}{
		{"torn last line of the commit log", "firestore/commits.log", appendBytes(`0badc0de {"db":"projects/demo-lou`), ""},
		{"flipped bit in the commit log", "firestore/commits.log", flipByte, "commits.log is corrupt at byte 0"},
		{"commit log cut in the middle of a record", "firestore/commits.log", truncateHalf, ""},
		{"garbage line in the snapshot", "firestore/snapshot.jsonl", writeSnapshot, "snapshot.jsonl is corrupt at byte"},
		{"torn last line of the accounts log", "auth/accounts.log", appendBytes(`0badc0de [{"project":"demo-lou`), ""},
		{"flipped bit in the accounts log", "auth/accounts.log", flipByte, "accounts.log is corrupt at byte 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(seed)); err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(filepath.Join(dir, tc.file)); err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				out, code := runServe(t, dir)
				if code != 1 || !strings.Contains(out, tc.wantErr) || !strings.Contains(out, filepath.Join(dir, tc.file)) && !strings.Contains(out, tc.file) {
					t.Errorf("exit %d, output:\n%s\nwant exit 1 and %q naming %s", code, out, tc.wantErr, tc.file)
				}
				return
			}
			inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
			c := connect(t, inst)
			defer c.close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			docs, err := c.fs.Collection("big").Documents(ctx).GetAll()
			if err != nil {
				t.Fatal(err)
			}
			// A torn tail loses only the record it cut: every whole line stays.
			damaged, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if whole := bytes.Count(damaged, []byte("\n")); strings.HasSuffix(tc.file, "commits.log") && len(docs) != whole {
				t.Errorf("recovered %d documents, want the %d whole records before the damage", len(docs), whole)
			}
			if !strings.HasSuffix(tc.file, "commits.log") && len(docs) != 3 {
				t.Errorf("recovered %d documents, want 3", len(docs))
			}
			if _, err := signIn(ctx, inst, "kept@corrupt.test", password); err != nil {
				t.Errorf("account: %v", err)
			}
		})
	}
}

// TestFaults_CorruptStorageMetadata damages one object's metadata file:
// loupe still starts, the other objects still answer, reading the damaged
// object fails with an error rather than wrong bytes, and its content is
// kept on disk for repair.
func TestFaults_CorruptStorageMetadata(t *testing.T) {
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	c := connect(t, inst)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"videos/damaged.bin", "videos/fine.bin"} {
		if err := upload(ctx, c, name, objectContent(name, 4096), 0); err != nil {
			t.Fatal(err)
		}
	}
	c.close()
	inst.Stop(t)
	damaged := sha256.Sum256([]byte("videos/damaged.bin")) // the store names an object's files by its name's hash
	metas, _ := filepath.Glob(filepath.Join(dir, "storage", "objects", "*", hex.EncodeToString(damaged[:])+".meta"))
	if len(metas) != 1 {
		t.Fatalf("metadata files of the damaged object: %v", metas)
	}
	if err := os.WriteFile(metas[0], []byte(`{"bucket":`), 0o644); err != nil {
		t.Fatal(err)
	}

	inst = loupetest.Start(t, loupetest.Options{DataDir: dir})
	c = connect(t, inst)
	defer c.close()
	if _, err := c.st.Bucket(bucket).Object("videos/fine.bin").Attrs(ctx); err != nil {
		t.Errorf("an intact object beside a damaged one: %v", err)
	}
	if r, err := c.st.Bucket(bucket).Object("videos/damaged.bin").NewReader(ctx); err == nil {
		r.Close()
		t.Error("the object with damaged metadata was served")
	}
	content, _ := filepath.Glob(filepath.Join(dir, "storage", "objects", "*", hex.EncodeToString(damaged[:])+"#*"))
	if len(content) != 1 {
		t.Errorf("content of the damaged object on disk: %v, want it kept", content)
	}
}

package exports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

const fixture = "testdata/emulator"

func getDoc(t *testing.T, inst *loupetest.Instance, path string) (int, map[string]any) {
	t.Helper()
	return loupetest.Call(t, "GET", inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents/"+path, "", "Authorization", "Bearer owner")
}

func readJSON(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// TestServeImportsAndExportsFirebaseLayout: loupe serve --import of a
// firebase emulators:export folder serves its data, and `loupe data export
// --format firebase` writes it back the same.
func TestServeImportsAndExportsFirebaseLayout(t *testing.T) {
	abs, _ := filepath.Abs(fixture)
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", abs, "--project", "demo-loupe"}})

	status, doc := getDoc(t, inst, "users/ada/posts/first")
	if status != 200 || !strings.Contains(inst.URL, "127.0.0.1") {
		t.Fatalf("subcollection document: %d %v", status, doc)
	}
	status, doc = getDoc(t, inst, "users/ada")
	fields, _ := doc["fields"].(map[string]any)
	if status != 200 || fields["born"] == nil || fields["where"] == nil || fields["friend"] == nil || fields["embedding"] == nil {
		t.Fatalf("users/ada: %d %v", status, doc)
	}
	if got := fields["born"].(map[string]any)["timestampValue"]; got != "1815-12-10T08:30:00.123456Z" {
		t.Errorf("born = %v", got)
	}

	out := filepath.Join(t.TempDir(), "export")
	cmd := exec.Command(loupetest.Binary(t), "data", "export", "--format", "firebase", "--emulator", inst.Host, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loupe data export --format firebase: %v\n%s", err, msg)
	}
	for _, f := range []string{
		"firestore_export/firestore_export.overall_export_metadata",
		"firestore_export/all_namespaces/all_kinds/output-0",
		"storage_export/buckets.json",
	} {
		want, _ := os.ReadFile(filepath.Join(fixture, f))
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the fixture's (%v)", f, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(fixture, "storage_export", "metadata"))
	for _, e := range entries {
		for _, sub := range []string{"metadata/" + e.Name(), "blobs/" + strings.TrimSuffix(e.Name(), ".json")} {
			want, _ := os.ReadFile(filepath.Join(fixture, "storage_export", sub))
			got, err := os.ReadFile(filepath.Join(out, "storage_export", sub))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("storage_export/%s differs from the fixture's (%v)", sub, err)
			}
		}
	}
	for _, f := range []string{"auth_export/accounts.json", "auth_export/config.json"} {
		if want, got := readJSON(t, filepath.Join(fixture, f)), readJSON(t, filepath.Join(out, f)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs:\nwant %v\ngot  %v", f, want, got)
		}
	}
}

// TestServeRefusesDamagedAndUnknownImports: a damaged export fails the
// import naming the file and changes nothing; a folder in no known layout
// stops loupe serve saying what it found.
func TestServeRefusesDamagedAndUnknownImports(t *testing.T) {
	abs, _ := filepath.Abs(fixture)
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", abs, "--project", "demo-loupe"}})

	damaged := t.TempDir()
	if err := os.CopyFS(damaged, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	output := filepath.Join(damaged, "firestore_export", "all_namespaces", "all_kinds", "output-0")
	data, _ := os.ReadFile(output)
	data[len(data)-20] ^= 0x01
	if err := os.WriteFile(output, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Auth would import first: its accounts must not change either.
	if err := os.WriteFile(filepath.Join(damaged, "auth_export", "accounts.json"), []byte(`{"users":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"path": damaged})
	req, _ := http.NewRequest("POST", inst.URL+"/emulator/v1/import", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(msg), "output-0") || !strings.Contains(string(msg), "offset") {
		t.Errorf("import of a damaged export: %d %s", resp.StatusCode, msg)
	}
	if status, _ := getDoc(t, inst, "users/ada"); status != 200 {
		t.Errorf("after a failed import users/ada answers %d", status)
	}
	req, _ = http.NewRequest("GET", inst.URL+"/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:batchGet", nil)
	req.Header.Set("Authorization", "Bearer owner")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		accounts, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(accounts), "ada@example.com") {
			t.Errorf("after a failed import the accounts are %s", accounts)
		}
	}

	unknown := t.TempDir()
	if err := os.WriteFile(filepath.Join(unknown, "dump.sql"), []byte("select 1;"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	_ = os.WriteFile(cfg, []byte("{}"), 0o644)
	cmd := exec.Command(loupetest.Binary(t), "serve", "--port", "0", "--in-memory", "--config", cfg, "--import", unknown)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "dump.sql") || !strings.Contains(string(out), "no export layout") {
		t.Errorf("serve --import of an unknown folder: %v\n%s", err, out)
	}
}

// TestExportOnExitKeepsFirebaseLayout: --export-on-exit into the folder a
// firebase emulators:export was imported from writes that layout back, so
// the folder still works with firebase emulators:start --import.
func TestExportOnExitKeepsFirebaseLayout(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", dir, "--export-on-exit", "--project", "demo-loupe"}})
	inst.Stop(t)
	if _, err := os.Stat(filepath.Join(dir, "firestore_export", "documents.jsonl")); err == nil {
		t.Error("the export on exit wrote loupe's layout into a firebase emulators:export folder")
	}
	want, _ := os.ReadFile(filepath.Join(fixture, "firestore_export", "all_namespaces", "all_kinds", "output-0"))
	got, err := os.ReadFile(filepath.Join(dir, "firestore_export", "all_namespaces", "all_kinds", "output-0"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("output-0 after export on exit differs (%v)", err)
	}
}

// TestDataImportOfManagedExport: `loupe data import` of a gcloud firestore
// export folder loads its documents into the serving project.
func TestDataImportOfManagedExport(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", "demo-loupe"}})
	abs, _ := filepath.Abs("testdata/managed/2026-11-24T00_00_00_12345")
	cmd := exec.Command(loupetest.Binary(t), "data", "import", "--emulator", inst.Host, abs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("loupe data import: %v\n%s", err, out)
	}
	status, doc := getDoc(t, inst, "users/ada/posts/first")
	fields, _ := doc["fields"].(map[string]any)
	author, _ := fields["author"].(map[string]any)
	if status != 200 || author["referenceValue"] != "projects/demo-loupe/databases/(default)/documents/users/ada" {
		t.Errorf("users/ada/posts/first: %d %v", status, doc)
	}
}

// TestVectorsRoundTripThroughFirebaseLayout: vectors written through the Go
// SDK come back as vectors, and match vector queries, after `loupe data
// export --format firebase` and `loupe serve --import` of that export.
func TestVectorsRoundTripThroughFirebaseLayout(t *testing.T) {
	ctx := context.Background()
	client := func(inst *loupetest.Instance) *firestore.Client {
		t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
		c, err := firestore.NewClient(ctx, "demo-loupe")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	type item struct {
		Embedding firestore.Vector64 `firestore:"embedding"`
		Small     firestore.Vector32 `firestore:"small"`
		Nested    struct {
			E firestore.Vector64 `firestore:"e"`
		} `firestore:"nested"`
		List []any `firestore:"list"`
	}
	want := map[string]item{}
	for i, id := range []string{"a", "b", "c"} {
		it := item{Embedding: firestore.Vector64{float64(i), 0.5, -1}, Small: firestore.Vector32{float32(i) / 4}, List: []any{int64(i), firestore.Vector64{1, 2}}}
		it.Nested.E = firestore.Vector64{0.125}
		want[id] = it
	}
	src := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", "demo-loupe"}})
	db := client(src)
	for id, it := range want {
		if _, err := db.Collection("items").Doc(id).Set(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "export")
	if msg, err := exec.Command(loupetest.Binary(t), "data", "export", "--format", "firebase", "--emulator", src.Host, out).CombinedOutput(); err != nil {
		t.Fatalf("loupe data export --format firebase: %v\n%s", err, msg)
	}

	dst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", out, "--project", "demo-loupe"}})
	db = client(dst)
	for id, w := range want {
		snap, err := db.Collection("items").Doc(id).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got item
		if err := snap.DataTo(&got); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s after the round trip:\n%+v\nwant\n%+v", id, got, w)
		}
	}
	docs, err := db.Collection("items").Where("embedding", "==", firestore.Vector64{1, 0.5, -1}).Documents(ctx).GetAll()
	if err != nil || len(docs) != 1 || docs[0].Ref.ID != "b" {
		t.Errorf("embedding == [1, 0.5, -1] after the round trip: %d documents, %v", len(docs), err)
	}
}

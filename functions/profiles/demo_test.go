package profiles_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/functions/internal/loupetest"
	"github.com/loupe-dev/loupe/functions/profiles"
)

var update = flag.Bool("update", false, "write the profiles function's projections into emulator-data")

// TestDemoData: the demo marketplace (the repository's emulator-data/,
// seeded by loupe's internal/demo) holds what the profiles function derives
// from it, mentors/ and each profile's reviews, because this function wrote
// them: it gathers and projects every profile of the imported data and
// finds nothing to change. With -update it writes its result back (make
// demo-data runs it after the seed).
func TestDemoData(t *testing.T) {
	ctx := context.Background()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "emulator-data")
	if _, err := os.Stat(filepath.Join(dir, "firestore_export", "documents.jsonl")); err != nil {
		t.Fatal(err)
	}
	l := loupetest.Start(t, loupetest.WithImport(dir))
	before := derived(t, l.Firestore)
	users, err := l.Firestore.Collection(profiles.Users).DocumentRefs(ctx).GetAll()
	if err != nil || len(users) == 0 {
		t.Fatalf("the demo's profiles: %d, %v", len(users), err)
	}
	h := &profiles.Handler{DB: l.Firestore}
	for _, u := range users {
		if err := h.Gather(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if err := h.Project(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	if *update {
		// Only Firestore documents change: the export's other files stay.
		out := t.TempDir()
		resp, err := http.Post(l.URL+"/emulator/v1/export", "application/json", strings.NewReader(fmt.Sprintf(`{"path": %q}`, out)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("export: HTTP %d", resp.StatusCode)
		}
		documents := filepath.Join("firestore_export", "documents.jsonl")
		data, err := os.ReadFile(filepath.Join(out, documents))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, documents), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	after := derived(t, l.Firestore)
	listed := 0
	for k := range after {
		if strings.HasPrefix(k, profiles.Mentors+"/") {
			listed++
		}
	}
	if listed == 0 {
		t.Fatal("the profiles function lists no demo mentor: the test compared nothing")
	}
	for k, want := range after {
		if got, ok := before[k]; !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("emulator-data's %s differs from what the profiles function writes (in %s; regenerate with make demo-data)", k, differing(got, want))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("emulator-data has %s, which the profiles function removes (regenerate with make demo-data)", k)
		}
	}
}

// derived reads what the profiles function writes: every mentors/{uid}
// document and every users/{uid}.reviews, by path.
func derived(t *testing.T, db *firestore.Client) map[string]any {
	t.Helper()
	out := map[string]any{}
	ctx := context.Background()
	mentors, err := db.Collection(profiles.Mentors).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mentors {
		out[profiles.Mentors+"/"+m.Ref.ID] = m.Data()
	}
	users, err := db.Collection(profiles.Users).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		out[profiles.Users+"/"+u.Ref.ID+".reviews"] = u.Data()["reviews"]
	}
	return out
}

// differing names the fields of two documents that differ, or says that
// the values differ when they are not both documents.
func differing(a, b any) string {
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return "its value"
	}
	var keys []string
	for k, v := range bm {
		if !reflect.DeepEqual(am[k], v) {
			keys = append(keys, k)
		}
	}
	for k := range am {
		if _, ok := bm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

package demo_test

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	firebase "firebase.google.com/go/v4"
	"github.com/loupe-dev/loupe/internal/demo"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

var update = flag.Bool("update", false, "regenerate emulator-data from the seed")

// emulatorData is the repository's emulator-data folder.
func emulatorData(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "emulator-data")
}

func clients(t *testing.T, inst *loupetest.Instance) demo.Clients {
	t.Helper()
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", inst.Host)
	t.Setenv("STORAGE_EMULATOR_HOST", inst.Host)
	ctx := context.Background()
	st, err := storage.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: "demo-loupe"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := app.Firestore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return demo.Clients{Auth: a, Firestore: fs, Storage: st, Bucket: "demo-loupe.appspot.com", PublicURL: "http://127.0.0.1:8080"}
}

// TestSeed regenerates emulator-data with -update; without it, it checks
// that the committed emulator-data loads and exports back unchanged.
func TestSeed(t *testing.T) {
	ctx := context.Background()
	dir := emulatorData(t)
	if *update {
		inst := loupetest.Start(t, loupetest.Options{InMemory: true})
		if err := demo.Seed(ctx, clients(t, inst), time.Now().UTC().Truncate(time.Hour)); err != nil {
			t.Fatal(err)
		}
		// Over HTTP loupe exports only into its own folders; the CLI copies.
		if out, err := exec.Command(loupetest.Binary(t), "data", "export", dir, "--emulator", inst.Host).CombinedOutput(); err != nil {
			t.Fatalf("loupe data export: %v\n%s", err, out)
		}
		return
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", dir}})
	c := clients(t, inst)
	mentors, err := c.Firestore.Collection("users").Where("isMentor", "==", true).Documents(ctx).GetAll()
	if err != nil || len(mentors) != 5 {
		t.Errorf("mentors = %d, %v; want 5", len(mentors), err)
	}
	listed, err := c.Firestore.Collection("mentors").Documents(ctx).GetAll()
	if err != nil || len(listed) != 5 {
		t.Errorf("listed mentors = %d, %v; want 5", len(listed), err)
	}
	for _, m := range listed {
		if _, ok := m.Data()["email"]; ok {
			t.Errorf("the public profile of %s has an e-mail", m.Ref.ID)
		}
		if r := m.Data()["rating"].(map[string]any); m.Ref.ID == "mentor-maya" && (r["count"] != int64(1) || r["average"] != 5.0) {
			t.Errorf("Maya's rating = %v, want 5 from 1 review", r)
		}
		if m.Ref.ID == "mentor-tom" && m.Data()["bookable"] != false {
			t.Errorf("Tom, without payouts, is bookable")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "exchange_rates.json")); err != nil {
		t.Errorf("the demo's rate table: %v", err)
	}
	thread, err := c.Firestore.Collection("feedbackRequests/req-autumn-leaves/comments").Documents(ctx).GetAll()
	if err != nil || len(thread) != 6 {
		t.Errorf("comments = %d, %v; want 6", len(thread), err)
	}
	if u, err := c.Auth.GetUserByEmail(ctx, "sam@loupe.dev"); err != nil || u.UID != "user-sam" {
		t.Errorf("sam = %v, %v", u, err)
	}
	out := t.TempDir()
	if code, err := loupetest.PostJSON(context.Background(), inst.URL+"/emulator/v1/export", "", `{"path":"`+out+`"}`, nil); err != nil || code != http.StatusOK {
		t.Fatalf("export: %d %v", code, err)
	}
	r, err := c.Storage.Bucket(c.Bucket).Object("videos/user-sam/autumn-leaves-solo.mp4").NewReader(ctx)
	if err != nil {
		t.Fatalf("demo video: %v", err)
	}
	r.Close()
	for _, f := range []string{"firestore_export/documents.jsonl", "auth_export/accounts.json"} {
		want, _ := os.ReadFile(filepath.Join(dir, f))
		got, _ := os.ReadFile(filepath.Join(out, f))
		if !bytes.Equal(want, got) {
			t.Errorf("%s does not round-trip through import and export", f)
		}
	}
}

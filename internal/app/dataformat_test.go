package app_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/storage"
	firebase "firebase.google.com/go/v4"
	"github.com/loupe-dev/loupe/internal/app"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// testdata/datadir-format1 is a data dir written by the loupe of 29 November
// 2026, before data dirs had a format marker (format 1), through the Node
// Admin SDK: a Firestore document, an Auth user, a Storage object and a
// Realtime Database value of project demo-format. It is kept as written, never
// regenerated: every later loupe must open it.
const format1 = "testdata/datadir-format1"

func TestDataFormat_OpensFormat1DataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(format1)); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir, Args: []string{"--project", "demo-format"}})
	ctx := context.Background()
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	t.Setenv("STORAGE_EMULATOR_HOST", inst.Host)
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", inst.Host)

	docs, err := firestore.NewClient(ctx, "demo-format")
	if err != nil {
		t.Fatal(err)
	}
	defer docs.Close()
	snap, err := docs.Doc("films/f1").Get(ctx)
	if err != nil {
		t.Fatalf("films/f1: %v", err)
	}
	if got := snap.Data(); got["title"] != "Format one" || got["minutes"] != int64(94) {
		t.Errorf("films/f1 = %v", got)
	}

	fb, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: "demo-format"})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := fb.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	user, err := auth.GetUser(ctx, "u1")
	if err != nil {
		t.Fatalf("user u1: %v", err)
	}
	if user.Email != "ada@example.com" || user.DisplayName != "Ada" {
		t.Errorf("user u1 = %s %q", user.Email, user.DisplayName)
	}
	if code, _ := loupetest.Post(t, inst.URL+"/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k", "",
		map[string]any{"email": "ada@example.com", "password": "secret123"}); code != 200 {
		t.Errorf("sign in as ada@example.com with her password: HTTP %d", code)
	}

	st, err := storage.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Bucket("demo-format.appspot.com").Object("reels/r1.txt").NewReader(ctx)
	if err != nil {
		t.Fatalf("reels/r1.txt: %v", err)
	}
	body, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(body) != "reel one" || r.Attrs.ContentType != "text/plain" {
		t.Errorf("reels/r1.txt = %q (%s), %v", body, r.Attrs.ContentType, err)
	}

	var visits int
	if err := loupetest.Database(t, inst, "demo-format-default-rtdb").NewRef("counters/visits").Get(ctx, &visits); err != nil || visits != 3 {
		t.Errorf("counters/visits = %d, %v", visits, err)
	}

	marker, err := os.ReadFile(filepath.Join(dir, "loupe-format.json"))
	if err != nil || !strings.Contains(string(marker), `"format":1`) {
		t.Errorf("the data dir's format marker after opening it = %q, %v", marker, err)
	}
}

func TestDataFormat_RefusesWhatThisLoupeCannotRead(t *testing.T) {
	for _, tc := range []struct {
		name, marker, want string
	}{
		{"newer format", `{"format":2,"writtenBy":"v9.0.0 (commit abc, go1.30)"}`,
			"holds data format 2, written by loupe v9.0.0 (commit abc, go1.30); this loupe (dev"},
		{"unreadable marker", `{"format":`, "its format marker"},
		{"no format", `{}`, "its format marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "loupe-format.json"), []byte(tc.marker), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(filepath.Join(t.TempDir(), "firebase.json"), false)
			if err != nil {
				t.Fatal(err)
			}
			_, err = app.New(context.Background(), app.Options{Project: "demo-format", Host: "127.0.0.1", DataDir: dir, Config: cfg})
			var refused *app.DataFormatError
			if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("app.New = %v, want a DataFormatError saying %q", err, tc.want)
			}
			// Refused before any service opened its files.
			if _, err := os.Stat(filepath.Join(dir, "firestore")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refused data dir got a firestore folder: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "loupe-format.json")); string(got) != tc.marker {
				t.Errorf("the marker was rewritten to %q", got)
			}
		})
	}
}

package reliability

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// long selects the long forms (soak, 60 s load) that `make bench` runs.
var long = flag.Bool("long", false, "run the long soak and load forms")

const (
	project = "demo-loupe"
	bucket  = "demo-loupe.appspot.com"
	idt     = "/identitytoolkit.googleapis.com/v1/accounts:"
)

// clients are the official SDK clients of one running instance.
type clients struct {
	fs *firestore.Client
	st *storage.Client
}

// connect opens Go SDK clients against inst in emulator mode; close them with
// clients.close before the instance goes away.
func connect(t testing.TB, inst *loupetest.Instance) *clients {
	t.Helper()
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	t.Setenv("STORAGE_EMULATOR_HOST", inst.Host)
	fs, err := firestore.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &clients{fs: fs, st: st}
}

func (c *clients) close() {
	c.fs.Close()
	c.st.Close()
}

// waitForWork waits until done reports true, polling, and fails the test
// when it has not after a minute: a crash test kills loupe only once the
// work it means to check has happened, so it cannot pass having checked
// nothing.
func waitForWork(t testing.TB, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// signIn signs an email account in and returns its uid.
func signIn(ctx context.Context, inst *loupetest.Instance, email, password string) (string, error) {
	var out struct {
		LocalID string `json:"localId"`
	}
	code, err := loupetest.PostJSON(ctx, inst.URL+idt+"signInWithPassword?key=fake", "", map[string]any{"email": email, "password": password, "returnSecureToken": true}, &out)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("signInWithPassword %s: HTTP %d", email, code)
	}
	return out.LocalID, nil
}

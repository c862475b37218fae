package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"testing"

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

// postJSON posts body to inst and decodes the JSON answer into out (when not
// nil); it returns the HTTP status.
func postJSON(ctx context.Context, inst *loupetest.Instance, path, bearer string, body, out any) (int, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, inst.URL+path, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s answer %q: %w", path, raw, err)
		}
	}
	return resp.StatusCode, nil
}

// signUp creates an email account and returns its uid and ID token.
func signUp(ctx context.Context, inst *loupetest.Instance, email, password string) (uid, idToken string, err error) {
	var out struct {
		LocalID string `json:"localId"`
		IDToken string `json:"idToken"`
	}
	code, err := postJSON(ctx, inst, idt+"signUp?key=fake", "", map[string]any{"email": email, "password": password, "returnSecureToken": true}, &out)
	if err != nil {
		return "", "", err
	}
	if code != http.StatusOK || out.LocalID == "" {
		return "", "", fmt.Errorf("signUp %s: HTTP %d", email, code)
	}
	return out.LocalID, out.IDToken, nil
}

// signIn signs an email account in and returns its uid.
func signIn(ctx context.Context, inst *loupetest.Instance, email, password string) (string, error) {
	var out struct {
		LocalID string `json:"localId"`
	}
	code, err := postJSON(ctx, inst, idt+"signInWithPassword?key=fake", "", map[string]any{"email": email, "password": password, "returnSecureToken": true}, &out)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("signInWithPassword %s: HTTP %d", email, code)
	}
	return out.LocalID, nil
}

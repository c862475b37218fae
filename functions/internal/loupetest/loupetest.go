// Package loupetest runs a `loupe serve` for the functions' tests, so they
// talk to Firestore, Auth, Storage, FCM and Stripe through the real SDKs as
// they do in production. The binary is $LOUPE_BIN (which `make test` builds
// and sets); without it the tests that need one are skipped.
package loupetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/storage"
	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
)

// Project is the project the loupe serves.
const Project = "demo-loupe"

// Bucket is its default Storage bucket.
const Bucket = Project + ".appspot.com"

// Loupe is a running `loupe serve` and Admin SDK clients connected to it.
type Loupe struct {
	URL       string
	Firestore *firestore.Client
	Auth      *auth.Client
	Storage   *storage.Client
}

var running = regexp.MustCompile(`Loupe is running at (\S+)`)

// Option changes what Start serves.
type Option func(*setup) error

// setup is what Start serves: dir is the test's folder, config the
// firebase.json it writes there and args what it adds to loupe serve.
type setup struct {
	dir    string
	config map[string]any
	args   []string
}

// WithImport loads an export folder (loupe serve --import dir) at start.
func WithImport(dir string) Option {
	return func(s *setup) error {
		s.args = append(s.args, "--import", dir)
		return nil
	}
}

// WithStripe serves loupe's Stripe stand-in too (its API at the loupe's
// URL, key "sk_test_loupe_local"). loupe runs it beside a functions process,
// so a stub functions module that answers every call with 200 is built and
// run (the functions under test are called directly, not through it).
func WithStripe() Option {
	return func(s *setup) error {
		src := s.dir + "/stub"
		files := map[string]string{
			"go.mod":                "module stub\n\ngo 1.26\n",
			"triggers.json":         `{"triggers": []}`,
			"cmd/functions/main.go": "package main\n\nimport (\n\t\"net/http\"\n\t\"os\"\n)\n\nfunc main() {\n\t_ = http.ListenAndServe(os.Getenv(\"HOST\")+\":\"+os.Getenv(\"PORT\"), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))\n}\n",
		}
		for name, text := range files {
			if err := os.MkdirAll(filepath.Dir(src+"/"+name), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(src+"/"+name, []byte(text), 0o644); err != nil {
				return err
			}
		}
		s.config["functions"] = map[string]any{"source": src}
		return nil
	}
}

// Start runs `$LOUPE_BIN serve` in memory on a free port for the test,
// points the emulator variables of the test's process at it, and stops it
// when the test ends.
func Start(t *testing.T, opts ...Option) *Loupe {
	t.Helper()
	bin := os.Getenv("LOUPE_BIN")
	if bin == "" {
		t.Skip("set LOUPE_BIN to a loupe binary (make test does) to run the functions against it")
	}
	dir := t.TempDir()
	set := &setup{dir: dir, config: map[string]any{}}
	for _, o := range opts {
		if err := o(set); err != nil {
			t.Fatal(err)
		}
	}
	settings := set.config
	config := dir + "/firebase.json"
	data, _ := json.Marshal(settings)
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--port", "0", "--project", Project, "--config", config,
		"--data-dir", dir + "/data", "--in-memory"}, set.args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := running.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("loupe serve did not start: %s", logs.String())
	}
	waitHealthy(t, url)
	if settings["functions"] != nil {
		waitFunctions(t, url)
	}
	host := strings.TrimPrefix(url, "http://")
	t.Setenv("FIRESTORE_EMULATOR_HOST", host)
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", host)
	t.Setenv("STORAGE_EMULATOR_HOST", url)
	t.Setenv("GOOGLE_CLOUD_PROJECT", Project)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: Project, StorageBucket: Bucket})
	if err != nil {
		t.Fatal(err)
	}
	l := &Loupe{URL: url}
	if l.Firestore, err = app.Firestore(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Firestore.Close() })
	if l.Auth, err = app.Auth(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.Storage, err = storage.NewClient(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("loupe at %s never became healthy: %v", url, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// waitFunctions waits until loupe built and started the functions process
// (a cold Go build takes a while).
func waitFunctions(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var state struct{ State, Detail string }
		if resp, err := http.Get(url + "/emulator/v1/functions"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&state)
			resp.Body.Close()
		}
		switch {
		case state.State == "running":
			return
		case state.State == "failed":
			t.Fatalf("the stub functions failed: %s", state.Detail)
		case time.Now().After(deadline):
			t.Fatalf("the stub functions are still %q", state.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SignUp creates an account with e-mail and password through the Auth
// emulator's REST API, as the app does, and returns its uid and ID token.
func (l *Loupe) SignUp(t *testing.T, email string) (uid, idToken string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"email": email, "password": "secret1", "returnSecureToken": true})
	resp, err := http.Post(l.URL+"/identitytoolkit.googleapis.com/v1/accounts:signUp?key=demo", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ LocalID, IDToken string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.IDToken == "" {
		t.Fatalf("sign up %s: HTTP %d %v", email, resp.StatusCode, err)
	}
	return out.LocalID, out.IDToken
}

// Event is the CloudEvent of a change of the document at path (under
// documents/) from oldFields to newFields (nil: absent), as Eventarc
// delivers it, for calling a function's handler directly.
func Event(id, path string, oldFields, newFields map[string]any) cloudevent.Event {
	doc := func(fields map[string]any) any {
		if fields == nil {
			return nil
		}
		return map[string]any{"name": fmt.Sprintf("projects/%s/databases/(default)/documents/%s", Project, path), "fields": encode(fields)}
	}
	body, _ := json.Marshal(map[string]any{"value": doc(newFields), "oldValue": doc(oldFields)})
	e := cloudevent.New()
	e.SetID(id)
	e.SetType("google.cloud.firestore.document.v1.written")
	e.SetSource("//firestore.googleapis.com/projects/" + Project + "/databases/(default)")
	e.SetSubject("documents/" + path)
	_ = e.SetData("application/json", body)
	return e
}

// encode turns plain values into the proto3 JSON of Firestore values.
func encode(fields map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		out[k] = value(v)
	}
	return out
}

func value(v any) map[string]any {
	switch x := v.(type) {
	case nil:
		return map[string]any{"nullValue": nil}
	case bool:
		return map[string]any{"booleanValue": x}
	case int:
		return map[string]any{"integerValue": fmt.Sprint(x)}
	case int64:
		return map[string]any{"integerValue": fmt.Sprint(x)}
	case float64:
		return map[string]any{"doubleValue": x}
	case string:
		return map[string]any{"stringValue": x}
	case time.Time:
		return map[string]any{"timestampValue": x.UTC().Format(time.RFC3339Nano)}
	case []any:
		vals := []any{}
		for _, e := range x {
			vals = append(vals, value(e))
		}
		return map[string]any{"arrayValue": map[string]any{"values": vals}}
	case map[string]any:
		return map[string]any{"mapValue": map[string]any{"fields": encode(x)}}
	}
	panic(fmt.Sprintf("loupetest: cannot encode %T", v))
}

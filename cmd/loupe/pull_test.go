package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/storage"
	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"
	"firebase.google.com/go/v4/auth/hash"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/option"
)

const pullProject = "demo-prod"

// The example of github.com/firebase/scrypt's README: a production
// project's password hash parameters, an account's salt and password, and
// the hash Firebase made of them.
var prodScrypt = struct {
	key, separator, salt, hash, password string
}{
	key:       "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
	separator: "Bw==",
	salt:      "42xEC+ixf3L2lw==",
	hash:      "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
	password:  "user1password",
}

func b64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// firestoreAt is a Go SDK client of the loupe at host.
func firestoreAt(t *testing.T, host string) *firestore.Client {
	t.Setenv("FIRESTORE_EMULATOR_HOST", host)
	c, err := firestore.NewClient(context.Background(), pullProject)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// seedProduction fills the loupe playing production: rooms (open or not)
// with messages, a collection group of messages elsewhere, 10,000 events,
// accounts imported with Firebase's scrypt hashes, and Storage objects with
// download tokens.
func seedProduction(t *testing.T, prod *loupetest.Instance) {
	ctx := context.Background()
	fs := firestoreAt(t, prod.Host)
	for i, open := range []bool{true, false, true} {
		room := fs.Collection("rooms").Doc(fmt.Sprintf("r%d", i))
		if _, err := room.Set(ctx, map[string]any{"open": open, "email": fmt.Sprintf("owner%d@corp.example", i), "n": i}); err != nil {
			t.Fatal(err)
		}
		if _, err := room.Collection("messages").Doc("m1").Set(ctx, map[string]any{"text": "hi", "by": room}); err != nil {
			t.Fatal(err)
		}
		if _, err := room.Collection("messages").Doc("m1").Collection("reactions").Doc("x").Set(ctx, map[string]any{"emoji": "+1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fs.Doc("archive/2020/messages/old").Set(ctx, map[string]any{"text": "old"}); err != nil {
		t.Fatal(err)
	}
	for start := 0; start < 10_000; start += 500 {
		err := fs.RunTransaction(ctx, func(_ context.Context, tx *firestore.Transaction) error {
			for i := start; i < start+500; i++ {
				if err := tx.Set(fs.Collection("events").Doc(fmt.Sprintf("e%05d", i)), map[string]any{"i": i}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", prod.Host)
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: pullProject})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := app.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	users := []*auth.UserToImport{
		(&auth.UserToImport{}).UID("u1").Email("user1@corp.example").DisplayName("User One").
			PasswordHash(b64(t, prodScrypt.hash)).PasswordSalt(b64(t, prodScrypt.salt)).CustomClaims(map[string]any{"role": "admin"}),
		(&auth.UserToImport{}).UID("u2").Email("user2@corp.example").PhoneNumber("+14155550100"),
	}
	res, err := ac.ImportUsers(ctx, users, auth.WithHash(hash.Scrypt{Key: b64(t, prodScrypt.key),
		SaltSeparator: b64(t, prodScrypt.separator), Rounds: 8, MemoryCost: 14}))
	if err != nil || res.FailureCount != 0 {
		t.Fatalf("import users: %v %+v", err, res)
	}

	sc, err := storage.NewClient(ctx, option.WithEndpoint("http://"+prod.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for name, body := range map[string]string{"avatars/u1.png": "png of u1", "avatars/u2.png": "png of u2", "private/x": "not pulled"} {
		w := sc.Bucket(pullProject + ".appspot.com").Object(name).NewWriter(ctx)
		w.ContentType = "image/png"
		w.Metadata = map[string]string{"firebaseStorageDownloadTokens": "tok-" + strings.ReplaceAll(name, "/", "-")}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPull_FromAnotherLoupe pulls a slice of a second loupe (playing
// production) into the first with loupe data pull and checks what a user
// of the first then sees.
func TestPull_FromAnotherLoupe(t *testing.T) {
	prod := loupetest.Start(t, loupetest.Options{InMemory: true})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	seedProduction(t, prod)
	ctx := context.Background()
	pullArgs := func(extra ...string) []string {
		return append([]string{"data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject}, extra...)
	}

	// A dry run reads and writes nothing.
	code, out, errOut := loupe(t, local, pullArgs("--collection", "rooms", "--recursive", "--dry-run")...)
	if code != 0 || !strings.Contains(errOut, "would copy 1 documents of rooms/r0/messages") || !strings.Contains(out, "would pull 9 documents") {
		t.Fatalf("dry run: %d %q %q", code, out, errOut)
	}
	lfs := firestoreAt(t, local.Host)
	if docs, _ := lfs.Collection("rooms").Documents(ctx).GetAll(); len(docs) != 0 {
		t.Fatalf("the dry run wrote %d rooms", len(docs))
	}

	// A filtered collection with its subcollections, a collection group, a
	// big collection with progress, accounts with passwords, objects.
	// (--where filters every collection of its pull: one pull per filter.)
	code, out, errOut = loupe(t, local, pullArgs("--collection", "rooms", "--where", "open == true", "--recursive", "--redact", "email")...)
	if code != 0 || !strings.Contains(out, "pulled 6 documents") {
		t.Fatalf("pull of open rooms: %d %q %q", code, out, errOut)
	}
	code, out, errOut = loupe(t, local, pullArgs("--collection-group", "messages", "--recursive")...)
	if code != 0 || !strings.Contains(errOut, "firestore: wrote 7 documents (3 changed)") {
		t.Fatalf("pull of the messages: %d %q %q", code, out, errOut)
	}
	// What cannot be read fails the pull, and nothing of it is written.
	code, _, errOut = loupe(t, local, pullArgs("--collection", "events", "--users", "u1,ghost")...)
	if code != 1 || !strings.Contains(errOut, "read auth (nothing was written): no account with uid ghost in project demo-prod") {
		t.Fatalf("pull of a missing account: %d %q", code, errOut)
	}
	if n, _ := lfs.Collection("events").Documents(ctx).GetAll(); len(n) != 0 {
		t.Fatalf("a failed pull wrote %d events", len(n))
	}
	// A pull that stopped after 4,000 of the events (restore requests are
	// atomic each), then the pull run again, which finishes it.
	code, out, errOut = loupe(t, local, pullArgs("--collection", "events", "--order-by", "i", "--limit", "4000")...)
	if code != 0 || !strings.Contains(errOut, "firestore: wrote 4000 documents (4000 changed)") {
		t.Fatalf("pull of 4000 events: %d %q %q", code, out, errOut)
	}
	args := pullArgs("--collection", "events", "--users", "all", "--with-passwords", "--redact", "email", "--prefix", "avatars/")
	code, out, errOut = loupe(t, local, args...)
	if code != 0 {
		t.Fatalf("pull: %d %q %q", code, out, errOut)
	}
	for _, want := range []string{"firestore: read 10000 documents", "firestore: wrote 10000 documents (6000 changed)",
		"auth: read 2 accounts with their SCRYPT password hashes", "storage: read 2 objects (18 B)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("progress lacks %q:\n%s", want, errOut)
		}
	}
	pfs := firestoreAt(t, prod.Host)
	for _, path := range []string{"rooms/r0", "rooms/r2", "rooms/r0/messages/m1", "rooms/r0/messages/m1/reactions/x", "rooms/r1/messages/m1", "archive/2020/messages/old", "events/e09999"} {
		want, err := pfs.Doc(path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lfs = firestoreAt(t, local.Host)
		got, err := lfs.Doc(path).Get(ctx)
		if err != nil {
			t.Fatalf("%s not pulled: %v", path, err)
		}
		if !got.CreateTime.Equal(want.CreateTime) || !got.UpdateTime.Equal(want.UpdateTime) {
			t.Errorf("%s: times %v %v, want %v %v", path, got.CreateTime, got.UpdateTime, want.CreateTime, want.UpdateTime)
		}
	}
	if _, err := lfs.Doc("rooms/r1").Get(ctx); err == nil {
		t.Errorf("rooms/r1 was pulled (it is closed)")
	}
	r0, _ := lfs.Doc("rooms/r0").Get(ctx)
	redacted, _ := r0.DataAt("email")
	if e, _ := redacted.(string); !strings.HasSuffix(e, "@example.com") || strings.Contains(e, "owner0") {
		t.Errorf("the room's email is %v, want a fake", redacted)
	}

	// The imported account signs in with its production password, under
	// the same fake e-mail address the room got for the same address.
	var signIn struct {
		LocalID string `json:"localId"`
		Email   string `json:"email"`
		Error   any    `json:"error"`
	}
	lookup := "user-"
	c, err := loupetest.PostJSON(ctx, local.URL+loupetest.IdentityToolkit+"signInWithPassword?key=fake", "",
		map[string]any{"email": fakeEmailOf(t, local, "u1"), "password": prodScrypt.password, "returnSecureToken": true}, &signIn)
	if err != nil || c != http.StatusOK || signIn.LocalID != "u1" || !strings.HasPrefix(signIn.Email, lookup) {
		t.Errorf("sign-in with the production password: %d %v %+v", c, err, signIn)
	}
	c, _ = loupetest.PostJSON(ctx, local.URL+loupetest.IdentityToolkit+"signInWithPassword?key=fake", "",
		map[string]any{"email": signIn.Email, "password": "wrong-password"}, nil)
	if c != http.StatusBadRequest {
		t.Errorf("a wrong password: HTTP %d", c)
	}

	// Objects keep their download tokens; the others stay behind.
	for name, want := range map[string]int{"avatars%2Fu1.png?alt=media&token=tok-avatars-u1.png": 200, "private%2Fx?alt=media": 404} {
		resp, err := http.Get(local.URL + "/v0/b/" + pullProject + ".appspot.com/o/" + name)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == 200 && string(body) != "png of u1") {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}

	// Pulled again, nothing changes and nothing is duplicated; the fake
	// values are the same.
	email := fakeEmailOf(t, local, "u1")
	code, _, errOut = loupe(t, local, args...)
	if again := fakeEmailOf(t, local, "u1"); again != email {
		t.Errorf("the fake e-mail address changed from %s to %s", email, again)
	}
	if code != 0 || !strings.Contains(errOut, "wrote 10000 documents (0 changed)") || !strings.Contains(errOut, "wrote 2 objects (0 changed") {
		t.Fatalf("second pull: %d %q", code, errOut)
	}
	if n, _ := lfs.Collection("events").Documents(ctx).GetAll(); len(n) != 10_000 {
		t.Errorf("%d events after two pulls", len(n))
	}
}

// fakeEmailOf is the e-mail address of the account uid in the loupe at
// inst.
func fakeEmailOf(t *testing.T, inst *loupetest.Instance, uid string) string {
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", inst.Host)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: pullProject})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := app.Auth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	u, err := ac.GetUser(context.Background(), uid)
	if err != nil {
		t.Fatalf("account %s not pulled: %v", uid, err)
	}
	return u.Email
}

// TestPull_RefusesAStrictLoupe: a loupe started with --strict-credentials,
// which others may rely on, is not written to without --force.
func TestPull_RefusesAStrictLoupe(t *testing.T) {
	strict := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--strict-credentials"}})
	code, _, errOut := loupe(t, strict, "data", "pull", "--from-emulator", "127.0.0.1:1", "--from-project", pullProject, "--collection", "rooms")
	if code != 1 || !strings.Contains(errOut, "runs with --strict-credentials: pull writes into it only with --force") {
		t.Fatalf("pull into a strict loupe: %d %q", code, errOut)
	}
}

// TestPull_FromNowhereFailsNamingTheSource: a pull whose source takes no
// connection (a port nothing listens on, a host that does not resolve)
// fails, naming the source, instead of retrying for ever (the clients
// reconnect until their context ends; the guard below only keeps a
// regression from hanging the suite).
func TestPull_FromNowhereFailsNamingTheSource(t *testing.T) {
	target := loupetest.Start(t, loupetest.Options{InMemory: true})
	for _, tc := range [][]string{
		{"--from-emulator", "127.0.0.1:1", "--collection", "rooms"},
		{"--from-emulator", "nowhere.invalid:8080", "--prefix", "videos/"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		args := append([]string{"data", "pull", "--from-project", pullProject, "--emulator", target.Host}, tc...)
		out, err := exec.CommandContext(ctx, loupetest.Binary(t), args...).CombinedOutput()
		hung := ctx.Err() != nil
		cancel()
		if hung {
			t.Fatalf("pull %q was still running after 3 minutes", tc)
		}
		want := "cannot reach the emulator to pull from at " + tc[1]
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("pull %q: %v %s, want an error with %q", tc, err, out, want)
		}
	}
}

// TestPull_IntoADataDir pulls into a data folder that no loupe serves, then
// serves it; a pull into a data folder a loupe is serving is refused.
func TestPull_IntoADataDir(t *testing.T) {
	prod := loupetest.Start(t, loupetest.Options{InMemory: true})
	ctx := context.Background()
	pfs := firestoreAt(t, prod.Host)
	if _, err := pfs.Doc("rooms/r1").Set(ctx, map[string]any{"open": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := pfs.Doc("rooms/r1/messages/m1").Set(ctx, map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	sc, err := storage.NewClient(ctx, option.WithEndpoint("http://"+prod.Host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	w := sc.Bucket(pullProject + ".appspot.com").Object("avatars/u1.png").NewWriter(ctx)
	w.Metadata = map[string]string{"firebaseStorageDownloadTokens": "tok-u1"}
	if _, err := io.WriteString(w, "png of u1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	args := []string{"data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject,
		"--collection", "rooms", "--recursive", "--prefix", "avatars/", "--data-dir", dir}
	code, out, errOut := loupe(t, nil, args...)
	if code != 0 || !strings.Contains(out, "pulled 2 documents, 0 accounts, 1 objects") {
		t.Fatalf("pull into a data dir: %d %q %q", code, out, errOut)
	}

	served := loupetest.Start(t, loupetest.Options{DataDir: dir, Args: []string{"--project", pullProject}})
	for _, path := range []string{"rooms/r1", "rooms/r1/messages/m1"} {
		want, err := pfs.Doc(path).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := firestoreAt(t, served.Host).Doc(path).Get(ctx)
		if err != nil {
			t.Fatalf("%s is not served from the data dir: %v", path, err)
		}
		if !got.UpdateTime.Equal(want.UpdateTime) || fmt.Sprint(got.Data()) != fmt.Sprint(want.Data()) {
			t.Errorf("%s: %v %v, want %v %v", path, got.Data(), got.UpdateTime, want.Data(), want.UpdateTime)
		}
	}
	resp, err := http.Get(served.URL + "/v0/b/" + pullProject + ".appspot.com/o/avatars%2Fu1.png?alt=media&token=tok-u1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "png of u1" {
		t.Errorf("the pulled object: %d %q", resp.StatusCode, body)
	}

	// While a loupe serves the folder, a pull into it is refused.
	code, _, errOut = loupe(t, nil, args...)
	if code != 1 || !strings.Contains(errOut, "is served by a running loupe: pull into that loupe with --emulator HOST:PORT instead") {
		t.Errorf("pull into a served data dir: %d %q", code, errOut)
	}
}

// TestPull_KeepsAccountTimes: a pulled account keeps every time the Admin
// SDK shows of it: created, last sign-in, last token refresh, and the time
// before which its tokens are revoked.
func TestPull_KeepsAccountTimes(t *testing.T) {
	prod := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	local := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--project", pullProject}})
	ctx := context.Background()
	authAt := func(inst *loupetest.Instance) *auth.Client {
		t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", inst.Host)
		app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: pullProject})
		if err != nil {
			t.Fatal(err)
		}
		ac, err := app.Auth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ac
	}
	pac := authAt(prod)
	if _, err := pac.CreateUser(ctx, (&auth.UserToCreate{}).UID("u1").Email("u1@corp.example").Password("secret-1")); err != nil {
		t.Fatal(err)
	}
	var signIn struct{ IDToken string }
	if c, err := loupetest.PostJSON(ctx, prod.URL+loupetest.IdentityToolkit+"signInWithPassword?key=fake", "",
		map[string]any{"email": "u1@corp.example", "password": "secret-1", "returnSecureToken": true}, &signIn); err != nil || c != http.StatusOK {
		t.Fatalf("sign-in: %d %v", c, err)
	}
	if err := pac.RevokeRefreshTokens(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	want, err := pac.GetUser(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if want.UserMetadata.LastRefreshTimestamp == 0 || want.UserMetadata.LastLogInTimestamp == 0 || want.TokensValidAfterMillis == 0 {
		t.Fatalf("the source account lacks times to pull: %+v %+v", want, want.UserMetadata)
	}

	code, out, errOut := loupe(t, local, "data", "pull", "--from-emulator", prod.Host, "--from-project", pullProject, "--users", "all")
	if code != 0 {
		t.Fatalf("pull: %d %q %q", code, out, errOut)
	}
	got, err := authAt(local).GetUser(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if *got.UserMetadata != *want.UserMetadata || got.TokensValidAfterMillis != want.TokensValidAfterMillis {
		t.Errorf("pulled account: metadata %+v, tokens valid after %d; want %+v, %d",
			got.UserMetadata, got.TokensValidAfterMillis, want.UserMetadata, want.TokensValidAfterMillis)
	}
	// And when its password last changed, which the Go Admin SDK does
	// not show: the admin API's lookup does.
	if got, want := passwordUpdatedAt(t, local, "u1"), passwordUpdatedAt(t, prod, "u1"); got != want || want == 0 {
		t.Errorf("pulled account: passwordUpdatedAt %v, want %v", got, want)
	}
}

// passwordUpdatedAt is the account uid's passwordUpdatedAt as the admin
// API's accounts:lookup answers it.
func passwordUpdatedAt(t *testing.T, inst *loupetest.Instance, uid string) float64 {
	var out struct {
		Users []struct {
			PasswordUpdatedAt float64 `json:"passwordUpdatedAt"`
		} `json:"users"`
	}
	url := inst.URL + "/identitytoolkit.googleapis.com/v1/projects/" + pullProject + "/accounts:lookup"
	if c, err := loupetest.PostJSON(context.Background(), url, "owner", map[string]any{"localId": []string{uid}}, &out); err != nil || c != http.StatusOK || len(out.Users) != 1 {
		t.Fatalf("lookup %s: %d %v %+v", uid, c, err, out)
	}
	return out.Users[0].PasswordUpdatedAt
}

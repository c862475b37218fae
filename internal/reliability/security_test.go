package reliability

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	firestoreRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /secret/{id} { allow read, write: if false; }
    match /open/{id} { allow read: if request.auth != null; }
  }
}`
	storageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /secret/{all=**} { allow read, write: if false; }
  }
}`
	dbPath = "projects/" + project + "/databases/(default)"
)

// project writes a firebase.json with the rules above and a hosting folder
// and returns its path.
func projectConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"firestore.rules":   firestoreRules,
		"storage.rules":     storageRules,
		"public/index.html": "<!doctype html><title>app</title>",
		"firebase.json": `{"firestore": {"rules": "firestore.rules"}, "storage": {"rules": "storage.rules"},
			"hosting": {"public": "public"}}`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "firebase.json")
}

// grpcGet reads a document over gRPC with the given Authorization value.
func grpcGet(t *testing.T, inst *loupetest.Instance, authorization, name string) error {
	t.Helper()
	conn, err := grpc.NewClient(inst.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if authorization != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	}
	_, err = pb.NewFirestoreClient(conn).GetDocument(ctx, &pb.GetDocumentRequest{Name: name})
	return err
}

// restGet reads a document over the REST API (batchGet, as the JS SDK in
// Node does) and returns the HTTP status and error status name.
func restGet(t *testing.T, inst *loupetest.Instance, bearer, name string) (int, string) {
	t.Helper()
	var out any
	code, err := loupetest.PostJSON(context.Background(), inst.URL+"/v1/"+dbPath+"/documents:batchGet", bearer, map[string]any{"documents": []string{name}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	return code, errorStatus(out)
}

// errorStatus finds the error status name in a REST answer (an object, or
// the array of a streamed batchGet).
func errorStatus(v any) string {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if s := errorStatus(e); s != "" {
				return s
			}
		}
	case map[string]any:
		if e, ok := v["error"].(map[string]any); ok {
			s, _ := e["status"].(string)
			return s
		}
	}
	return ""
}

// webChannelListen opens a Listen channel as the JS SDK in a browser does,
// adds a target for one document and returns what the back channel says.
func webChannelListen(t *testing.T, inst *loupetest.Instance, authorization, name string) string {
	t.Helper()
	base := inst.URL + "/google.firestore.v1.Firestore/Listen/channel?VER=8&database=" + url.QueryEscape(dbPath)
	req := fmt.Sprintf(`{"database":%q,"addTarget":{"documents":{"documents":[%q]},"targetId":2}}`, dbPath, name)
	form := url.Values{"count": {"1"}, "ofs": {"0"}, "req0___data__": {req}}
	if authorization != "" {
		form.Set("headers", "Authorization:"+authorization+"\r\n")
	}
	resp, err := http.Post(base+"&RID=1&CVER=22&zx=a&t=1", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("X-HTTP-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("WebChannel handshake: HTTP %d, session %q", resp.StatusCode, sid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	back, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"&RID=rpc&SID="+sid+"&AID=0&CI=0&TYPE=xmlhttp&zx=b&t=1", nil)
	resp, err = http.DefaultClient.Do(back)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seen strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		seen.WriteString(sc.Text())
		if s := seen.String(); strings.Contains(s, `"cause"`) || strings.Contains(s, `"documentChange"`) {
			break
		}
	}
	return seen.String()
}

// storageGet downloads an object over the Firebase Storage REST API.
func storageGet(t *testing.T, inst *loupetest.Instance, authorization, name string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, inst.URL+"/v0/b/"+bucket+"/o/"+url.PathEscape(name)+"?alt=media", nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// seed writes secret/s1 in Firestore and secret/s1.txt in Storage as the owner.
func seed(t *testing.T, inst *loupetest.Instance) {
	t.Helper()
	body := map[string]any{"writes": []any{map[string]any{"update": map[string]any{
		"name": dbPath + "/documents/secret/s1", "fields": map[string]any{"pin": map[string]any{"stringValue": "1234"}}}}}}
	if code, err := loupetest.PostJSON(context.Background(), inst.URL+"/v1/"+dbPath+"/documents:commit", "owner", body, nil); err != nil || code != 200 {
		t.Fatalf("seed document: HTTP %d %v", code, err)
	}
	req, _ := http.NewRequest(http.MethodPost, inst.URL+"/v0/b/"+bucket+"/o?name=secret%2Fs1.txt", strings.NewReader("pin 1234"))
	req.Header.Set("Authorization", "Bearer owner")
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("seed object: %v %v", resp.Status, err)
	}
	resp.Body.Close()
}

// TestSecurity_DenialMatrix sends the same rules-denied read, as the same
// signed-in user and as nobody, over gRPC, REST, WebChannel and Storage, and
// checks that each transport denies it in its own error shape.
func TestSecurity_DenialMatrix(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{Config: projectConfig(t)})
	seed(t, inst)
	_, token, err := loupetest.SignUp(context.Background(), inst.URL, "mallory@deny.test", password)
	if err != nil {
		t.Fatal(err)
	}
	doc := dbPath + "/documents/secret/s1"
	for _, who := range []struct{ name, bearer string }{{"signed-in user", token}, {"nobody", ""}} {
		t.Run(who.name, func(t *testing.T) {
			auth := ""
			if who.bearer != "" {
				auth = "Bearer " + who.bearer
			}
			if err := grpcGet(t, inst, auth, doc); status.Code(err) != codes.PermissionDenied {
				t.Errorf("gRPC GetDocument: %v, want PermissionDenied", err)
			}
			if code, st := restGet(t, inst, who.bearer, doc); code != 403 || st != "PERMISSION_DENIED" {
				t.Errorf("REST batchGet: HTTP %d %s, want 403 PERMISSION_DENIED", code, st)
			}
			if got := webChannelListen(t, inst, auth, doc); !strings.Contains(got, `"code":7`) || strings.Contains(got, "1234") {
				t.Errorf("WebChannel Listen: %s, want a target removed with cause code 7 and no data", got)
			}
			storageAuth := ""
			if who.bearer != "" {
				storageAuth = "Firebase " + who.bearer
			}
			if code := storageGet(t, inst, storageAuth, "secret/s1.txt"); code != 403 {
				t.Errorf("Storage download: HTTP %d, want 403", code)
			}
		})
	}
}

// TestSecurity_StrictCredentials runs loupe with --strict-credentials: the
// owner credential and unsigned tokens are refused on every transport, the
// admin endpoints are off, and a user signed up through loupe still works.
func TestSecurity_StrictCredentials(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{Config: projectConfig(t), Args: []string{"--strict-credentials"}})
	unsigned := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhbGljZSIsInVzZXJfaWQiOiJhbGljZSJ9."
	doc := dbPath + "/documents/open/o1"
	for _, cred := range []struct{ name, bearer string }{{"owner credential", "owner"}, {"unsigned token", unsigned}} {
		t.Run(cred.name, func(t *testing.T) {
			if err := grpcGet(t, inst, "Bearer "+cred.bearer, doc); status.Code(err) != codes.Unauthenticated {
				t.Errorf("gRPC: %v, want Unauthenticated", err)
			}
			if code, st := restGet(t, inst, cred.bearer, doc); code != 401 || st != "UNAUTHENTICATED" {
				t.Errorf("REST: HTTP %d %s, want 401 UNAUTHENTICATED", code, st)
			}
			if code := storageGet(t, inst, "Bearer "+cred.bearer, "open/o1.txt"); code != 401 {
				t.Errorf("Storage: HTTP %d, want 401", code)
			}
		})
	}
	// WebChannel treats a refused credential as no credential: rules deny.
	if got := webChannelListen(t, inst, "Bearer "+unsigned, doc); !strings.Contains(got, `"code":7`) {
		t.Errorf("WebChannel with an unsigned token: %s, want cause code 7", got)
	}
	for _, call := range []string{"POST /emulator/v1/export", "DELETE /emulator/v1/projects/" + project + "/databases/(default)/documents", "PUT /internal/setRules"} {
		method, path, _ := strings.Cut(call, " ")
		req, _ := http.NewRequest(method, inst.URL+path, strings.NewReader(`{"path":"/tmp/x"}`))
		req.Header.Set("Authorization", "Bearer owner")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("%s with the owner credential: HTTP %d, want 403", call, resp.StatusCode)
		}
	}
	// A forged refresh token (the unsigned emulator format) is refused.
	forged := "eyJfQXV0aEVtdWxhdG9yUmVmcmVzaFRva2VuIjoiRE8gTk9UIE1PRElGWSIsImxvY2FsSWQiOiJhbGljZSIsInByb3ZpZGVyIjoicGFzc3dvcmQiLCJwcm9qZWN0SWQiOiJkZW1vLWxvdXBlIn0"
	resp, err := http.PostForm(inst.URL+"/securetoken.googleapis.com/v1/token?key=fake", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {forged}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Error("a forged refresh token was exchanged for an ID token")
	}
	// Users signed up through loupe get signed tokens that work.
	_, token, err := loupetest.SignUp(context.Background(), inst.URL, "alice@strict.test", password)
	if err != nil {
		t.Fatal(err)
	}
	if err := grpcGet(t, inst, "Bearer "+token, doc); status.Code(err) != codes.NotFound {
		t.Errorf("gRPC read as a signed-in user: %v, want NotFound (allowed, absent)", err)
	}
}

// TestSecurity_Exposure: loupe binds 127.0.0.1 unless told otherwise, and
// warns when it is reachable from other machines without strict credentials.
func TestSecurity_Exposure(t *testing.T) {
	local := loupetest.Start(t, loupetest.Options{})
	if !strings.HasPrefix(local.Host, "127.0.0.1:") {
		t.Errorf("default bind %s, want 127.0.0.1", local.Host)
	}
	if strings.Contains(local.Log(), "reachable from other machines") {
		t.Errorf("warned on a loopback bind:\n%s", local.Log())
	}
	exposed := loupetest.Start(t, loupetest.Options{Args: []string{"--host", "0.0.0.0"}})
	if !strings.Contains(exposed.Log(), "reachable from other machines") || !strings.Contains(exposed.Log(), "--strict-credentials") {
		t.Errorf("no exposure warning naming --strict-credentials:\n%s", exposed.Log())
	}
}

// TestSecurity_PathTraversal tries to reach files outside the store and the
// public folder through storage object names, hosting paths and the image
// optimiser; none answers a file's content and nothing is written outside.
func TestSecurity_PathTraversal(t *testing.T) {
	root := t.TempDir()
	dataDir := filepath.Join(root, "data")
	inst := loupetest.Start(t, loupetest.Options{DataDir: dataDir, Config: projectConfig(t)})
	secret := filepath.Join(root, "outside.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../outside.txt", "../../outside.txt", "a/../../outside.txt", "..", "."} {
		req, _ := http.NewRequest(http.MethodPost, inst.URL+"/v0/b/"+bucket+"/o?name="+url.QueryEscape(name), strings.NewReader("escaped"))
		req.Header.Set("Authorization", "Bearer owner")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("upload named %q: HTTP %d, want 400", name, resp.StatusCode)
		}
	}
	paths := []string{
		"/v0/b/" + bucket + "/o/..%2F..%2F..%2Foutside.txt?alt=media",
		"/v0/b/..%2F..%2F/o/outside.txt?alt=media",
		"/storage/v1/b/" + bucket + "/o/..%2F..%2F..%2Foutside.txt?alt=media",
		"/download/storage/v1/b/" + bucket + "/o/..%2F..%2F..%2Foutside.txt?alt=media",
		"/../../outside.txt",
		"/%2e%2e/%2e%2e/%2e%2e/outside.txt",
		"/assets/..%2f..%2f..%2f..%2foutside.txt",
		"/_next/image?url=" + url.QueryEscape("/../../../outside.txt") + "&w=64&q=75",
		"/_next/image?url=" + url.QueryEscape("/../../../../../../etc/passwd") + "&w=64&q=75",
		"/../../../../../../etc/passwd",
	}
	for _, p := range paths {
		req, _ := http.NewRequest(http.MethodGet, inst.URL+p, nil)
		req.Header.Set("Authorization", "Bearer owner")
		req.URL.Opaque = strings.SplitN(strings.TrimPrefix(inst.URL+p, "http:"), "?", 2)[0] // send the path as written
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(body, []byte("TOP-SECRET-OUTSIDE")) || bytes.Contains(body, []byte("root:x:0")) {
			t.Errorf("GET %s answered a file outside loupe's folders", p)
		}
	}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(filepath.Base(p), "outside") && p != secret {
			t.Errorf("a traversal wrote %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSecurity_RequestSizeLimits: bodies over a service's limit get that
// service's error, not an unbounded read.
func TestSecurity_RequestSizeLimits(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	huge := strings.Repeat("x", 17<<20)
	var out any
	code, err := loupetest.PostJSON(context.Background(), inst.URL+"/v1/"+dbPath+"/documents:commit", "owner", map[string]any{"writes": []any{}, "pad": huge}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 400 || errorStatus(out) != "INVALID_ARGUMENT" {
		t.Errorf("Firestore REST with a 17 MiB body: HTTP %d %v, want 400 INVALID_ARGUMENT", code, out)
	}
	code, err = loupetest.PostJSON(context.Background(), inst.URL+idt+"signUp?key=fake", "", map[string]any{"email": "big@size.test", "password": password, "pad": huge[:2<<20]}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 413 {
		t.Errorf("Auth with a 2 MiB body: HTTP %d %v, want 413", code, out)
	}
}

// TestSecurity_NoSecretsInLogs signs up, signs in and makes authenticated
// requests with verbose logging, and checks that no password, ID token or
// refresh token appears in loupe's log.
func TestSecurity_NoSecretsInLogs(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: projectConfig(t), Args: []string{"--verbose"}})
	const pw = "pw-that-must-not-be-logged-42"
	ctx := context.Background()
	var up struct{ IDToken, RefreshToken string }
	if _, err := loupetest.PostJSON(ctx, inst.URL+idt+"signUp?key=fake", "", map[string]any{"email": "quiet@logs.test", "password": pw, "returnSecureToken": true}, &up); err != nil {
		t.Fatal(err)
	}
	if _, err := signIn(ctx, inst, "quiet@logs.test", pw); err != nil {
		t.Fatal(err)
	}
	_, _ = signIn(ctx, inst, "quiet@logs.test", pw+"-wrong")
	restGet(t, inst, up.IDToken, dbPath+"/documents/secret/s1")
	_ = grpcGet(t, inst, "Bearer "+up.IDToken, dbPath+"/documents/secret/s1")
	webChannelListen(t, inst, "Bearer "+up.IDToken, dbPath+"/documents/secret/s1")
	storageGet(t, inst, "Firebase "+up.IDToken, "secret/s1.txt")
	resp, err := http.PostForm(inst.URL+"/securetoken.googleapis.com/v1/token?key=fake", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {up.RefreshToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	inst.Stop(t)
	log := inst.Log()
	payload := strings.Split(up.IDToken, ".")[1]
	for what, secret := range map[string]string{"password": pw, "ID token": payload, "refresh token": up.RefreshToken} {
		if secret == "" {
			t.Fatalf("no %s to look for", what)
		}
		if strings.Contains(log, secret) {
			t.Errorf("the log holds the %s", what)
		}
	}
}

// TestSecurity_GRPCCallsAreGuardedLikeRequests: gRPC, served by its own
// transport, gets the checks an HTTP request gets. In default mode the
// owner credential is answered for any :authority (another container's name
// for loupe), as firebase-tools does; in strict mode the owner credential is
// the admin credential on the admin port (as the Admin SDKs send it) and
// refused on the main port.
func TestSecurity_GRPCCallsAreGuardedLikeRequests(t *testing.T) {
	list := func(host, authority string) error {
		t.Helper()
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if authority != "" {
			opts = append(opts, grpc.WithAuthority(authority))
		}
		conn, err := grpc.NewClient(host, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer owner")
		_, err = pb.NewFirestoreClient(conn).ListCollectionIds(ctx, &pb.ListCollectionIdsRequest{Parent: dbPath + "/documents"})
		return err
	}
	local := loupetest.Start(t, loupetest.Options{})
	if err := list(local.Host, ""); err != nil {
		t.Errorf("owner, loupe's host: %v, want an answer", err)
	}
	if err := list(local.Host, "loupe:8080"); err != nil {
		t.Errorf("owner, :authority loupe:8080: %v, want an answer", err)
	}
	strict := loupetest.Start(t, loupetest.Options{Args: []string{"--strict-credentials"}})
	if err := list(strict.AdminHost, ""); err != nil {
		t.Errorf("strict, owner on the admin port: %v, want an answer", err)
	}
	if err := list(strict.Host, ""); status.Code(err) != codes.Unauthenticated {
		t.Errorf("strict, owner on the main port: %v, want Unauthenticated", err)
	}
}

package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"
	"firebase.google.com/go/v4/messaging"
	"golang.org/x/oauth2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestStrict_AdminMethodsNeedTheAdminCredential: with --strict-credentials
// the Auth admin methods, the captured mail and FCM refuse every caller but
// the admin: the Admin SDKs reach them through the admin port (as they reach
// an emulator, with the owner credential) or with the admin token as their
// access token.
func TestStrict_AdminMethodsNeedTheAdminCredential(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{Config: projectConfig(t), Args: []string{"--strict-credentials"}})
	ctx := context.Background()
	if _, _, err := loupetest.SignUp(ctx, inst.URL, "victim@strict.test", password); err != nil {
		t.Fatal(err)
	}
	_, userToken, err := loupetest.SignUp(ctx, inst.URL, "mallory@strict.test", password)
	if err != nil {
		t.Fatal(err)
	}
	projectIDT := "/identitytoolkit.googleapis.com/v1/projects/" + project + "/accounts"
	for _, call := range []struct{ method, path, body string }{
		{"GET", projectIDT + ":batchGet?maxResults=10", ""},
		{"POST", projectIDT + ":query", `{}`},
		{"POST", projectIDT + ":batchCreate", `{"users":[{"localId":"x","email":"victim@strict.test","customAttributes":"{\"admin\":true}"}]}`},
		{"POST", projectIDT + ":batchDelete", `{"localIds":["x"],"force":true}`},
		{"POST", projectIDT, `{"localId":"admin2","email":"a2@strict.test","password":"secret-2"}`},
		{"POST", projectIDT + ":update", `{"localId":"x","customAttributes":"{\"admin\":true}"}`},
		{"POST", projectIDT + ":lookup", `{"email":["victim@strict.test"]}`},
	} {
		for _, who := range []struct{ name, header string }{{"nobody", ""}, {"a user", "Bearer " + userToken}, {"the local owner credential", "Bearer owner"}} {
			code, out := loupetest.Call(t, call.method, inst.URL+call.path, call.body, "Authorization", who.header)
			if code != 400 && code != 401 {
				t.Errorf("%s %s as %s: HTTP %d %v, want 400 or 401", call.method, call.path, who.name, code, out)
			}
		}
	}
	if code, _ := loupetest.Call(t, "GET", inst.URL+"/emulator/auth/mail", ""); code != 403 {
		t.Errorf("captured mail in strict mode: HTTP %d, want 403", code)
	}

	// The Go Admin SDK, pointed at the admin port as at an emulator, lists
	// the accounts; pointed at the main port its owner credential is refused.
	listUsers := func(host string) (int, error) {
		t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", host)
		app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: project})
		if err != nil {
			t.Fatal(err)
		}
		client, err := app.Auth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		it := client.Users(ctx, "")
		for {
			_, err := it.Next()
			if err == iterator.Done {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}
	if n, err := listUsers(inst.AdminHost); err != nil || n != 2 {
		t.Errorf("Admin SDK through the admin port: %d users, %v; want 2", n, err)
	}
	if _, err := listUsers(inst.Host); err == nil {
		t.Error("Admin SDK with the owner credential on the main port listed the accounts")
	}
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", inst.AdminHost)
	app, _ := firebase.NewApp(ctx, &firebase.Config{ProjectID: project})
	admin, _ := app.Auth(ctx)
	if err := admin.SetCustomUserClaims(ctx, must(t, admin, "victim@strict.test").UID, map[string]any{"role": "editor"}); err != nil {
		t.Errorf("custom claims through the admin port: %v", err)
	}

	// FCM: the Go Admin SDK's messaging client sends with the admin token as
	// its access token, and without it is refused as FCM refuses.
	token := inst.AdminToken(t)
	send := func(opts ...option.ClientOption) error {
		app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: project}, append(opts, option.WithEndpoint(inst.URL+"/v1"))...)
		if err != nil {
			t.Fatal(err)
		}
		client, err := app.Messaging(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.SendDryRun(ctx, &messaging.Message{Topic: "news"})
		return err
	}
	if err := send(option.WithoutAuthentication()); err == nil || !strings.Contains(err.Error(), "authentication credential") {
		t.Errorf("FCM send without credentials: %v, want UNAUTHENTICATED", err)
	}
	if err := send(option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}))); err != nil {
		t.Errorf("FCM send with the admin token: %v", err)
	}
	if code, _ := loupetest.Call(t, "GET", inst.URL+"/emulator/v1/projects/"+project+"/messaging/messages", ""); code != 403 {
		t.Errorf("FCM inbox without credentials: HTTP %d, want 403", code)
	}
	if code, _ := loupetest.Call(t, "GET", inst.URL+"/emulator/v1/projects/"+project+"/messaging/messages", "", "Authorization", "Bearer "+token); code != 200 {
		t.Errorf("FCM inbox with the admin token: HTTP %d, want 200", code)
	}
}

func must(t *testing.T, c *auth.Client, email string) *auth.UserRecord {
	t.Helper()
	u, err := c.GetUserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestStrict_TokensAreCheckedForTimeAndProject: an expired ID token, one
// issued in the future and one of another project are refused by Firestore
// (gRPC and REST), Storage and Auth in strict mode; in local mode a token of
// another project is taken, as the official emulators take it, with one
// warning naming both projects.
func TestStrict_TokensAreCheckedForTimeAndProject(t *testing.T) {
	strict := loupetest.Start(t, loupetest.Options{Config: projectConfig(t), Args: []string{"--strict-credentials"}})
	key, err := os.ReadFile(filepath.Join(strict.DataDir, "signing.key"))
	if err != nil {
		t.Fatal(err)
	}
	uid, _, err := loupetest.SignUp(context.Background(), strict.URL, "alice@strict.test", password)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	mint := func(creds identity.Credentials, proj string, iat, exp int64) string {
		return creds.MintJWT(map[string]any{"sub": uid, "user_id": uid, "aud": proj, "iss": identity.Issuer(proj),
			"iat": iat, "exp": exp, "firebase": map[string]any{"sign_in_provider": "password"}})
	}
	signed := identity.Strict(key)
	doc := dbPath + "/documents/open/o1"
	check := func(t *testing.T, inst *loupetest.Instance, token string, wantGRPC codes.Code, wantREST, wantStorage int, wantAuth string) {
		t.Helper()
		if err := grpcGet(t, inst, "Bearer "+token, doc); status.Code(err) != wantGRPC {
			t.Errorf("Firestore gRPC: %v, want %v", err, wantGRPC)
		}
		if code, _ := restGet(t, inst, token, doc); code != wantREST {
			t.Errorf("Firestore REST: HTTP %d, want %d", code, wantREST)
		}
		if code := storageGet(t, inst, "Firebase "+token, "open/o1.txt"); code != wantStorage {
			t.Errorf("Storage: HTTP %d, want %d", code, wantStorage)
		}
		_, out := loupetest.Call(t, "POST", inst.URL+idt+"lookup?key=fake", `{"idToken":"`+token+`"}`)
		if got := errorStatus(out); wantAuth != "" || got != "" {
			msg, _ := out["error"].(map[string]any)["message"].(string)
			if msg != wantAuth {
				t.Errorf("Auth lookup: %v, want %s", out, wantAuth)
			}
		}
	}
	t.Run("strict, valid", func(t *testing.T) {
		check(t, strict, mint(signed, project, now-10, now+3600), codes.NotFound, 200, 403, "") // storage rules deny open/ to everyone
	})
	t.Run("strict, expired", func(t *testing.T) {
		check(t, strict, mint(signed, project, now-7200, now-3600), codes.Unauthenticated, 401, 401, "TOKEN_EXPIRED")
	})
	t.Run("strict, issued in the future", func(t *testing.T) {
		check(t, strict, mint(signed, project, now+3600, now+7200), codes.Unauthenticated, 401, 401, "TOKEN_EXPIRED")
	})
	t.Run("strict, another project", func(t *testing.T) {
		check(t, strict, mint(signed, "demo-other", now-10, now+3600), codes.Unauthenticated, 401, 401, "INVALID_ID_TOKEN")
	})
	local := loupetest.Start(t, loupetest.Options{Config: projectConfig(t)})
	if uid, _, err = loupetest.SignUp(context.Background(), local.URL, "alice@strict.test", password); err != nil {
		t.Fatal(err)
	}
	t.Run("local, another project", func(t *testing.T) {
		check(t, local, mint(identity.Local, "demo-other", now-10, now+3600), codes.NotFound, 200, 403, "")
		check(t, local, mint(identity.Local, "demo-other", now-10, now+3600), codes.NotFound, 200, 403, "")
		warning := "an ID token of project demo-other was used for project " + project
		if n := strings.Count(local.Log(), warning); n != 1 {
			t.Errorf("%d warnings %q in the log, want 1:\n%s", n, warning, local.Log())
		}
	})
	t.Run("local, expired mock token of the project", func(t *testing.T) {
		// The official emulators take expired unsigned tokens (Auth's own
		// lookup excepted); so does local mode.
		if err := grpcGet(t, local, "Bearer "+mint(identity.Local, project, now-7200, now-3600), doc); status.Code(err) != codes.NotFound {
			t.Errorf("Firestore gRPC: %v, want NotFound (allowed, absent)", err)
		}
	})
}

// TestStrict_UnknownFieldsAreErrors: a REST commit with a misspelt field
// (updateMsk, currentDocumnt) is refused as Google's front end refuses it,
// and the document is left as it was; so is an unknown query parameter.
func TestStrict_UnknownFieldsAreErrors(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	ctx := context.Background()
	name := dbPath + "/documents/notes/n1"
	if code, err := loupetest.RESTCommit(ctx, inst.URL, dbPath, "owner", `{"writes":[{"update":{"name":"`+name+`","fields":{"a":{"integerValue":"1"},"b":{"integerValue":"2"}}}}]}`, nil); err != nil || code != 200 {
		t.Fatalf("seed: %d %v", code, err)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"writes":[{"update":{"name":"` + name + `","fields":{"a":{"integerValue":"9"}}},"updateMsk":{"fieldPaths":["a"]}}]}`,
			`Invalid JSON payload received. Unknown name "updateMsk" at 'writes[0]': Cannot find field.`},
		{`{"writes":[{"delete":"` + name + `","currentDocumnt":{"exists":false}}]}`,
			`Invalid JSON payload received. Unknown name "currentDocumnt" at 'writes[0]': Cannot find field.`},
		{`{"writes":[{"update":{"name":"` + name + `","fields":{"a":{"integerValu":"9"}}}}]}`,
			`Invalid JSON payload received. Unknown name "integerValu" at 'writes[0].update.fields[a]': Cannot find field.`},
		{`{"writez":[]}`, `Invalid JSON payload received. Unknown name "writez": Cannot find field.`},
	} {
		var out struct {
			Error struct {
				Code            int
				Message, Status string
			}
		}
		code, err := loupetest.RESTCommit(ctx, inst.URL, dbPath, "owner", tc.body, &out)
		if err != nil || code != 400 || out.Error.Message != tc.want || out.Error.Status != "INVALID_ARGUMENT" {
			t.Errorf("commit %s: HTTP %d %+v %v\nwant 400 %s", tc.body, code, out.Error, err, tc.want)
		}
	}
	code, out := loupetest.Call(t, "GET", inst.URL+"/v1/"+name+"?mask.fieldPath=a", "", "Authorization", "Bearer owner")
	if msg, _ := out["error"].(map[string]any)["message"].(string); code != 400 || !strings.Contains(msg, `Unknown name "mask.fieldPath": Cannot bind query parameter`) {
		t.Errorf("GET with an unknown parameter: %d %v", code, out)
	}
	// A query parameter that does not parse as its field's type: the front
	// end's words (seen in production answers of Google's REST APIs).
	for _, tc := range []struct{ method, url, want string }{
		{"GET", dbPath + "/documents/notes?pageSize=abc", `Invalid value at 'page_size' (TYPE_INT32), "abc"`},
		{"PATCH", name + "?currentDocument.exists=maybe", `Invalid value at 'current_document.exists' (TYPE_BOOL), "maybe"`},
	} {
		code, out := loupetest.Call(t, tc.method, inst.URL+"/v1/"+tc.url, `{"fields":{}}`, "Authorization", "Bearer owner")
		if msg, _ := out["error"].(map[string]any)["message"].(string); code != 400 || msg != tc.want {
			t.Errorf("%s %s: %d %v\nwant 400 %s", tc.method, tc.url, code, out, tc.want)
		}
	}
	code, out = loupetest.Call(t, "GET", inst.URL+"/v1/"+name+"?mask.fieldPaths=a&key=k", "", "Authorization", "Bearer owner")
	fields, _ := out["fields"].(map[string]any)
	if code != 200 || len(fields) != 1 {
		t.Errorf("GET with known parameters: %d %v", code, out)
	}
	code, out = loupetest.Call(t, "GET", inst.URL+"/v1/"+name, "", "Authorization", "Bearer owner")
	if fields, _ := out["fields"].(map[string]any); code != 200 || len(fields) != 2 || !strings.Contains(fmt.Sprint(fields["a"]), "1") {
		t.Errorf("the refused commits changed the document: %d %v", code, out)
	}
}

// TestStrict_ExportKeepsWhatIsNotItsOwn: `loupe data export .` in a project
// folder is refused and changes nothing; with --force it writes its own
// entries beside .git/ and src/, and a second export replaces only those.
func TestStrict_ExportKeepsWhatIsNotItsOwn(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	dir := t.TempDir()
	for _, f := range []string{".git/HEAD", "src/main.go", "web/index.html", "README.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	export := func(args ...string) (string, error) {
		cmd := exec.Command(loupetest.Binary(t), append([]string{"data", "export", dir, "--emulator", inst.Host}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := export(); err == nil || !strings.Contains(out, "holds no export") {
		t.Errorf("export into a project folder: %v %s, want a refusal", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "firebase-export-metadata.json")); err == nil {
		t.Error("a refused export wrote its metadata")
	}
	for range 2 {
		if out, err := export("--force"); err != nil {
			t.Fatalf("export --force: %v %s", err, out)
		}
	}
	for _, f := range []string{".git/HEAD", "src/main.go", "web/index.html", "README.md", "firebase-export-metadata.json", "firestore_export", "auth_export"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after two exports: %v", err)
		}
	}
	// Through the HTTP endpoint a page cannot force it.
	code, _ := loupetest.Call(t, "POST", inst.URL+"/emulator/v1/export", `{"path":"`+filepath.Join(dir, "src")+`","force":true}`, "Origin", inst.URL)
	if code != 400 {
		t.Errorf("forced export from a page: HTTP %d, want 400", code)
	}
}

// TestStrict_DataPathsOverHTTPAreConfined: an export or import path given
// over HTTP must lie in the project folder, the data dir or the temp
// folder, and a refused one reveals nothing of the folder; loupe data
// export and import, run by the user, still reach any folder.
func TestStrict_DataPathsOverHTTPAreConfined(t *testing.T) {
	// loupe's temp folder (and its CLI's) is the test's own, so that the
	// folder outside stays outside when the repository sits under /tmp.
	tmp := "TMPDIR=" + t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{Env: []string{tmp}})
	// A folder outside the temp folder, the project and the data dir.
	outside := filepath.Join(loupetest.RepoFile("bin"), fmt.Sprintf("strict-data-%d", os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(outside) })
	for _, call := range []struct{ path, body string }{
		{"/emulator/v1/import", `{"path":"/etc"}`},
		{"/emulator/v1/export", `{"path":"` + outside + `"}`},
		{"/emulator/v1/export", `{"path":"` + os.TempDir() + `/../` + outside + `"}`},
		{"/_admin/export", `{"path":"` + outside + `"}`},
	} {
		code, out := loupetest.Call(t, "POST", inst.URL+call.path, call.body)
		if code == 200 || strings.Contains(fmt.Sprint(out), "passwd") || strings.Contains(fmt.Sprint(out), "hostname") {
			t.Errorf("POST %s %s: HTTP %d %v, want a refusal that lists nothing", call.path, call.body, code, out)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("an export over HTTP wrote outside the project folder, the data dir and the temp folder")
	}
	if _, _, err := loupetest.SignUp(context.Background(), inst.URL, "kept@strict.test", password); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"data", "export", outside}, {"data", "import", outside}} {
		cmd := exec.Command(loupetest.Binary(t), append(args, "--emulator", inst.Host)...)
		cmd.Env = append(os.Environ(), tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("loupe %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "auth_export", "accounts.json")); err != nil {
		t.Errorf("loupe data export outside the roots wrote no accounts: %v", err)
	}
	if _, err := signIn(context.Background(), inst, "kept@strict.test", password); err != nil {
		t.Errorf("after loupe data import from outside the roots: %v", err)
	}
}

package auth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/api/iterator"
)

const project = "demo-loupe"

func adminClient(t *testing.T, inst *loupetest.Instance) *auth.Client {
	t.Helper()
	t.Setenv("FIREBASE_AUTH_EMULATOR_HOST", inst.Host)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: project})
	if err != nil {
		t.Fatal(err)
	}
	c, err := app.Auth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// call posts JSON to an Identity Toolkit path as the JS SDK does (?key=…).
func call(t *testing.T, inst *loupetest.Instance, path string, body any) (int, map[string]any) {
	t.Helper()
	code, out := loupetest.Post(t, inst.URL+path+"?key=demo-api-key", "", body)
	if out == nil {
		t.Fatalf("%s: %d, not a JSON object", path, code)
	}
	return code, out
}

const idt = "/identitytoolkit.googleapis.com/v1/accounts:"

func TestAuth_AdminSDK(t *testing.T) {
	ctx := context.Background()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	c := adminClient(t, inst)
	u, err := c.CreateUser(ctx, (&auth.UserToCreate{}).UID("maya").Email("Maya@Loupe.dev").Password("secret1").DisplayName("Maya"))
	if err != nil {
		t.Fatal(err)
	}
	if u.UID != "maya" || u.Email != "maya@loupe.dev" || u.DisplayName != "Maya" {
		t.Errorf("created %+v", u.UserInfo)
	}
	if _, err := c.CreateUser(ctx, (&auth.UserToCreate{}).Email("maya@loupe.dev").Password("secret1")); !auth.IsEmailAlreadyExists(err) {
		t.Errorf("duplicate e-mail: %v", err)
	}
	if err := c.SetCustomUserClaims(ctx, "maya", map[string]any{"role": "admin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateUser(ctx, "maya", (&auth.UserToUpdate{}).Disabled(true)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetUserByEmail(ctx, "maya@loupe.dev")
	if err != nil || !got.Disabled || got.CustomClaims["role"] != "admin" {
		t.Errorf("after update: %+v %v", got, err)
	}
	if _, err := c.GetUser(ctx, "nobody"); !auth.IsUserNotFound(err) {
		t.Errorf("unknown uid: %v", err)
	}
	for i := range 3 {
		if _, err := c.CreateUser(ctx, (&auth.UserToCreate{}).Email(string(rune('a'+i))+"@x.dev").Password("secret1")); err != nil {
			t.Fatal(err)
		}
	}
	it := c.Users(ctx, "")
	n := 0
	for {
		_, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Errorf("listed %d users, want 4", n)
	}
	if err := c.DeleteUser(ctx, "maya"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetUser(ctx, "maya"); !auth.IsUserNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
	// The SDK's requests that carry nested messages (UserInfo and its
	// ProviderUserInfo, MfaInfo and its enrollments, ProviderUserInfo to
	// link, sign-up's MfaFactor, FederatedUserIdentifier) pass the front
	// end's field checks.
	imported, err := c.ImportUsers(ctx, []*auth.UserToImport{(&auth.UserToImport{}).UID("ines").Email("ines@x.dev").
		Metadata(&auth.UserMetadata{CreationTimestamp: 1700000000000}).CustomClaims(map[string]any{"tier": 2}).
		ProviderData([]*auth.UserProvider{{UID: "g-ines", ProviderID: "google.com", Email: "ines@x.dev", DisplayName: "Ines"}})})
	if err != nil || imported.FailureCount != 0 {
		t.Fatalf("import: %+v %v", imported, err)
	}
	if _, err := c.UpdateUser(ctx, "ines", (&auth.UserToUpdate{}).
		ProviderToLink(&auth.UserProvider{UID: "gh-ines", ProviderID: "github.com", DisplayName: "Ines"}).
		MFASettings(auth.MultiFactorSettings{EnrolledFactors: []*auth.MultiFactorInfo{{DisplayName: "phone", FactorID: "phone",
			Phone: &auth.PhoneMultiFactorInfo{PhoneNumber: "+15555550100"}}}})); err != nil {
		t.Errorf("update with nested messages: %v", err)
	}
	if _, err := c.CreateUser(ctx, (&auth.UserToCreate{}).UID("zed").MFASettings(auth.MultiFactorSettings{EnrolledFactors: []*auth.MultiFactorInfo{
		{DisplayName: "phone", FactorID: "phone", Phone: &auth.PhoneMultiFactorInfo{PhoneNumber: "+15555550101"}}}})); err != nil {
		t.Errorf("create with a second factor: %v", err)
	}
	if _, err := c.GetUsers(ctx, []auth.UserIdentifier{auth.ProviderIdentifier{ProviderID: "google.com", ProviderUID: "g-ines"}}); err != nil {
		t.Errorf("lookup by federated id: %v", err)
	}
}

func TestAuth_VerifyIDToken(t *testing.T) {
	ctx := context.Background()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	c := adminClient(t, inst)
	_, out := call(t, inst, idt+"signUp", map[string]any{"email": "sam@loupe.dev", "password": "secret1", "returnSecureToken": true})
	token, _ := out["idToken"].(string)
	tok, err := c.VerifyIDToken(ctx, token)
	if err != nil || tok.UID != out["localId"] || tok.Claims["email"] != "sam@loupe.dev" {
		t.Fatalf("verify: %+v %v", tok, err)
	}
	if _, err := c.VerifyIDToken(ctx, "garbage"); err == nil {
		t.Error("garbage token accepted")
	}
	if err := c.SetCustomUserClaims(ctx, tok.UID, map[string]any{"role": "admin"}); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {out["refreshToken"].(string)}}
	resp, err := http.PostForm(inst.URL+"/securetoken.googleapis.com/v1/token?key=k", form)
	if err != nil {
		t.Fatal(err)
	}
	var refreshed map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&refreshed)
	resp.Body.Close()
	tok2, err := c.VerifyIDToken(ctx, refreshed["id_token"].(string))
	if err != nil || tok2.Claims["role"] != "admin" {
		t.Errorf("custom claims after refresh: %+v %v", tok2, err)
	}
	if err := c.DeleteUser(ctx, tok.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.VerifyIDToken(ctx, token); err == nil {
		t.Error("token of a deleted user accepted")
	}
}

func TestAuth_PasswordResetThroughTheCapturedMail(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true})
	call(t, inst, idt+"signUp", map[string]any{"email": "sam@loupe.dev", "password": "secret1"})
	call(t, inst, idt+"sendOobCode", map[string]any{"requestType": "PASSWORD_RESET", "email": "sam@loupe.dev"})
	resp, err := http.Get(inst.URL + "/emulator/v1/projects/" + project + "/oobCodes")
	if err != nil {
		t.Fatal(err)
	}
	var codes struct {
		OOBCodes []struct{ Email, RequestType, OOBCode, OOBLink string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&codes)
	resp.Body.Close()
	if len(codes.OOBCodes) != 1 || codes.OOBCodes[0].RequestType != "PASSWORD_RESET" || !strings.Contains(codes.OOBCodes[0].OOBLink, "mode=resetPassword") {
		t.Fatalf("codes = %+v", codes)
	}
	link, _ := url.Parse(codes.OOBCodes[0].OOBLink)
	form := url.Values{"mode": {"resetPassword"}, "oobCode": {link.Query().Get("oobCode")}, "newPassword": {"brand-new"}}
	resp, err = http.PostForm(inst.URL+"/emulator/action", form)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Password changed") {
		t.Errorf("action page: %s", page)
	}
	if status, out := call(t, inst, idt+"signInWithPassword", map[string]any{"email": "sam@loupe.dev", "password": "brand-new"}); status != 200 {
		t.Errorf("sign in with the new password: %d %v", status, out)
	}
	if status, _ := call(t, inst, idt+"signInWithPassword", map[string]any{"email": "sam@loupe.dev", "password": "secret1"}); status != 400 {
		t.Errorf("old password still works")
	}
}

func TestAuth_PersistsAndRoundTripsExports(t *testing.T) {
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
	call(t, inst, idt+"signUp", map[string]any{"email": "kept@loupe.dev", "password": "secret1"})
	inst.Kill()
	inst = loupetest.Start(t, loupetest.Options{DataDir: dir})
	if status, out := call(t, inst, idt+"signInWithPassword", map[string]any{"email": "kept@loupe.dev", "password": "secret1"}); status != 200 {
		t.Fatalf("after kill -9: %d %v", status, out)
	}
	export := t.TempDir() + "/export"
	inst.Stop(t)
	inst = loupetest.Start(t, loupetest.Options{DataDir: dir, Args: []string{"--export-on-exit", export}})
	inst.Stop(t)
	inst = loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--import", export}})
	if status, out := call(t, inst, idt+"signInWithPassword", map[string]any{"email": "kept@loupe.dev", "password": "secret1"}); status != 200 {
		t.Errorf("after export and import: %d %v", status, out)
	}
}

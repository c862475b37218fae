package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// TestEngine_DoReportsKindsTheAdapterMaps calls the core with no HTTP: the
// Identity Toolkit's errors are InvalidArgument with firebase-tools'
// message, payload errors carry ErrMalformed, an unknown method is
// NotFound, and a failed call changes nothing.
func TestEngine_DoReportsKindsTheAdapterMaps(t *testing.T) {
	e, err := NewEngine("", "demo-loupe", identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	user := func(params map[string]any) *Call {
		return &Call{Project: "demo-loupe", Params: params, BaseURL: "http://127.0.0.1:1"}
	}
	if _, err := e.Do("signUp", user(map[string]any{"email": "a@b.co", "password": "secret1"})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method string
		call         *Call
		kind         errs.Kind
		message      string
		malformed    bool
	}{
		{"existing e-mail", "signUp", user(map[string]any{"email": "a@b.co", "password": "secret1"}), errs.InvalidArgument, "EMAIL_EXISTS", false},
		{"wrong password", "signInWithPassword", user(map[string]any{"email": "a@b.co", "password": "nope12"}), errs.InvalidArgument, "INVALID_PASSWORD", false},
		{"users not a list", "batchCreate", &Call{Project: "demo-loupe", Admin: true, Params: map[string]any{"users": 7}}, errs.InvalidArgument, "Invalid JSON payload received.", true},
		{"unknown method", "frobnicate", user(nil), errs.NotFound, "Not Found", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Do(tc.method, tc.call)
			if errs.KindOf(err) != tc.kind || !strings.HasPrefix(err.Error(), tc.message) || errors.Is(err, ErrMalformed) != tc.malformed {
				t.Errorf("got %v (kind %v, malformed %v), want kind %v %q malformed %v", err, errs.KindOf(err), errors.Is(err, ErrMalformed), tc.kind, tc.message, tc.malformed)
			}
		})
	}
	out, err := e.Do("createAuthUri", user(map[string]any{"identifier": "a@b.co"}))
	if err != nil || out["registered"] != true {
		t.Errorf("after the failed calls: %v %v, want the account still registered", out, err)
	}
}

// TestEngine_ActCompletesAnEmailAction follows a verification e-mail's
// link through the core: asked once it verifies the address, and the used
// code has expired.
func TestEngine_ActCompletesAnEmailAction(t *testing.T) {
	e, err := NewEngine("", "demo-loupe", identity.Local)
	if err != nil {
		t.Fatal(err)
	}
	up, err := e.Do("signUp", &Call{Project: "demo-loupe", Params: map[string]any{"email": "a@b.co", "password": "secret1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Do("sendOobCode", &Call{Project: "demo-loupe", BaseURL: "http://x", Params: map[string]any{"requestType": "VERIFY_EMAIL", "idToken": up["idToken"]}}); err != nil {
		t.Fatal(err)
	}
	mail := e.Mail("demo-loupe")
	if len(mail) != 1 || !strings.HasPrefix(mail[0].OOBLink, "http://x/emulator/action?mode=verifyEmail") {
		t.Fatalf("mail %+v", mail)
	}
	if a, err := e.Act(mail[0].OOBCode, "verifyEmail", "", false); err != nil || a.Outcome != ActionVerified || a.Email != "a@b.co" {
		t.Errorf("first use: %+v %v", a, err)
	}
	if a, _ := e.Act(mail[0].OOBCode, "verifyEmail", "", false); a.Outcome != ActionExpired {
		t.Errorf("second use: %+v, want expired", a)
	}
	out, _ := e.Do("lookup", &Call{Project: "demo-loupe", Params: map[string]any{"idToken": up["idToken"]}})
	if users, _ := out["users"].([]map[string]any); len(users) != 1 || users[0]["emailVerified"] != true {
		t.Errorf("lookup after verifying: %v", out)
	}
}

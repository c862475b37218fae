package emulator_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

const idt = "/identitytoolkit.googleapis.com/v1"

// serve sends one request to the in-process app and returns the recorded
// answer; form, when not nil, is sent as a form.
func serve(h *inproc.Harness, method, target, bearer string, form url.Values) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, "http://localhost"+target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, "http://localhost"+target, nil)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	w := httptest.NewRecorder()
	h.Handler().ServeHTTP(w, req)
	return w
}

// call posts a JSON body to the Auth REST API and decodes the answer.
func call(t *testing.T, h *inproc.Harness, path, body string) map[string]any {
	t.Helper()
	code, out := h.Do("POST", idt+path+"?key=fake", "application/json", "", body)
	if code != http.StatusOK {
		t.Fatalf("%s = %d %s", path, code, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// lastCode is the out-of-band code of the last e-mail loupe captured.
func lastCode(t *testing.T, h *inproc.Harness) string {
	t.Helper()
	w := serve(h, "GET", "/emulator/v1/projects/"+h.Project+"/oobCodes", h.AdminToken(), nil)
	var out struct {
		OOBCodes []struct{ OOBCode string } `json:"oobCodes"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); w.Code != http.StatusOK || err != nil || len(out.OOBCodes) == 0 {
		t.Fatalf("oobCodes = %d %s", w.Code, w.Body)
	}
	return out.OOBCodes[len(out.OOBCodes)-1].OOBCode
}

// page checks that an answer is the page titled title with status code.
func page(t *testing.T, w *httptest.ResponseRecorder, code int, title string) string {
	t.Helper()
	body := w.Body.String()
	if w.Code != code || !strings.Contains(body, "<h1>"+title+"</h1>") {
		t.Errorf("answer %d %.400s, want %d and the page %q", w.Code, body, code, title)
	}
	return body
}

// TestActionPages opens the e-mail links loupe sends as a person does: a
// password reset asks for a password, refuses a weak one, sets a strong
// one and is used up; a verification link verifies; a sign-in link sends
// the browser on to the app with the link's parameters; the mail page lists
// what was sent; the Google chooser names the opener's origin safely.
func TestActionPages(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"auth"}})
	call(t, h, "/accounts:signUp", `{"email":"ann@loupe.dev","password":"secret1","returnSecureToken":true}`)

	call(t, h, "/accounts:sendOobCode", `{"requestType":"PASSWORD_RESET","email":"ann@loupe.dev"}`)
	code := lastCode(t, h)
	link := "/emulator/action?mode=resetPassword&oobCode=" + url.QueryEscape(code)
	if body := page(t, serve(h, "GET", link, "", nil), http.StatusOK, "Choose a new password"); !strings.Contains(body, `name="oobCode" value="`+code+`"`) {
		t.Errorf("the reset page's form does not carry the code: %.600s", body)
	}
	reset := url.Values{"mode": {"resetPassword"}, "oobCode": {code}}
	reset.Set("newPassword", "abc")
	page(t, serve(h, "POST", "/emulator/action", "", reset), http.StatusBadRequest, "Choose a new password")
	reset.Set("newPassword", "better-secret")
	page(t, serve(h, "POST", "/emulator/action", "", reset), http.StatusOK, "Password changed")
	page(t, serve(h, "POST", "/emulator/action", "", reset), http.StatusBadRequest, "This link has expired")
	// The reset revoked the tokens issued before it (validSince), so what
	// follows uses the token of a sign-in with the new password.
	signedIn := call(t, h, "/accounts:signInWithPassword", `{"email":"ann@loupe.dev","password":"better-secret","returnSecureToken":true}`)
	idToken, _ := signedIn["idToken"].(string)

	call(t, h, "/accounts:sendOobCode", `{"requestType":"VERIFY_EMAIL","idToken":"`+idToken+`"}`)
	page(t, serve(h, "GET", "/emulator/action?mode=verifyEmail&oobCode="+url.QueryEscape(lastCode(t, h)), "", nil), http.StatusOK, "Your e-mail is verified")
	looked := call(t, h, "/accounts:lookup", `{"idToken":"`+idToken+`"}`)
	if users, _ := looked["users"].([]any); len(users) != 1 || users[0].(map[string]any)["emailVerified"] != true {
		t.Errorf("after the verification link, lookup = %v, want emailVerified", looked)
	}

	w := serve(h, "GET", "/emulator/action?mode=signIn&oobCode=c1&continueUrl="+url.QueryEscape("http://localhost:5173/finish?from=mail"), "", nil)
	to, err := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusSeeOther || err != nil || to.Host != "localhost:5173" || to.Query().Get("oobCode") != "c1" || to.Query().Get("mode") != "signIn" || to.Query().Get("from") != "mail" {
		t.Errorf("sign-in link = %d to %q, want 303 to the continueUrl with the link's parameters", w.Code, w.Header().Get("Location"))
	}
	page(t, serve(h, "GET", "/emulator/action?mode=signIn&oobCode=c1", "", nil), http.StatusBadRequest, "This link cannot sign in")

	mail := page(t, serve(h, "GET", "/emulator/auth/mail", h.AdminToken(), nil), http.StatusOK, "Mail")
	if !strings.Contains(mail, "2 e-mail(s)") || !strings.Contains(mail, "Password reset") || !strings.Contains(mail, "Verify e-mail") {
		t.Errorf("the mail page does not list the reset and the verification: %.800s", mail)
	}

	chooser := page(t, serve(h, "GET", "/emulator/auth/handler?origin="+url.QueryEscape("http://x/</script><script>alert(1)//'"), "", nil), http.StatusOK, "Sign in with Google")
	if strings.Contains(chooser, "</script><script>alert(1)") {
		t.Errorf("the chooser page writes the origin unescaped into its script: %.300s", chooser[strings.Index(chooser, "const origin"):])
	}
}

package stripe_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/stripe"
)

func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	routes := &server.Routes{HTTP: http.NewServeMux()}
	stripe.New(func() (*url.URL, bool) { return nil, false }).Register(routes)
	srv := httptest.NewServer(routes.HTTP)
	t.Cleanup(srv.Close)
	return srv
}

func call(t *testing.T, srv *httptest.Server, method, path, key string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestService_StripeErrors checks the answers stripe-go turns into
// *stripe.Error: status, type, code and param as Stripe sends them.
func TestService_StripeErrors(t *testing.T) {
	srv := newServer(t)
	_, acct := call(t, srv, "POST", "/v1/accounts", stripe.SecretKey, url.Values{"type": {"express"}, "metadata[uid]": {"u1"}})
	id, _ := acct["id"].(string)
	if !strings.HasPrefix(id, "acct_") || acct["charges_enabled"] != false || acct["metadata"].(map[string]any)["uid"] != "u1" {
		t.Fatalf("created account = %v", acct)
	}
	for _, c := range []struct {
		name, method, path, key string
		form                    url.Values
		status                  int
		code, param             string
	}{
		{"no key", "POST", "/v1/accounts", "", nil, 401, "", ""},
		{"live key", "POST", "/v1/accounts", "sk_live_x", nil, 401, "", ""},
		{"bad type", "POST", "/v1/accounts", stripe.SecretKey, url.Values{"type": {"premium"}}, 400, "parameter_invalid_string", "type"},
		{"unknown account", "GET", "/v1/accounts/acct_nope", stripe.SecretKey, nil, 404, "resource_missing", "account"},
		{"link without return_url", "POST", "/v1/account_links", stripe.SecretKey,
			url.Values{"account": {id}, "type": {"account_onboarding"}, "refresh_url": {"http://a/r"}}, 400, "parameter_missing", "return_url"},
		{"link for unknown account", "POST", "/v1/account_links", stripe.SecretKey,
			url.Values{"account": {"acct_nope"}, "type": {"account_onboarding"}, "refresh_url": {"http://a/r"}, "return_url": {"http://a/ok"}}, 404, "resource_missing", "account"},
	} {
		status, out := call(t, srv, c.method, c.path, c.key, c.form)
		e, _ := out["error"].(map[string]any)
		if status != c.status || e["type"] != "invalid_request_error" || e["message"] == "" ||
			(c.code != "" && e["code"] != c.code) || (c.param != "" && e["param"] != c.param) {
			t.Errorf("%s: %d %v, want %d %s %s", c.name, status, out, c.status, c.code, c.param)
		}
	}
}

// TestService_OnboardingWithoutFunctions shows the person why nothing
// happened when the functions process is not running yet.
func TestService_OnboardingWithoutFunctions(t *testing.T) {
	srv := newServer(t)
	_, acct := call(t, srv, "POST", "/v1/accounts", stripe.SecretKey, url.Values{"type": {"express"}})
	_, link := call(t, srv, "POST", "/v1/account_links", stripe.SecretKey, url.Values{"account": {acct["id"].(string)},
		"type": {"account_onboarding"}, "refresh_url": {"http://a/r"}, "return_url": {"http://a/ok"}})
	resp, err := http.PostForm(link["url"].(string), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body.String(), "not running yet") {
		t.Errorf("completing without functions = %d %s", resp.StatusCode, body)
	}
}

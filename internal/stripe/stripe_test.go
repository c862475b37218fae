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
	routes := &server.Routes{HTTP: server.NewMux()}
	stripe.New(server.Env{}, func(http.ResponseWriter, *http.Request) bool { return false }).Register(routes)
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

// TestService_CheckoutErrorsAndIdempotency answers Checkout and refund
// mistakes as Stripe does, and replays the first answer to a repeated
// Idempotency-Key.
func TestService_CheckoutErrorsAndIdempotency(t *testing.T) {
	srv := newServer(t)
	item := url.Values{"mode": {"payment"}, "success_url": {"http://app/ok"}, "line_items[0][quantity]": {"1"},
		"line_items[0][price_data][currency]": {"eur"}, "line_items[0][price_data][unit_amount]": {"3897"},
		"line_items[0][price_data][product_data][name]": {"Feedback"}, "metadata[requestId]": {"r1"}}
	without := func(key string) url.Values {
		v := url.Values{}
		for k, vs := range item {
			if k != key {
				v[k] = vs
			}
		}
		return v
	}
	with := func(key, value string) url.Values {
		v := without(key)
		v.Set(key, value)
		return v
	}
	for _, c := range []struct {
		name, path  string
		form        url.Values
		status      int
		code, param string
	}{
		{"no success_url", "/v1/checkout/sessions", without("success_url"), 400, "parameter_missing", "success_url"},
		{"subscription mode", "/v1/checkout/sessions", with("mode", "subscription"), 400, "parameter_invalid_string", "mode"},
		{"zero amount", "/v1/checkout/sessions", with("line_items[0][price_data][unit_amount]", "0"), 400, "parameter_invalid_integer", "line_items[0][price_data][unit_amount]"},
		{"refund of nothing", "/v1/refunds", url.Values{}, 400, "parameter_missing", "charge"},
		{"refund of an unknown intent", "/v1/refunds", url.Values{"payment_intent": {"pi_nope"}}, 404, "resource_missing", "payment_intent"},
	} {
		status, out := call(t, srv, "POST", c.path, stripe.SecretKey, c.form)
		e, _ := out["error"].(map[string]any)
		if status != c.status || e["type"] != "invalid_request_error" || e["code"] != c.code || e["param"] != c.param {
			t.Errorf("%s: %d %v, want %d %s %s", c.name, status, out, c.status, c.code, c.param)
		}
	}
	_, s := call(t, srv, "POST", "/v1/checkout/sessions", stripe.SecretKey, item)
	if s["object"] != "checkout.session" || s["amount_total"] != 3897.0 || s["currency"] != "eur" || s["payment_status"] != "unpaid" ||
		!strings.HasPrefix(s["url"].(string), srv.URL+"/emulator/stripe/checkout/cs_test_") {
		t.Fatalf("session = %v", s)
	}
	if code, got := call(t, srv, "GET", "/v1/checkout/sessions/"+s["id"].(string), stripe.SecretKey, nil); code != 200 || got["id"] != s["id"] {
		t.Errorf("GET session = %d %v", code, got)
	}

	twice := func() string {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/accounts", strings.NewReader("type=express"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+stripe.SecretKey)
		req.Header.Set("Idempotency-Key", "k-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&a)
		return a["id"].(string)
	}
	if a, b := twice(), twice(); a != b {
		t.Errorf("the same Idempotency-Key created %s and %s", a, b)
	}
}

// TestCheckout_DecliningTestCards: Stripe's declining test cards leave the
// session open and the page says Stripe's words for the decline; 4242 pays.
func TestCheckout_DecliningTestCards(t *testing.T) {
	srv := newServer(t)
	_, s := call(t, srv, "POST", "/v1/checkout/sessions", stripe.SecretKey, url.Values{"mode": {"payment"},
		"success_url": {"http://app/ok"}, "line_items[0][quantity]": {"1"}, "line_items[0][price_data][currency]": {"usd"},
		"line_items[0][price_data][unit_amount]": {"2500"}, "line_items[0][price_data][product_data][name]": {"Feedback"}})
	page := s["url"].(string)
	pay := func(card string) (int, string) {
		t.Helper()
		resp, err := http.PostForm(page, url.Values{"card": {card}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		return resp.StatusCode, body.String()
	}
	for card, want := range map[string]string{
		"4000 0000 0000 0002": "Your card was declined.",
		"4000000000009995":    "Your card has insufficient funds.",
		"4000 0000 0000 0069": "Your card has expired.",
		"4000 0000 0000 0127": "Your card&#39;s security code is incorrect.",
		"1234 5678 9012 3456": "Your card number is incorrect.",
	} {
		code, body := pay(card)
		if code != http.StatusPaymentRequired || !strings.Contains(body, want) {
			t.Errorf("card %s: %d, want 402 saying %q", card, code, want)
		}
	}
	if _, got := call(t, srv, "GET", "/v1/checkout/sessions/"+s["id"].(string), stripe.SecretKey, nil); got["payment_status"] != "unpaid" || got["status"] != "open" {
		t.Fatalf("after declines the session is %v %v, want open and unpaid", got["status"], got["payment_status"])
	}
	// Without functions to take the events the page answers 502 (and offers to resend), but the card paid.
	if code, body := pay("4242 4242 4242 4242"); code != http.StatusBadGateway || !strings.Contains(body, "Your test payment went through") {
		t.Errorf("4242: %d, want 502 saying the payment went through", code)
	}
	if _, got := call(t, srv, "GET", "/v1/checkout/sessions/"+s["id"].(string), stripe.SecretKey, nil); got["payment_status"] != "paid" {
		t.Errorf("after 4242 the session is %v", got["payment_status"])
	}
}

package stripe_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/stripe"
)

// TestService_DestinationChargeTransfers: paying a session whose payment
// intent names a connected account transfers the amount less the fee to it,
// GET /v1/transfers lists it by destination, and a refund with
// reverse_transfer takes it back.
func TestService_DestinationChargeTransfers(t *testing.T) {
	srv := newServer(t)
	_, acct := call(t, srv, "POST", "/v1/accounts", stripe.SecretKey, url.Values{"type": {"express"}})
	dest := acct["id"].(string)
	item := url.Values{"mode": {"payment"}, "success_url": {"http://app/ok"},
		"line_items[0][price_data][currency]": {"eur"}, "line_items[0][price_data][unit_amount]": {"3897"},
		"line_items[0][price_data][product_data][name]": {"Feedback"}, "payment_intent_data[metadata][requestId]": {"r1"},
		"payment_intent_data[transfer_data][destination]": {dest}, "payment_intent_data[application_fee_amount]": {"390"}}
	bad := url.Values{}
	for k, v := range item {
		bad[k] = v
	}
	bad.Set("payment_intent_data[transfer_data][destination]", "acct_nope")
	if code, out := call(t, srv, "POST", "/v1/checkout/sessions", stripe.SecretKey, bad); code != 400 ||
		out["error"].(map[string]any)["code"] != "resource_missing" {
		t.Errorf("session for an unknown destination: %d %v", code, out)
	}
	_, s := call(t, srv, "POST", "/v1/checkout/sessions", stripe.SecretKey, item)
	// Paying needs no functions process: the objects are stored before the events are sent.
	resp, err := http.PostForm(srv.URL+"/emulator/stripe/checkout/"+s["id"].(string), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	_, list := call(t, srv, "GET", "/v1/transfers?destination="+dest, stripe.SecretKey, nil)
	data, _ := list["data"].([]any)
	if list["object"] != "list" || len(data) != 1 {
		t.Fatalf("transfers to %s = %v", dest, list)
	}
	tr := data[0].(map[string]any)
	if tr["amount"] != 3507.0 || tr["currency"] != "eur" || tr["destination"] != dest || tr["reversed"] != false ||
		tr["metadata"].(map[string]any)["requestId"] != "r1" || !strings.HasPrefix(tr["source_transaction"].(string), "ch_") {
		t.Errorf("transfer = %v", tr)
	}
	if _, other := call(t, srv, "GET", "/v1/transfers?destination=acct_other", stripe.SecretKey, nil); len(other["data"].([]any)) != 0 {
		t.Errorf("transfers to another account = %v", other)
	}

	_, session := call(t, srv, "GET", "/v1/checkout/sessions/"+s["id"].(string), stripe.SecretKey, nil)
	if code, re := call(t, srv, "POST", "/v1/refunds", stripe.SecretKey,
		url.Values{"payment_intent": {session["payment_intent"].(string)}, "reverse_transfer": {"true"}}); code != 200 || re["amount"] != 3897.0 {
		t.Fatalf("refund = %d %v", code, re)
	}
	_, back := call(t, srv, "GET", "/v1/transfers/"+tr["id"].(string), stripe.SecretKey, nil)
	if back["reversed"] != true || back["amount_reversed"] != 3507.0 {
		t.Errorf("transfer after the refund = %v", back)
	}
}

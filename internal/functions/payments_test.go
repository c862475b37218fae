package functions_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// startMarket runs loupe with the functions and returns it, an Admin
// Firestore client, and two signed-up people: a mentor and a requester.
func startMarket(t *testing.T) (inst *loupetest.Instance, db *firestore.Client, mentor, mentorToken, requester, requesterToken string) {
	t.Helper()
	inst, _ = startWithFunctions(t)
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	db, err := firestore.NewClient(context.Background(), "demo-loupe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if mentor, mentorToken, err = loupetest.SignUp(context.Background(), inst.URL, "mentor@example.com", "secret-pass"); err != nil {
		t.Fatal(err)
	}
	if requester, requesterToken, err = loupetest.SignUp(context.Background(), inst.URL, "requester@example.com", "secret-pass"); err != nil {
		t.Fatal(err)
	}
	return inst, db, mentor, mentorToken, requester, requesterToken
}

// deliverWebhook posts event to the payments webhook through the hosting
// rewrite, with a Stripe-Signature header made by sign (nil: no header),
// and returns the status.
func deliverWebhook(t *testing.T, loupeURL string, event []byte, sign func([]byte) string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, loupeURL+"/api/payments/webhook", bytes.NewReader(event))
	if sign != nil {
		req.Header.Set("Stripe-Signature", sign(event))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signedWith signs a body as Stripe does, with secret at time at.
func signedWith(secret string, at time.Time) func([]byte) string {
	return func(body []byte) string {
		return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
	}
}

// TestFunctions_PaymentsConnectAndWebhook drives Stripe Connect onboarding
// through the app's same-origin route, loupe's Stripe stand-in and the real
// stripe-go client in the functions process, then Stripe's webhook.
func TestFunctions_PaymentsConnectAndWebhook(t *testing.T) {
	ctx := context.Background()
	inst, db, mentor, mentorToken, requester, requesterToken := startMarket(t)
	for uid, isMentor := range map[string]bool{mentor: true, requester: false} {
		if _, err := db.Collection("users").Doc(uid).Set(ctx, map[string]any{"name": uid, "isMentor": isMentor, "stripeConnected": false}); err != nil {
			t.Fatal(err)
		}
	}

	connect := inst.URL + "/api/payments/connect"
	back := `{"returnUrl":"` + inst.URL + `/profile?payouts=done","refreshUrl":"` + inst.URL + `/profile?payouts=retry"}`
	for _, c := range []struct {
		name, token, body string
		want              int
	}{
		{"no token", "", back, http.StatusUnauthorized},
		{"garbage token", "not-a-token", back, http.StatusUnauthorized},
		{"not a mentor", requesterToken, back, http.StatusForbidden},
		{"bad body", mentorToken, `{"returnUrl":"javascript:alert(1)"}`, http.StatusBadRequest},
	} {
		if code, out := loupetest.Post(t, connect, c.token, c.body); code != c.want {
			t.Errorf("connect with %s = %d %v, want %d", c.name, code, out, c.want)
		}
	}

	code, out := loupetest.Post(t, connect, mentorToken, back)
	link, _ := out["url"].(string)
	if code != http.StatusOK || !strings.HasPrefix(link, inst.URL+"/emulator/stripe/connect/") {
		t.Fatalf("connect = %d %v, want an onboarding link on loupe's Stripe stand-in", code, out)
	}
	profile := func() map[string]any {
		s, err := db.Collection("users").Doc(mentor).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Data()
	}
	account, _ := profile()["stripeAccountId"].(string)
	if !strings.HasPrefix(account, "acct_") || profile()["stripeConnected"] != false {
		t.Fatalf("after connect: profile %v, want an account id and not yet connected", profile())
	}
	page, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	html := new(bytes.Buffer)
	_, _ = html.ReadFrom(page.Body)
	page.Body.Close()
	if !strings.Contains(html.String(), "Complete onboarding") || !strings.Contains(html.String(), "mentor@example.com") {
		t.Fatalf("onboarding page: %d %s", page.StatusCode, html)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	done, err := noRedirect.PostForm(link, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	done.Body.Close()
	if done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != inst.URL+"/profile?payouts=done" {
		t.Fatalf("completing onboarding = %d → %q", done.StatusCode, done.Header.Get("Location"))
	}
	if p := profile(); p["stripeConnected"] != true || p["stripeAccountId"] != account {
		t.Fatalf("after onboarding: %v, want stripeConnected true on %s", p, account)
	}
	// A late account.updated from before onboarding finished (charges not yet
	// enabled) does not undo it: the function reads the account back.
	stale := []byte(`{"id":"evt_stale","object":"event","api_version":"` + stripe.APIVersion + `","type":"account.updated",` +
		`"data":{"object":{"id":"` + account + `","object":"account","charges_enabled":false,"metadata":{"uid":"` + mentor + `"}}}}`)
	if code := deliverWebhook(t, inst.URL, stale, signedWith("whsec_loupe_local", time.Now())); code != http.StatusOK || profile()["stripeConnected"] != true {
		t.Errorf("a stale account.updated = %d; profile %v, want still connected", code, profile())
	}
	if used, err := http.Get(link); err != nil || used.StatusCode != http.StatusNotFound {
		t.Errorf("a used onboarding link = %v %v, want 404", used.Status, err)
	}
	if code, out := loupetest.Post(t, connect, mentorToken, back); code != http.StatusOK || profile()["stripeAccountId"] != account {
		t.Errorf("connecting again = %d %v; account %v, want the same account %s", code, out, profile()["stripeAccountId"], account)
	}

	// Stripe's webhook: a payment for a feedback request.
	request := db.Collection("feedbackRequests").Doc("paid-1")
	if _, err := request.Set(ctx, map[string]any{"requesterId": requester, "requesterName": "Rae", "mentorId": mentor,
		"mentorName": "Mo", "title": "My solo", "status": "accepted", "paymentStatus": "pending"}); err != nil {
		t.Fatal(err)
	}
	paidEvent := []byte(`{"id":"evt_paid_1","object":"event","api_version":"` + stripe.APIVersion + `","type":"payment_intent.succeeded",` +
		`"data":{"object":{"id":"pi_1","object":"payment_intent","amount":4500,"currency":"usd","status":"succeeded","metadata":{"requestId":"paid-1"}}}}`)
	good := signedWith("whsec_loupe_local", time.Now())
	deliver := func(event []byte, sign func([]byte) string) int { return deliverWebhook(t, inst.URL, event, sign) }
	payments := func() int {
		all, err := db.Collection("payments").Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	for _, c := range []struct {
		name string
		sign func([]byte) string
	}{
		{"no signature", nil},
		{"another endpoint's secret", signedWith("whsec_forged", time.Now())},
		{"a signature of another body", func([]byte) string { return good([]byte(`{"id":"evt_other"}`)) }},
		{"a replayed old signature", signedWith("whsec_loupe_local", time.Now().Add(-time.Hour))},
	} {
		if code := deliver(paidEvent, c.sign); code != http.StatusBadRequest {
			t.Errorf("webhook with %s = %d, want 400", c.name, code)
		}
	}
	if s, _ := request.Get(ctx); s.Data()["paymentStatus"] != "pending" || payments() != 0 {
		t.Fatalf("a rejected webhook changed data: request %v, %d payments", s.Data(), payments())
	}
	// Stripe redelivers, and a checkout also sends checkout.session.completed
	// for the same payment intent: the payment is recorded once.
	checkout := []byte(`{"id":"evt_checkout_1","object":"event","api_version":"` + stripe.APIVersion + `","type":"checkout.session.completed",` +
		`"data":{"object":{"id":"cs_1","object":"checkout.session","payment_status":"paid","payment_intent":"pi_1","amount_total":4500,"currency":"usd","metadata":{"requestId":"paid-1"}}}}`)
	for _, event := range [][]byte{paidEvent, paidEvent, checkout} {
		if code := deliver(event, good); code != http.StatusOK {
			t.Fatalf("signed webhook = %d, want 200", code)
		}
	}
	if s, _ := request.Get(ctx); s.Data()["paymentStatus"] != "paid" || s.Data()["paymentId"] != "pi_1" || payments() != 1 {
		t.Fatalf("after the paid event: request %v, %d payments, want paid once", s.Data(), payments())
	}
	paid, err := db.Collection("payments").Doc("pi_1").Get(ctx)
	if err != nil || paid.Data()["amount"] != int64(4500) || paid.Data()["currency"] != "USD" || paid.Data()["mentorId"] != mentor {
		t.Fatalf("payment record: %v %v", paid.Data(), err)
	}
	loupetest.Eventually(t, "the mentor's payment_received notification", func() bool {
		n, _ := db.Collection("notifications").Where("userId", "==", mentor).Where("type", "==", "payment_received").Documents(ctx).GetAll()
		return len(n) == 1
	})
}

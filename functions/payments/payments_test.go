package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/functions/internal/loupetest"
	"github.com/loupe-dev/loupe/functions/payments"
	"github.com/stripe/stripe-go/v85"
)

// sameRate prices in USD, as the app does without exchange rates.
type sameRate struct{}

func (sameRate) Rate(context.Context, string, string) (float64, error) { return 1, nil }

// market is a loupe with a mentor who can take payments, a requester, and
// the payments handler over them.
type market struct {
	l         *loupetest.Loupe
	h         *payments.Handler
	requester string
	token     string
	account   string
}

func newMarket(t *testing.T) *market {
	t.Helper()
	ctx := context.Background()
	l := loupetest.Start(t, loupetest.WithStripe())
	client := payments.NewStripeClient("sk_test_loupe_local", l.URL)
	acct, err := client.V1Accounts.Create(ctx, &stripe.AccountCreateParams{Type: stripe.String("express")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Firestore.Collection("users").Doc("maya").Set(ctx, map[string]any{"isMentor": true,
		"stripeConnected": true, "stripeAccountId": acct.ID}); err != nil {
		t.Fatal(err)
	}
	uid, token := l.SignUp(t, "sam@example.com")
	return &market{l: l, requester: uid, token: token, account: acct.ID, h: &payments.Handler{DB: l.Firestore, Auth: l.Auth,
		Stripe: client, Rates: sameRate{}, Videos: payments.Bucket{BucketHandle: l.Storage.Bucket(loupetest.Bucket)}}}
}

// request stores a pending, unpaid request of the requester's with a video
// of the given bytes and content type, and returns its id.
func (m *market) request(t *testing.T, id string, card map[string]any, video []byte, contentType string) string {
	t.Helper()
	ctx := context.Background()
	path := "videos/" + m.requester + "/" + id + ".mp4"
	w := m.l.Storage.Bucket(loupetest.Bucket).Object(path).NewWriter(ctx)
	w.ContentType = contentType
	if _, err := w.Write(video); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.l.Firestore.Collection("feedbackRequests").Doc(id).Set(ctx, map[string]any{"requesterId": m.requester,
		"mentorId": "maya", "mentorName": "Maya Chen", "title": "Solo", "status": "pending", "paymentStatus": "unpaid",
		"currency": "USD", "rateCard": card, "videoPath": path}); err != nil {
		t.Fatal(err)
	}
	return id
}

// post calls an endpoint of the handler as the requester.
func (m *market) post(t *testing.T, fn http.HandlerFunc, body any) (int, map[string]any) {
	t.Helper()
	data, _ := json.Marshal(body)
	r := httptest.NewRequest("POST", "/payments/x", bytes.NewReader(data))
	r.Header.Set("Authorization", "Bearer "+m.token)
	w := httptest.NewRecorder()
	fn(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func (m *market) checkout(t *testing.T, id string) (int, map[string]any) {
	return m.post(t, m.h.Checkout, map[string]string{"requestId": id, "successUrl": "http://app/ok", "cancelUrl": "http://app/no"})
}

// TestCheckout_RefusesWhatCannotBePaid: a blank or free card, a file that
// is not the video it claims to be, or a clip longer than its card covers
// gets 409 with the reason, before any charge; a clip that fits is charged.
func TestCheckout_RefusesWhatCannotBePaid(t *testing.T) {
	m := newMarket(t)
	clip, err := os.ReadFile("../internal/mp4/testdata/faststart.mp4") // 2.5 s
	if err != nil {
		t.Fatal(err)
	}
	card := func(label string, price any) map[string]any { return map[string]any{"duration": label, "price": price} }
	for _, c := range []struct {
		name, id string
		card     map[string]any
		video    []byte
		want     string
	}{
		{"a free card", "free", card("Up to 1 min", 0), clip, "its rate card needs a length and a positive price"},
		{"a card without a label", "blank", card(" ", 20), clip, "its rate card needs a length and a positive price"},
		{"a file named .mp4", "junk", card("Up to 1 min", 20), []byte("not a video at all"), "not a playable MP4 or MOV file"},
		{"a clip too long", "long", card("Up to 1 s", 20), clip, "runs 0:02, longer than its “Up to 1 s” rate card covers (up to 0:01)"},
	} {
		code, out := m.checkout(t, m.request(t, c.id, c.card, c.video, "video/mp4"))
		msg, _ := out["error"].(map[string]any)["message"].(string)
		if code != http.StatusConflict || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %v, want 409 %q", c.name, code, out, c.want)
		}
	}
	code, out := m.checkout(t, m.request(t, "fits", card("Up to 1 min", 20), clip, "video/mp4"))
	if code != http.StatusOK || !strings.Contains(out["url"].(string), "/emulator/stripe/checkout/cs_test_") {
		t.Errorf("a clip that fits: %d %v", code, out)
	}
}

// TestEarnings lists the transfers a mentor's payments made to their
// connected account, and what a refund took back.
func TestEarnings(t *testing.T) {
	ctx := context.Background()
	m := newMarket(t)
	clip, _ := os.ReadFile("../internal/mp4/testdata/faststart.mp4")
	_, out := m.checkout(t, m.request(t, "paid", map[string]any{"duration": "Up to 1 min", "price": 45}, clip, "video/mp4"))
	// The hosted page pays (the webhook has no functions process here to reach; the payment stands).
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(out["url"].(string), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	if _, err := m.l.Firestore.Collection("users").Doc(m.requester).Set(ctx, map[string]any{"stripeAccountId": m.account}); err != nil {
		t.Fatal(err)
	}
	code, got := m.post(t, m.h.Earnings, map[string]any{})
	transfers, _ := got["transfers"].([]any)
	if code != http.StatusOK || len(transfers) != 1 {
		t.Fatalf("earnings = %d %v", code, got)
	}
	tr := transfers[0].(map[string]any)
	if tr["amount"] != 4500.0 || tr["currency"] != "USD" || tr["requestId"] != "paid" || tr["reversed"] != false {
		t.Errorf("transfer = %v", tr)
	}
}

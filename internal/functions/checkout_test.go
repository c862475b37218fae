package functions_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestFunctions_CheckoutPaysAndRefunds pays a feedback request through the
// payments function and loupe's Stripe Checkout stand-in (real stripe-go in
// the functions process, webhooks signed as Stripe signs them), then
// declines it and sees it refunded; the profiles function keeps the public
// projection the directory reads.
func TestFunctions_CheckoutPaysAndRefunds(t *testing.T) {
	ctx := context.Background()
	inst, db, mentor, mentorToken, requester, requesterToken := startMarket(t)
	// The mentor's connected account, which receives the payment (a destination charge).
	var account struct{ ID string }
	form := strings.NewReader("type=express")
	req, _ := http.NewRequest("POST", inst.URL+"/v1/accounts", form)
	req.Header.Set("Authorization", "Bearer sk_test_loupe_local")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := http.DefaultClient.Do(req); err != nil || json.NewDecoder(resp.Body).Decode(&account) != nil {
		t.Fatalf("create the mentor's account: %v", err)
	}
	profile := map[string]any{"name": "Mo Mentor", "email": "mentor@example.com", "fcmToken": "secret-token", "role": "user",
		"isMentor": true, "stripeConnected": true, "stripeAccountId": account.ID, "title": "Guitarist", "bio": "On stage for years.",
		"taxonomySelections": []any{"music"}, "rateCards": []any{map[string]any{"duration": "1-3 mins", "price": 45}}}
	if _, err := db.Collection("users").Doc(mentor).Set(ctx, profile); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("users").Doc(requester).Set(ctx, map[string]any{"name": "Rae", "isMentor": true, "title": ""}); err != nil {
		t.Fatal(err)
	}
	public := func(uid string) map[string]any {
		s, err := db.Collection("mentors").Doc(uid).Get(ctx)
		if err != nil {
			return nil
		}
		return s.Data()
	}
	loupetest.Eventually(t, "the mentor's public profile", func() bool { return public(mentor)["bookable"] == true })
	for _, k := range []string{"email", "fcmToken", "role", "stripeConnected", "stripeAccountId"} {
		if _, ok := public(mentor)[k]; ok {
			t.Errorf("the public profile has %s", k)
		}
	}
	if public(requester) != nil {
		t.Errorf("an incomplete profile is listed: %v", public(requester))
	}

	request := db.Collection("feedbackRequests").Doc("req-1")
	if _, err := request.Set(ctx, map[string]any{"requesterId": requester, "requesterName": "Rae", "mentorId": mentor,
		"mentorName": "Mo Mentor", "title": "My solo", "rateCard": map[string]any{"duration": "1-3 mins", "price": 45},
		"currency": "EUR", "status": "pending", "paymentStatus": "unpaid"}); err != nil {
		t.Fatal(err)
	}
	checkout := inst.URL + "/api/payments/checkout"
	body := `{"requestId":"req-1","successUrl":"` + inst.URL + `/requests/req-1?checkout=done","cancelUrl":"` + inst.URL + `/requests/req-1"}`
	if code, out := loupetest.Post(t, checkout, mentorToken, body); code != http.StatusForbidden {
		t.Errorf("checkout by the mentor = %d %v, want 403", code, out)
	}
	code, out := loupetest.Post(t, checkout, requesterToken, body)
	link, _ := out["url"].(string)
	if code != http.StatusOK || !strings.HasPrefix(link, inst.URL+"/emulator/stripe/checkout/cs_test_") {
		t.Fatalf("checkout = %d %v, want a Checkout Session on loupe's Stripe stand-in", code, out)
	}
	// No rate table in this loupe: the rates are unavailable, so the charge is
	// in USD, as the app then shows USD.
	if page := get(t, link); !strings.Contains(page, "Pay USD 45.00") || !strings.Contains(page, "My solo") {
		t.Errorf("checkout page: %s", page)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	payments := func() []*firestore.DocumentSnapshot {
		all, err := db.Collection("payments").Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	// Paying, then pressing Pay again (which re-sends both events): one payment.
	for range 2 {
		resp, err := noRedirect.PostForm(link, url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != inst.URL+"/requests/req-1?checkout=done" {
			t.Fatalf("paying = %d → %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	s, _ := request.Get(ctx)
	paymentID, _ := s.Data()["paymentId"].(string)
	if s.Data()["paymentStatus"] != "paid" || !strings.HasPrefix(paymentID, "pi_") || len(payments()) != 1 {
		t.Fatalf("after paying: request %v, %d payments", s.Data(), len(payments()))
	}
	paid := payments()[0].Data()
	receipt, _ := paid["receiptUrl"].(string)
	if paid["amount"] != int64(4500) || paid["currency"] != "USD" || !strings.HasPrefix(receipt, inst.URL+"/emulator/stripe/receipts/ch_") {
		t.Fatalf("payment record %v", paid)
	}
	if page := get(t, receipt); !strings.Contains(page, "USD 45.00") || strings.Contains(page, "Refunded") {
		t.Errorf("receipt: %s", page)
	}
	loupetest.Eventually(t, "one payment_received notification", func() bool {
		n, _ := db.Collection("notifications").Where("userId", "==", mentor).Where("type", "==", "payment_received").Documents(ctx).GetAll()
		return len(n) == 1
	})
	if code, _ := loupetest.Post(t, checkout, requesterToken, body); code != http.StatusConflict {
		t.Errorf("checkout of a paid request = %d, want 409", code)
	}

	if _, err := request.Update(ctx, []firestore.Update{{Path: "status", Value: "declined"}}); err != nil {
		t.Fatal(err)
	}
	loupetest.Eventually(t, "the declined request refunded", func() bool {
		s, _ := request.Get(ctx)
		id, _ := s.Data()["refundId"].(string)
		return s.Data()["paymentStatus"] == "refunded" && strings.HasPrefix(id, "re_")
	})
	if page := get(t, receipt); !strings.Contains(page, "Refunded") {
		t.Errorf("receipt after the refund: %s", page)
	}
	if p, _ := db.Collection("payments").Doc(paymentID).Get(ctx); p.Data()["refundId"] == nil {
		t.Errorf("payment after the refund: %v", p.Data())
	}

	// The requester cancels a paid request before the mentor answers: refunded too.
	if _, err := db.Collection("feedbackRequests").Doc("req-2").Set(ctx, map[string]any{"requesterId": requester,
		"requesterName": "Rae", "mentorId": mentor, "mentorName": "Mo Mentor", "title": "Second take",
		"rateCard": map[string]any{"duration": "1-3 mins", "price": 45}, "currency": "USD", "status": "pending",
		"paymentStatus": "unpaid"}); err != nil {
		t.Fatal(err)
	}
	_, out = loupetest.Post(t, checkout, requesterToken, strings.ReplaceAll(body, "req-1", "req-2"))
	if resp, err := noRedirect.PostForm(out["url"].(string), url.Values{}); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("paying the second request: %v %v", resp, err)
	}
	second := db.Collection("feedbackRequests").Doc("req-2")
	loupetest.Eventually(t, "the second request paid", func() bool {
		s, _ := second.Get(ctx)
		return s.Data()["paymentStatus"] == "paid"
	})
	if _, err := second.Update(ctx, []firestore.Update{{Path: "status", Value: "cancelled"}}); err != nil {
		t.Fatal(err)
	}
	loupetest.Eventually(t, "the cancelled request refunded", func() bool {
		s, _ := second.Get(ctx)
		return s.Data()["paymentStatus"] == "refunded"
	})

	// The mentor disconnects payouts: still listed, no longer bookable.
	if _, err := db.Collection("users").Doc(mentor).Update(ctx, []firestore.Update{{Path: "stripeConnected", Value: false}}); err != nil {
		t.Fatal(err)
	}
	loupetest.Eventually(t, "the mentor not bookable", func() bool { return public(mentor)["bookable"] == false })
	if _, err := db.Collection("users").Doc(mentor).Update(ctx, []firestore.Update{{Path: "isMentor", Value: false}}); err != nil {
		t.Fatal(err)
	}
	loupetest.Eventually(t, "the mentor unlisted", func() bool { return public(mentor) == nil })
}

func get(t *testing.T, target string) string {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

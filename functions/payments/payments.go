// Package payments is Loupe's Stripe integration: mentors get an Express
// account and an onboarding link (POST /payments/connect, called with the
// mentor's Firebase ID token); requesters pay a request through Stripe
// Checkout (POST /payments/checkout); Stripe's signed webhook (POST
// /payments/webhook) marks the account connected once it can take charges
// and records paid feedback requests, with their receipt; a paid request
// declined or cancelled is refunded (HandleRequest).
//
// A paid request gets paymentStatus 'paid'; the request fan-out function
// turns that change into the mentor's payment_received notification, so
// this package writes no notifications itself. Every webhook event is
// applied at most once: a payment is stored under its payment intent's id
// (an already stored payment is left alone), and account.updated sets the
// account's current state as Stripe reports it.
package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"firebase.google.com/go/v4/auth"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxWebhookBody bounds what the webhook reads; Stripe events are far smaller.
const maxWebhookBody = 1 << 20

// TokenVerifier checks a Firebase ID token (the Admin SDK's auth client).
type TokenVerifier interface {
	VerifyIDToken(ctx context.Context, idToken string) (*auth.Token, error)
}

// Handler serves the payment endpoints.
type Handler struct {
	DB            *firestore.Client
	Auth          TokenVerifier
	Stripe        *stripe.Client
	WebhookSecret string
	Rates         Rater
	// Videos reads the requests' videos, to check their length before
	// payment; nil skips the check.
	Videos Videos
}

// NewStripeClient builds a Stripe client for key. apiBase "" means Stripe's
// API; loupe passes its local stand-in's URL.
func NewStripeClient(key, apiBase string) *stripe.Client {
	if apiBase == "" {
		return stripe.NewClient(key)
	}
	cfg := &stripe.BackendConfig{URL: stripe.String(apiBase), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelError}}
	return stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
}

// connectRequest is the body of POST /payments/connect: where Stripe sends
// the mentor back when onboarding ends (returnUrl) or its link expired
// (refreshUrl). Both must be absolute http(s) URLs.
type connectRequest struct {
	ReturnURL  string `json:"returnUrl"`
	RefreshURL string `json:"refreshUrl"`
}

// Connect answers {"url"} with a Stripe onboarding link for the signed-in
// mentor, creating their Express account on first use (its id is kept as
// users/{uid}.stripeAccountId). 401 without a valid ID token, 400 for a bad
// body, 403 for a profile that is not a mentor, 502 when Stripe fails.
func (h *Handler) Connect(w http.ResponseWriter, r *http.Request) {
	token, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	var body connectRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil ||
		!absoluteURL(body.ReturnURL) || !absoluteURL(body.RefreshURL) {
		writeError(w, http.StatusBadRequest, "the body must be {returnUrl, refreshUrl} with absolute http(s) URLs")
		return
	}
	ctx := r.Context()
	profile := h.DB.Collection("users").Doc(token.UID)
	snap, err := profile.Get(ctx)
	if status.Code(err) == codes.NotFound || (err == nil && snap.Data()["isMentor"] != true) {
		writeError(w, http.StatusForbidden, "only mentors can connect payouts")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read profile: "+err.Error())
		return
	}
	accountID, _ := snap.Data()["stripeAccountId"].(string)
	accountID, err = h.ensureAccount(ctx, accountID, token)
	if err != nil {
		writeError(w, http.StatusBadGateway, "stripe: "+err.Error())
		return
	}
	if _, err := profile.Update(ctx, []firestore.Update{{Path: "stripeAccountId", Value: accountID}}); err != nil {
		writeError(w, http.StatusInternalServerError, "save account: "+err.Error())
		return
	}
	link, err := h.Stripe.V1AccountLinks.Create(ctx, &stripe.AccountLinkCreateParams{
		Account: stripe.String(accountID), Type: stripe.String("account_onboarding"),
		ReturnURL: stripe.String(body.ReturnURL), RefreshURL: stripe.String(body.RefreshURL),
	})
	if err != nil {
		writeError(w, http.StatusBadGateway, "stripe: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"url": link.URL})
}

// ensureAccount returns accountID when Stripe still knows it, else the id
// of a new Express account for the token's user.
func (h *Handler) ensureAccount(ctx context.Context, accountID string, token *auth.Token) (string, error) {
	if accountID != "" {
		_, err := h.Stripe.V1Accounts.GetByID(ctx, accountID, nil)
		var se *stripe.Error
		if err == nil {
			return accountID, nil
		}
		if !errors.As(err, &se) || se.Code != stripe.ErrorCodeResourceMissing {
			return "", err
		}
	}
	params := &stripe.AccountCreateParams{Type: stripe.String(string(stripe.AccountTypeExpress))}
	if email, _ := token.Claims["email"].(string); email != "" {
		params.Email = stripe.String(email)
	}
	params.AddMetadata("uid", token.UID)
	acct, err := h.Stripe.V1Accounts.Create(ctx, params)
	if err != nil {
		return "", err
	}
	return acct.ID, nil
}

// signedIn answers 405 for anything but POST and 401 without a valid
// Firebase ID token; otherwise it returns the caller's token.
func (h *Handler) signedIn(w http.ResponseWriter, r *http.Request) (*auth.Token, bool) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return nil, false
	}
	token, err := h.verify(r)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "sign in again: "+err.Error())
		return nil, false
	}
	return token, true
}

func (h *Handler) verify(r *http.Request) (*auth.Token, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return nil, errors.New("missing Authorization: Bearer <Firebase ID token>")
	}
	return h.Auth.VerifyIDToken(r.Context(), raw)
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Webhook verifies the Stripe-Signature header (400 and nothing changed when
// it fails) and applies account.updated, checkout.session.completed and
// payment_intent.succeeded; other event types are acknowledged and ignored.
func (h *Handler) Webhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil || len(body) > maxWebhookBody {
		writeError(w, http.StatusBadRequest, "unreadable or oversized body")
		return
	}
	ev, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), h.WebhookSecret)
	if err != nil {
		writeError(w, http.StatusBadRequest, "signature verification failed: "+err.Error())
		return
	}
	if err := h.apply(r.Context(), ev); err != nil {
		log.Printf("payments: event %s (%s): %v", ev.ID, ev.Type, err)
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"received":true}`))
}

func (h *Handler) apply(ctx context.Context, ev stripe.Event) error {
	switch ev.Type {
	case stripe.EventTypeAccountUpdated:
		var a stripe.Account
		if err := json.Unmarshal(ev.Data.Raw, &a); err != nil {
			return fmt.Errorf("decode account: %w", err)
		}
		return h.accountUpdated(ctx, a.ID)
	case stripe.EventTypeCheckoutSessionCompleted:
		var s stripe.CheckoutSession
		if err := json.Unmarshal(ev.Data.Raw, &s); err != nil {
			return fmt.Errorf("decode checkout session: %w", err)
		}
		if s.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid {
			return nil
		}
		id := s.ID
		if s.PaymentIntent != nil && s.PaymentIntent.ID != "" {
			id = s.PaymentIntent.ID // the same payment as its payment_intent.succeeded
		}
		return h.paid(ctx, payment{ID: id, EventID: ev.ID, RequestID: s.Metadata["requestId"], Amount: s.AmountTotal, Currency: string(s.Currency)})
	case stripe.EventTypePaymentIntentSucceeded:
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
			return fmt.Errorf("decode payment intent: %w", err)
		}
		return h.paid(ctx, payment{ID: pi.ID, EventID: ev.ID, RequestID: pi.Metadata["requestId"], Amount: pi.Amount, Currency: string(pi.Currency)})
	}
	return nil
}

// accountUpdated keeps users/{uid}.stripeConnected equal to whether the
// account can take charges. Stripe does not deliver events in order, so the
// account is read back from Stripe: a late or repeated event cannot undo a
// newer state. An account Stripe no longer knows, or one without a uid in
// its metadata, changes nothing.
func (h *Handler) accountUpdated(ctx context.Context, id string) error {
	a, err := h.Stripe.V1Accounts.GetByID(ctx, id, nil)
	var se *stripe.Error
	if errors.As(err, &se) && se.Code == stripe.ErrorCodeResourceMissing {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read account %s: %w", id, err)
	}
	uid := a.Metadata["uid"]
	if uid == "" {
		return nil
	}
	_, err = h.DB.Collection("users").Doc(uid).Update(ctx, []firestore.Update{
		{Path: "stripeConnected", Value: a.ChargesEnabled}, {Path: "stripeAccountId", Value: a.ID},
		{Path: "updatedAt", Value: firestore.ServerTimestamp},
	})
	if status.Code(err) == codes.NotFound {
		return nil // the profile is gone; nothing to mark
	}
	return err
}

// payment is a paid Stripe object that names a feedback request. ID is the
// payment intent's id when there is one, so Stripe's two events for one
// payment (checkout.session.completed and payment_intent.succeeded) and any
// redelivery of either record it once.
type payment struct {
	ID, EventID, RequestID, Currency string
	Amount                           int64
}

// paid records p as payments/{p.ID} and marks its request paid, once;
// when the mentor promises a turnaround (users/{uid}.turnaroundDays), the
// request is due that many days after payment (dueAt).
func (h *Handler) paid(ctx context.Context, p payment) error {
	if p.RequestID == "" {
		return nil
	}
	request := h.DB.Collection("feedbackRequests").Doc(p.RequestID)
	record := h.DB.Collection("payments").Doc(p.ID)
	receipt := h.receiptURL(ctx, p.ID)
	return h.DB.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		if _, err := tx.Get(record); err == nil {
			return nil
		} else if status.Code(err) != codes.NotFound {
			return err
		}
		snap, err := tx.Get(request)
		if status.Code(err) == codes.NotFound {
			return nil // nothing to mark; Stripe should not retry forever
		}
		if err != nil {
			return err
		}
		req := snap.Data()
		mentorID, _ := req["mentorId"].(string)
		mentor, err := tx.Get(h.DB.Collection("users").Doc(mentorID))
		if err != nil && status.Code(err) != codes.NotFound {
			return err
		}
		if err := tx.Create(record, map[string]any{
			"requestId": p.RequestID, "mentorId": req["mentorId"], "requesterId": req["requesterId"],
			"amount": p.Amount, "currency": strings.ToUpper(p.Currency), "stripeEventId": p.EventID,
			"receiptUrl": receipt, "createdAt": firestore.ServerTimestamp,
		}); err != nil {
			return err
		}
		updates := []firestore.Update{
			{Path: "paymentStatus", Value: "paid"}, {Path: "paymentId", Value: p.ID},
			{Path: "updatedAt", Value: firestore.ServerTimestamp},
		}
		if days := turnaround(mentor); days > 0 {
			updates = append(updates, firestore.Update{Path: "turnaroundDays", Value: days},
				firestore.Update{Path: "dueAt", Value: time.Now().Add(time.Duration(days) * 24 * time.Hour)})
		}
		return tx.Update(request, updates)
	})
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// turnaround is the days a mentor's profile promises to answer within, 0
// when it promises nothing.
func turnaround(mentor *firestore.DocumentSnapshot) int64 {
	switch d := mentor.Data()["turnaroundDays"].(type) {
	case int64:
		return max(0, d)
	case float64:
		return max(0, int64(d))
	}
	return 0
}

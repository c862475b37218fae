package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/storage"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/internal/event"
	"github.com/loupe-dev/loupe/functions/internal/money"
	"github.com/loupe-dev/loupe/functions/listing"
	"github.com/stripe/stripe-go/v85"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Rater converts prices: what one unit of base buys of target (the rates
// function's handler, so checkout charges what the app shows).
type Rater interface {
	Rate(ctx context.Context, base, target string) (float64, error)
}

// checkoutRequest is the body of POST /payments/checkout.
type checkoutRequest struct {
	RequestID  string `json:"requestId"`
	SuccessURL string `json:"successUrl"`
	CancelURL  string `json:"cancelUrl"`
}

// Price converts a USD price into currency at rate, in Stripe's smallest
// unit of that currency (cents, or whole yen for zero-decimal currencies).
func Price(usd float64, currency string, rate float64) int64 {
	amount := usd * rate
	if !money.ZeroDecimal[strings.ToUpper(currency)] {
		amount *= 100
	}
	return int64(math.Round(amount))
}

// Checkout answers {"url"} with a Stripe Checkout Session that charges the
// signed-in requester the request's rate card in the request's currency
// (converted with the rates function's rates; in USD when no rate is known,
// as the app then shows USD), paid to the mentor's connected account (a
// destination charge). The session and its payment intent carry
// metadata.requestId, so the webhook marks the request paid. 401 without a
// valid ID token, 400 for a bad body, 403 when the caller is not the
// requester, 404 for an unknown request, 409 when it is not open and
// unpaid, its mentor cannot take payments, its rate card has no length or
// price, or its video cannot play or runs longer than the card covers, 502
// when Stripe fails.
func (h *Handler) Checkout(w http.ResponseWriter, r *http.Request) {
	token, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	var body checkoutRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&body); err != nil || body.RequestID == "" ||
		strings.Contains(body.RequestID, "/") || !absoluteURL(body.SuccessURL) || !absoluteURL(body.CancelURL) {
		writeError(w, http.StatusBadRequest, "the body must be {requestId, successUrl, cancelUrl} with absolute http(s) URLs")
		return
	}
	ctx := r.Context()
	snap, err := h.DB.Collection("feedbackRequests").Doc(body.RequestID).Get(ctx)
	if status.Code(err) == codes.NotFound {
		writeError(w, http.StatusNotFound, "no such request")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read request: "+err.Error())
		return
	}
	req := snap.Data()
	mentorName, _ := req["mentorName"].(string)
	switch {
	case req["requesterId"] != token.UID:
		writeError(w, http.StatusForbidden, "only the requester pays for a request")
		return
	case req["paymentStatus"] != "unpaid":
		writeError(w, http.StatusConflict, "this request is already paid")
		return
	case req["status"] != "pending":
		writeError(w, http.StatusConflict, "this request is no longer open")
		return
	}
	mentorID, _ := req["mentorId"].(string)
	mentor, err := h.DB.Collection("users").Doc(mentorID).Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		writeError(w, http.StatusInternalServerError, "read mentor: "+err.Error())
		return
	}
	if err != nil || mentor.Data()["stripeConnected"] != true {
		writeError(w, http.StatusConflict, mentorName+" cannot take payments yet")
		return
	}
	card, _ := req["rateCard"].(map[string]any)
	usd := listing.CardPrice(card)
	duration, _ := card["duration"].(string)
	if !listing.ValidCard(card) {
		writeError(w, http.StatusConflict, "this request has no price to pay: its rate card needs a length and a positive price")
		return
	}
	if problem, err := h.checkClip(ctx, req, card); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	} else if problem != "" {
		writeError(w, http.StatusConflict, problem)
		return
	}
	title, _ := req["title"].(string)
	currency, _ := req["currency"].(string)
	currency = strings.ToUpper(currency)
	rate, err := h.Rates.Rate(ctx, "USD", currency)
	if err != nil || currency == "" {
		currency, rate = "USD", 1
	}
	amount := Price(usd, currency, rate)
	if usd <= 0 || amount < 1 {
		writeError(w, http.StatusConflict, "this request has no price to pay")
		return
	}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		SuccessURL:        stripe.String(body.SuccessURL),
		CancelURL:         stripe.String(body.CancelURL),
		ClientReferenceID: stripe.String(body.RequestID),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:   stripe.String(strings.ToLower(currency)),
				UnitAmount: stripe.Int64(amount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{
					Name: stripe.String(fmt.Sprintf("Feedback from %s: %s (%s)", mentorName, title, duration)),
				},
			},
		}},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{
			Description: stripe.String(fmt.Sprintf("Feedback from %s (%s)", mentorName, duration)),
		},
	}
	// A destination charge: the mentor's connected account receives the payment (their earnings).
	if account, _ := mentor.Data()["stripeAccountId"].(string); account != "" {
		params.PaymentIntentData.TransferData = &stripe.CheckoutSessionCreatePaymentIntentDataTransferDataParams{
			Destination: stripe.String(account)}
	}
	params.AddMetadata("requestId", body.RequestID)
	params.PaymentIntentData.AddMetadata("requestId", body.RequestID)
	if email, _ := token.Claims["email"].(string); email != "" {
		params.CustomerEmail = stripe.String(email)
	}
	s, err := h.Stripe.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		writeError(w, http.StatusBadGateway, "stripe: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"url": s.URL})
}

// receiptURL is the receipt of a payment intent's charge, "" when Stripe
// cannot say (the payment is recorded without it).
func (h *Handler) receiptURL(ctx context.Context, paymentIntent string) string {
	if !strings.HasPrefix(paymentIntent, "pi_") {
		return ""
	}
	params := &stripe.PaymentIntentRetrieveParams{}
	params.AddExpand("latest_charge")
	pi, err := h.Stripe.V1PaymentIntents.Retrieve(ctx, paymentIntent, params)
	if err != nil || pi.LatestCharge == nil {
		return ""
	}
	return pi.LatestCharge.ReceiptURL
}

// HandleRequest is the CloudEvent function for feedbackRequests/{r}
// written: a paid request that is declined or cancelled is refunded in
// full (taking back the mentor's transfer), once (the refund's idempotency key is the request and payment, and
// the request is read afresh), and becomes paymentStatus 'refunded'.
func (h *Handler) HandleRequest(ctx context.Context, e cloudevent.Event) error {
	c, err := event.Decode(e)
	if err != nil {
		return err
	}
	if c.New == nil {
		return nil
	}
	if s := c.New.String("status"); s != "declined" && s != "cancelled" {
		return nil
	}
	id := c.New.Path[strings.LastIndex(c.New.Path, "/")+1:]
	ref := h.DB.Collection("feedbackRequests").Doc(id)
	snap, err := ref.Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		return err
	}
	paymentID, _ := snap.Data()["paymentId"].(string)
	if snap.Data()["paymentStatus"] != "paid" || paymentID == "" {
		return nil
	}
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(paymentID), ReverseTransfer: stripe.Bool(true),
		Reason: stripe.String(string(stripe.RefundReasonRequestedByCustomer))}
	params.AddMetadata("requestId", id)
	params.SetIdempotencyKey("refund-" + id + "-" + paymentID)
	refundID := ""
	re, err := h.Stripe.V1Refunds.Create(ctx, params)
	var se *stripe.Error
	switch {
	case err == nil:
		refundID = re.ID
	case errors.As(err, &se) && se.Code == stripe.ErrorCodeChargeAlreadyRefunded:
		// refunded before (by hand in the dashboard, say): record it as such
	default:
		return fmt.Errorf("refund %s: %w", paymentID, err)
	}
	if _, err := h.DB.Collection("payments").Doc(paymentID).Set(ctx, map[string]any{
		"refundId": refundID, "refundedAt": firestore.ServerTimestamp}, firestore.MergeAll); err != nil {
		return err
	}
	_, err = ref.Update(ctx, []firestore.Update{{Path: "paymentStatus", Value: "refunded"},
		{Path: "refundId", Value: refundID}, {Path: "updatedAt", Value: firestore.ServerTimestamp}})
	return err
}

// checkClip says why a request's video cannot be paid for, "" when it can:
// an MP4 or MOV that does not play, or a clip longer than its rate card
// covers (read from the video, or from the length recorded at upload).
// Without Videos, or for a video whose length nothing says, it passes.
func (h *Handler) checkClip(ctx context.Context, req, card map[string]any) (string, error) {
	name, _ := req["videoPath"].(string)
	if h.Videos == nil || name == "" {
		return "", nil
	}
	seconds, known, err := clipLength(ctx, h.Videos, name)
	switch {
	case errors.Is(err, errUnplayable):
		return "this request's video cannot be played: it is not a playable MP4 or MOV file", nil
	case errors.Is(err, storage.ErrObjectNotExist):
		return "this request's video is missing: send the request again with its video", nil
	case err != nil:
		return "", err
	case known && !listing.Fits(card, seconds):
		_, limit, _ := listing.CardLength(card["duration"].(string))
		return fmt.Sprintf("this request's video runs %s, longer than its “%s” rate card covers (up to %s)",
			clock(seconds), card["duration"], clock(limit)), nil
	}
	return "", nil
}

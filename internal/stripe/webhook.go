package stripe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"
)

// Local credentials the functions process gets when the operator gave none.
const (
	SecretKey     = "sk_test_loupe_local"
	WebhookSecret = "whsec_loupe_local"
	// WebhookPath is where the payments function takes Stripe's events.
	WebhookPath = "/payments/webhook"
)

// webhookTimeout bounds one webhook's delivery.
const webhookTimeout = 10 * time.Second

// FunctionEnv is the environment that points the payments function at this
// stand-in, given loupe's base URL.
func FunctionEnv(loupeURL string) []string {
	return []string{"STRIPE_SECRET_KEY=" + SecretKey, "STRIPE_WEBHOOK_SECRET=" + WebhookSecret,
		"STRIPE_API_BASE=" + strings.TrimSuffix(loupeURL, "/")}
}

// send posts a signed event of type typ about object to the functions.
func (s *Service) send(ctx context.Context, typ, apiVersion string, object any) error {
	data, err := json.Marshal(object)
	if err != nil {
		return err
	}
	now := time.Now().Unix()
	body, err := json.Marshal(map[string]any{"id": "evt_" + randomID(24), "object": "event", "api_version": apiVersion,
		"created": now, "type": typ, "livemode": false, "pending_webhooks": 1,
		"data": map[string]json.RawMessage{"object": data}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, WebhookPath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: WebhookSecret, Timestamp: time.Unix(now, 0)})
	req.Header.Set("Stripe-Signature", signed.Header)
	answer := httptest.NewRecorder()
	if !s.functions(answer, req) {
		return fmt.Errorf("the functions are not running yet; try again in a moment")
	}
	if answer.Code/100 != 2 {
		return fmt.Errorf("webhook answered %d %s", answer.Code, http.StatusText(answer.Code))
	}
	return nil
}

package payments

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/stripe/stripe-go/v85"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxTransfers is how many of a mentor's transfers Earnings lists.
const maxTransfers = 100

// payout is one transfer to a mentor's connected account as Earnings
// answers it: amounts in the currency's smallest unit.
type payout struct {
	ID             string `json:"id"`
	Amount         int64  `json:"amount"`
	AmountReversed int64  `json:"amountReversed"`
	Currency       string `json:"currency"`
	Reversed       bool   `json:"reversed"`
	Created        int64  `json:"created"`
	RequestID      string `json:"requestId"`
	Description    string `json:"description"`
}

// Earnings answers {"transfers": [...]} for the signed-in mentor: the
// transfers Stripe made to their connected account for the payments they
// received (newest first, at most 100), with what refunds took back; none
// before they connected payouts. 401 without a valid ID token, 502 when
// Stripe fails.
func (h *Handler) Earnings(w http.ResponseWriter, r *http.Request) {
	token, ok := h.signedIn(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	snap, err := h.DB.Collection("users").Doc(token.UID).Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		writeError(w, http.StatusInternalServerError, "read profile: "+err.Error())
		return
	}
	out := []payout{}
	if account, _ := snap.Data()["stripeAccountId"].(string); account != "" {
		params := &stripe.TransferListParams{Destination: stripe.String(account)}
		params.Limit = stripe.Int64(maxTransfers)
		for tr, err := range h.Stripe.V1Transfers.List(ctx, params).All(ctx) {
			if err != nil {
				writeError(w, http.StatusBadGateway, "stripe: "+err.Error())
				return
			}
			out = append(out, payout{ID: tr.ID, Amount: tr.Amount, AmountReversed: tr.AmountReversed,
				Currency: strings.ToUpper(string(tr.Currency)), Reversed: tr.Reversed, Created: tr.Created,
				RequestID: tr.Metadata["requestId"], Description: tr.Description})
			if len(out) == maxTransfers {
				break
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"transfers": out})
}

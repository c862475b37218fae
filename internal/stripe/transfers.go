package stripe

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
)

// transfer moves a destination charge's money to a connected account, as
// Stripe creates one when a Checkout Session's payment intent names
// transfer_data[destination]. A refund with reverse_transfer takes it back.
type transfer struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Amount            int64             `json:"amount"`
	AmountReversed    int64             `json:"amount_reversed"`
	Currency          string            `json:"currency"`
	Destination       string            `json:"destination"`
	SourceTransaction string            `json:"source_transaction"`
	Reversed          bool              `json:"reversed"`
	Description       string            `json:"description"`
	Metadata          map[string]string `json:"metadata"`
	Created           int64             `json:"created"`
	Livemode          bool              `json:"livemode"`
}

func putTransfer(tr *transfer) entry {
	copied := *tr
	return entry{Transfer: &copied}
}

// destinationTransfer is the transfer a paid session's charge makes to its
// connected account (the amount less the platform's fee), nil without one.
func destinationTransfer(c *session, ch *charge, now int64) *transfer {
	if c.local.TransferTo == "" {
		return nil
	}
	return &transfer{ID: "tr_" + randomID(24), Object: "transfer", Amount: ch.Amount - c.local.FeeAmount, Currency: ch.Currency,
		Destination: c.local.TransferTo, SourceTransaction: ch.ID, Description: c.local.Product, Metadata: c.local.IntentMeta, Created: now}
}

// reverse is tr with amount more reversed, at most what it moved.
func reverse(tr *transfer, amount int64) *transfer {
	out := *tr
	out.AmountReversed = min(out.Amount, out.AmountReversed+amount)
	out.Reversed = out.AmountReversed == out.Amount
	return &out
}

func (s *Service) registerTransfers(r *server.Mux) {
	r.HandleFunc("GET /v1/transfers", s.authorized(s.listTransfers))
	r.HandleFunc("GET /v1/transfers/{id}", s.authorized(s.getTransfer))
}

// listTransfers serves GET /v1/transfers: newest first, filtered by
// destination when given, at most limit (default 10, at most 100), as a
// Stripe list; starting_after pages on.
func (s *Service) listTransfers(w http.ResponseWriter, r *http.Request) {
	limit := 10
	if l := r.Form.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "limit", "Invalid integer: limit must be between 1 and 100")
			return
		}
		limit = n
	}
	dest, after := r.Form.Get("destination"), r.Form.Get("starting_after")
	s.mu.Lock()
	all := slices.SortedFunc(maps.Values(s.transfers), func(a, b *transfer) int {
		return cmp.Or(cmp.Compare(b.Created, a.Created), cmp.Compare(b.ID, a.ID))
	})
	var page []transfer
	more, skipping := false, after != ""
	for _, tr := range all {
		switch {
		case dest != "" && tr.Destination != dest:
		case skipping:
			skipping = tr.ID != after
		case len(page) == limit:
			more = true
		default:
			page = append(page, *tr)
		}
	}
	seq := s.appendedLocked()
	s.mu.Unlock()
	if err := s.wait(seq); err != nil {
		writeStorageError(w, err)
		return
	}
	if page == nil {
		page = []transfer{}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"object": "list", "url": "/v1/transfers", "has_more": more, "data": page})
}

func (s *Service) getTransfer(w http.ResponseWriter, r *http.Request) {
	copied, ok, err := find(s, s.transfers, r.PathValue("id"))
	switch {
	case err != nil:
		writeStorageError(w, err)
	case !ok:
		writeError(w, http.StatusNotFound, "resource_missing", "id", fmt.Sprintf("No such transfer: '%s'", r.PathValue("id")))
	default:
		httpjson.Write(w, http.StatusOK, &copied)
	}
}

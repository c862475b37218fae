package stripe

import (
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
)

// session is a Checkout Session (mode payment, one line item) as Stripe
// returns it; PaymentIntent is the intent's id once paid.
type session struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Mode              string            `json:"mode"`
	Status            string            `json:"status"`
	PaymentStatus     string            `json:"payment_status"`
	AmountSubtotal    int64             `json:"amount_subtotal"`
	AmountTotal       int64             `json:"amount_total"`
	Currency          string            `json:"currency"`
	ClientReferenceID string            `json:"client_reference_id,omitempty"`
	CustomerEmail     string            `json:"customer_email,omitempty"`
	Metadata          map[string]string `json:"metadata"`
	PaymentIntent     *string           `json:"payment_intent"`
	SuccessURL        string            `json:"success_url"`
	CancelURL         string            `json:"cancel_url"`
	URL               *string           `json:"url"`
	Created           int64             `json:"created"`
	ExpiresAt         int64             `json:"expires_at"`
	Livemode          bool              `json:"livemode"`

	local sessionLocal
}

// sessionLocal is what the stand-in keeps of a session and the API does
// not show.
type sessionLocal struct {
	Product     string            `json:"product"`
	IntentMeta  map[string]string `json:"intent_metadata"`
	APIVersion  string            `json:"api_version"`
	HostedURL   string            `json:"hosted_url"`
	Description string            `json:"description"`
	// TransferTo is the connected account a destination charge pays
	// (payment_intent_data[transfer_data][destination]), FeeAmount what the
	// platform keeps of it (payment_intent_data[application_fee_amount]).
	TransferTo string `json:"transfer_destination,omitempty"`
	FeeAmount  int64  `json:"application_fee_amount,omitempty"`
}

// paymentIntent is a succeeded payment intent; LatestCharge is its
// charge's id.
type paymentIntent struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	Amount       int64             `json:"amount"`
	Received     int64             `json:"amount_received"`
	Currency     string            `json:"currency"`
	Status       string            `json:"status"`
	Metadata     map[string]string `json:"metadata"`
	LatestCharge string            `json:"latest_charge"`
	Created      int64             `json:"created"`
	Livemode     bool              `json:"livemode"`
}

// expandedIntent is a payment intent with its charge expanded.
type expandedIntent struct {
	paymentIntent
	LatestCharge *charge `json:"latest_charge"`
}

// charge is the card charge behind a payment intent.
type charge struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Amount         int64             `json:"amount"`
	AmountRefunded int64             `json:"amount_refunded"`
	Currency       string            `json:"currency"`
	Paid           bool              `json:"paid"`
	Refunded       bool              `json:"refunded"`
	Status         string            `json:"status"`
	PaymentIntent  string            `json:"payment_intent"`
	ReceiptURL     string            `json:"receipt_url"`
	Transfer       string            `json:"transfer,omitempty"`
	Description    string            `json:"description"`
	Metadata       map[string]string `json:"metadata"`
	Created        int64             `json:"created"`
	Livemode       bool              `json:"livemode"`
}

// refund is a full refund of a charge.
type refund struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Currency      string            `json:"currency"`
	Charge        string            `json:"charge"`
	PaymentIntent string            `json:"payment_intent"`
	Status        string            `json:"status"`
	Reason        *string           `json:"reason"`
	Metadata      map[string]string `json:"metadata"`
	Created       int64             `json:"created"`
}

// zeroDecimal lists the currencies Stripe counts in whole units.
var zeroDecimal = map[string]bool{"bif": true, "clp": true, "djf": true, "gnf": true, "jpy": true, "kmf": true,
	"krw": true, "mga": true, "pyg": true, "rwf": true, "ugx": true, "vnd": true, "vuv": true, "xaf": true,
	"xof": true, "xpf": true}

func (s *Service) registerCheckout(r *server.Mux) {
	r.HandleFunc("POST /v1/checkout/sessions", s.authorized(s.createSession))
	r.HandleFunc("GET /v1/checkout/sessions/{id}", s.authorized(s.getSession))
	r.HandleFunc("GET /v1/payment_intents/{id}", s.authorized(s.getIntent))
	r.HandleFunc("POST /v1/refunds", s.authorized(s.createRefund))
	r.HandleFunc("GET /emulator/stripe/checkout/{id}", s.checkoutPage)
	r.HandleFunc("POST /emulator/stripe/checkout/{id}", s.pay)
	r.HandleFunc("GET /emulator/stripe/receipts/{id}", s.receiptPage)
}

// createSession takes the parameters of a one-item payment session with
// inline price_data, as the payments function sends them.
func (s *Service) createSession(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	if f.Get("mode") != "payment" {
		writeError(w, http.StatusBadRequest, "parameter_invalid_string", "mode", "Invalid mode: this stand-in supports mode=payment")
		return
	}
	for _, p := range []string{"success_url", "line_items[0][price_data][currency]", "line_items[0][price_data][unit_amount]",
		"line_items[0][price_data][product_data][name]"} {
		if f.Get(p) == "" {
			writeError(w, http.StatusBadRequest, "parameter_missing", p, "Missing required param: "+p+".")
			return
		}
	}
	unit, err := strconv.ParseInt(f.Get("line_items[0][price_data][unit_amount]"), 10, 64)
	if err != nil || unit < 1 {
		writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "line_items[0][price_data][unit_amount]",
			"Invalid integer: unit_amount must be a positive integer in the currency's smallest unit")
		return
	}
	quantity := int64(1)
	if q := f.Get("line_items[0][quantity]"); q != "" {
		if quantity, err = strconv.ParseInt(q, 10, 64); err != nil || quantity < 1 {
			writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "line_items[0][quantity]", "Invalid integer: quantity")
			return
		}
	}
	currency := strings.ToLower(f.Get("line_items[0][price_data][currency]"))
	if len(currency) != 3 {
		writeError(w, http.StatusBadRequest, "parameter_invalid_string", "line_items[0][price_data][currency]", "Invalid currency: "+currency)
		return
	}
	var fee int64
	if a := f.Get("payment_intent_data[application_fee_amount]"); a != "" {
		if fee, err = strconv.ParseInt(a, 10, 64); err != nil || fee < 0 || fee > unit*quantity {
			writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "payment_intent_data[application_fee_amount]",
				"Invalid integer: the application fee must be between 0 and the amount")
			return
		}
	}
	dest := f.Get("payment_intent_data[transfer_data][destination]")
	now := time.Now()
	id := "cs_test_" + randomID(48)
	hosted := "http://" + r.Host + "/emulator/stripe/checkout/" + id
	c := &session{ID: id, Object: "checkout.session", Mode: "payment", Status: "open", PaymentStatus: "unpaid",
		AmountSubtotal: unit * quantity, AmountTotal: unit * quantity, Currency: currency,
		ClientReferenceID: f.Get("client_reference_id"), CustomerEmail: f.Get("customer_email"),
		Metadata: formMap(f, "metadata"), SuccessURL: f.Get("success_url"), CancelURL: f.Get("cancel_url"),
		URL: &hosted, Created: now.Unix(), ExpiresAt: now.Add(24 * time.Hour).Unix(),
		local: sessionLocal{Product: f.Get("line_items[0][price_data][product_data][name]"), IntentMeta: formMap(f, "payment_intent_data[metadata]"),
			Description: f.Get("payment_intent_data[description]"), APIVersion: r.Header.Get("Stripe-Version"), HostedURL: hosted,
			TransferTo: dest, FeeAmount: fee}}
	s.change(w, r, func() (any, []entry, *apiError) {
		if _, known := s.accounts[dest]; dest != "" && !known {
			return nil, nil, &apiError{http.StatusBadRequest, "resource_missing", "payment_intent_data[transfer_data][destination]",
				fmt.Sprintf("No such destination: '%s'", dest)}
		}
		return c, []entry{putSession(c)}, nil
	})
}

func (s *Service) getSession(w http.ResponseWriter, r *http.Request) {
	copied, ok, err := find(s, s.sessions, r.PathValue("id"))
	switch {
	case err != nil:
		writeStorageError(w, err)
	case !ok:
		writeError(w, http.StatusNotFound, "resource_missing", "session", fmt.Sprintf("No such checkout.session: '%s'", r.PathValue("id")))
	default:
		httpjson.Write(w, http.StatusOK, &copied)
	}
}

func (s *Service) getIntent(w http.ResponseWriter, r *http.Request) {
	copied, ok, err := find(s, s.intents, r.PathValue("id"))
	var out any = &copied
	if ok && err == nil && expanded(r, "latest_charge") {
		var ch charge
		ch, _, err = find(s, s.charges, copied.LatestCharge)
		out = &expandedIntent{copied, &ch}
	}
	switch {
	case err != nil:
		writeStorageError(w, err)
	case !ok:
		writeError(w, http.StatusNotFound, "resource_missing", "intent", fmt.Sprintf("No such payment_intent: '%s'", r.PathValue("id")))
	default:
		httpjson.Write(w, http.StatusOK, out)
	}
}

// expanded reports whether the request asks to expand field (expand[]=…).
func expanded(r *http.Request, field string) bool {
	for k, vs := range r.Form {
		if k == "expand[]" || strings.HasPrefix(k, "expand[") {
			for _, v := range vs {
				if v == field {
					return true
				}
			}
		}
	}
	return false
}

// createRefund refunds a payment intent's (or charge's) charge in full, or
// the given amount; a charge refunds at most what it took. With
// reverse_transfer=true a destination charge's transfer is reversed by the
// refunded amount (at most what it moved).
func (s *Service) createRefund(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	var requested int64
	if a := f.Get("amount"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "parameter_invalid_integer", "amount", "Invalid integer: "+a)
			return
		}
		requested = n
	}
	if f.Get("payment_intent") == "" && f.Get("charge") == "" {
		writeError(w, http.StatusBadRequest, "parameter_missing", "charge", "One of the following params should be provided for this request: payment_intent or charge.")
		return
	}
	re := &refund{ID: "re_" + randomID(24), Object: "refund", Status: "succeeded", Metadata: formMap(f, "metadata"), Created: time.Now().Unix()}
	if reason := f.Get("reason"); reason != "" {
		re.Reason = &reason
	}
	s.change(w, r, func() (any, []entry, *apiError) {
		chargeID := f.Get("charge")
		if id := f.Get("payment_intent"); id != "" {
			pi, ok := s.intents[id]
			if !ok {
				return nil, nil, &apiError{http.StatusNotFound, "resource_missing", "payment_intent", fmt.Sprintf("No such payment_intent: '%s'", id)}
			}
			chargeID = pi.LatestCharge
		}
		found, ok := s.charges[chargeID]
		if !ok {
			return nil, nil, &apiError{http.StatusNotFound, "resource_missing", "charge", fmt.Sprintf("No such charge: '%s'", chargeID)}
		}
		ch := *found
		amount := cmp.Or(requested, ch.Amount-ch.AmountRefunded)
		if ch.Refunded || amount > ch.Amount-ch.AmountRefunded {
			return nil, nil, &apiError{http.StatusBadRequest, "charge_already_refunded", "", fmt.Sprintf("Charge %s has already been refunded.", ch.ID)}
		}
		ch.AmountRefunded += amount
		ch.Refunded = ch.AmountRefunded == ch.Amount
		out := *re
		out.Amount, out.Currency, out.Charge, out.PaymentIntent = amount, ch.Currency, ch.ID, ch.PaymentIntent
		entries := []entry{putCharge(&ch), {Refund: &out}}
		if tr, ok := s.transfers[ch.Transfer]; ok && f.Get("reverse_transfer") == "true" {
			entries = append(entries, putTransfer(reverse(tr, amount)))
		}
		return &out, entries, nil
	})
}

// checkoutPage is the hosted payment page a session's url opens.
func (s *Service) checkoutPage(w http.ResponseWriter, r *http.Request) {
	copied, ok, err := find(s, s.sessions, r.PathValue("id"))
	switch {
	case err != nil:
		renderPage(w, http.StatusInternalServerError, storagePage(err))
	case !ok:
		renderPage(w, http.StatusNotFound, pageData{Title: "This checkout link is not valid", Message: "Go back to Loupe and try again."})
	case copied.Status == "complete":
		http.Redirect(w, r, successURL(&copied), http.StatusSeeOther)
	default:
		renderCheckout(w, http.StatusOK, &copied, "")
	}
}

// testCard is one of Stripe's test card numbers and what paying with it does.
type testCard struct {
	Number, Label string
	// Message is what Checkout says when the card is declined (Stripe's
	// message for its decline code); empty for a card that pays.
	Message string
}

// Spaced is the number in groups of four, as a card shows it.
func (c testCard) Spaced() string {
	var b strings.Builder
	for i, r := range c.Number {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// testCards are Stripe's test cards the local checkout page takes
// (https://docs.stripe.com/testing): one that pays and the common declines
// (generic_decline, insufficient_funds, lost_card, expired_card,
// incorrect_cvc, processing_error), with Stripe's messages for them.
var testCards = []testCard{
	{"4242424242424242", "pays", ""},
	{"4000000000000002", "generic decline", "Your card was declined."},
	{"4000000000009995", "insufficient funds", "Your card has insufficient funds."},
	{"4000000000009987", "lost card", "Your card was declined."},
	{"4000000000000069", "expired card", "Your card has expired."},
	{"4000000000000127", "incorrect CVC", "Your card's security code is incorrect."},
	{"4000000000000119", "processing error", "An error occurred while processing your card. Try again in a little bit."},
}

// cardProblem is why the card number a payer typed does not pay, or ""
// when it does: a declining test card's message, or Stripe's words for a
// number that is not one of the test cards. An empty number is the 4242
// card the page fills in (forms posted without the field pay).
func cardProblem(number string) string {
	number = strings.Join(strings.Fields(number), "")
	if number == "" {
		return ""
	}
	for _, c := range testCards {
		if c.Number == number {
			return c.Message
		}
	}
	return "Your card number is incorrect. In test mode, use one of the test cards listed above."
}

// pay completes a session as a test card payment would: a succeeded
// payment intent and charge, the session complete and paid, then the
// checkout.session.completed and payment_intent.succeeded events, and the
// redirect to the success URL. When the functions do not take the events
// the page says so and paying again re-sends them. A declining test card
// leaves the session open and the page says why, as Checkout does.
func (s *Service) pay(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	found, ok := s.sessions[r.PathValue("id")]
	if !ok {
		s.mu.Unlock()
		renderPage(w, http.StatusNotFound, pageData{Title: "This checkout link is not valid", Message: "Go back to Loupe and try again."})
		return
	}
	if problem := cardProblem(r.FormValue("card")); problem != "" && found.Status != "complete" {
		open := *found
		s.mu.Unlock()
		renderCheckout(w, http.StatusPaymentRequired, &open, problem)
		return
	}
	done := *found
	var intent paymentIntent
	var entries []entry
	if paid, ok := s.paidLocked(&done); ok {
		intent = *paid
	} else {
		now := time.Now().Unix()
		intent = paymentIntent{ID: "pi_" + randomID(24), Object: "payment_intent", Amount: done.AmountTotal, Received: done.AmountTotal,
			Currency: done.Currency, Status: "succeeded", Metadata: done.local.IntentMeta, Created: now}
		ch := &charge{ID: "ch_" + randomID(24), Object: "charge", Amount: done.AmountTotal, Currency: done.Currency, Paid: true,
			Status: "succeeded", PaymentIntent: intent.ID, Description: done.local.Product, Metadata: done.local.IntentMeta, Created: now}
		ch.ReceiptURL = strings.Replace(done.local.HostedURL, "/checkout/"+done.ID, "/receipts/"+ch.ID, 1)
		intent.LatestCharge = ch.ID
		done.Status, done.PaymentStatus, done.PaymentIntent, done.URL = "complete", "paid", &intent.ID, nil
		tr := destinationTransfer(&done, ch, now)
		if tr != nil {
			ch.Transfer = tr.ID
		}
		entries = []entry{putIntent(&intent), putCharge(ch), putSession(&done)}
		if tr != nil {
			entries = append(entries, putTransfer(tr))
		}
	}
	seq, err := s.commitLocked(entries)
	if entries == nil {
		seq = s.appendedLocked() // paid before: answer once that is on disk
	}
	s.mu.Unlock()
	if err == nil {
		err = s.durable(seq)
	}
	if err != nil {
		renderPage(w, http.StatusInternalServerError, storagePage(err))
		return
	}
	err = s.send(r.Context(), "checkout.session.completed", done.local.APIVersion, &done)
	if err == nil {
		err = s.send(r.Context(), "payment_intent.succeeded", done.local.APIVersion, &intent)
	}
	if err != nil {
		renderCheckout(w, http.StatusBadGateway, &done, "Your test payment went through, but Loupe has not confirmed it yet ("+err.Error()+"). Press Pay again to resend the confirmation.")
		return
	}
	http.Redirect(w, r, successURL(&done), http.StatusSeeOther)
}

// paidLocked is the payment intent of a complete session; s.mu is held.
func (s *Service) paidLocked(c *session) (*paymentIntent, bool) {
	if c.Status != "complete" || c.PaymentIntent == nil {
		return nil, false
	}
	pi, ok := s.intents[*c.PaymentIntent]
	return pi, ok
}

// successURL fills in Stripe's {CHECKOUT_SESSION_ID} template variable.
func successURL(c *session) string {
	return strings.ReplaceAll(c.SuccessURL, "{CHECKOUT_SESSION_ID}", c.ID)
}

// amountText shows a minor-unit amount in its currency, e.g. EUR 38.97.
func amountText(amount int64, currency string) string {
	code := strings.ToUpper(currency)
	if zeroDecimal[strings.ToLower(currency)] {
		return fmt.Sprintf("%s %d", code, amount)
	}
	return fmt.Sprintf("%s %.2f", code, float64(amount)/100)
}

func (s *Service) receiptPage(w http.ResponseWriter, r *http.Request) {
	copied, ok, err := find(s, s.charges, r.PathValue("id"))
	if err != nil {
		renderPage(w, http.StatusInternalServerError, storagePage(err))
		return
	}
	if !ok {
		renderPage(w, http.StatusNotFound, pageData{Title: "No such receipt", Message: "loupe's local Stripe test mode has no receipt by this id."})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = receipt.Execute(w, map[string]any{"Charge": &copied, "Amount": amountText(copied.Amount, copied.Currency),
		"Refunded": amountText(copied.AmountRefunded, copied.Currency),
		"Date":     time.Unix(copied.Created, 0).UTC().Format("Jan 2, 2006")})
}

func renderCheckout(w http.ResponseWriter, status int, c *session, problem string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = checkout.Execute(w, map[string]any{"Session": c, "Amount": amountText(c.AmountTotal, c.Currency), "Problem": problem,
		"Product": c.local.Product, "Action": "/emulator/stripe/checkout/" + c.ID, "Cards": testCards})
}

const pageStyle = `<style>
body{margin:0;min-height:100vh;display:grid;place-items:center;background:#09090b;color:#e4e4e7;font:16px/1.5 system-ui,sans-serif}
main{width:min(28rem,calc(100vw - 2rem));background:#18181b;border:1px solid #27272a;border-radius:1rem;padding:2rem;box-sizing:border-box}
h1{font-size:1.25rem;color:#fff;margin:0 0 .5rem}p{color:#a1a1aa;margin:0 0 1rem}
.badge{display:inline-block;font-size:.75rem;background:#422006;color:#fbbf24;border-radius:999px;padding:.125rem .625rem;margin-bottom:1rem}
.amount{font-size:2rem;font-weight:700;color:#fff;margin:0 0 1rem}
.card{display:block;width:100%;box-sizing:border-box;background:transparent;font-size:1rem;border:1px solid #3f3f46;border-radius:.5rem;padding:.75rem;color:#d4d4d8;margin:.25rem 0 .5rem;font-family:ui-monospace,monospace}
label{color:#d4d4d8;font-size:.875rem}.hint{font-size:.8125rem;overflow-wrap:anywhere}.nowrap{font-family:ui-monospace,monospace}
.problem{background:#450a0a;color:#fecaca;border-radius:.5rem;padding:.75rem}
button{width:100%;padding:.75rem;border:0;border-radius:.5rem;background:#6366f1;color:#fff;font-weight:600;font-size:1rem;cursor:pointer}
a{display:block;text-align:center;margin-top:1rem;color:#a1a1aa}
dl{display:grid;grid-template-columns:auto minmax(0,1fr);gap:.25rem 1rem;margin:0}dt{color:#a1a1aa}dd{margin:0;color:#fff;text-align:right;overflow-wrap:anywhere}
</style>`

var checkout = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Pay Loupe</title>` + pageStyle + `</head><body><main>
<span class="badge">Test mode</span>
<h1>Pay Loupe</h1>
<p>{{.Product}}</p>
<p class="amount">{{.Amount}}</p>
{{if .Session.CustomerEmail}}<p>{{.Session.CustomerEmail}}</p>{{end}}
<form method="post" action="{{.Action}}">
<label for="card">Card number</label>
<input id="card" name="card" class="card" inputmode="numeric" autocomplete="off" value="4242 4242 4242 4242" list="test-cards">
<datalist id="test-cards">{{range .Cards}}<option value="{{.Spaced}}">{{.Label}}</option>{{end}}</datalist>
<p class="hint">12/34 · 123. Test cards: {{range $i, $c := .Cards}}{{if $i}}, {{end}}<span class="nowrap">{{$c.Spaced}}</span> ({{$c.Label}}){{end}}.</p>
{{if .Problem}}<p class="problem" role="alert">{{.Problem}}</p>{{end}}
<p>This is loupe's local Stripe test mode: no card is charged and no money moves.</p>
<button type="submit">Pay {{.Amount}}</button></form>
{{if .Session.CancelURL}}<a href="{{.Session.CancelURL}}">Cancel and return to Loupe</a>{{end}}
</main></body></html>`))

var receipt = template.Must(template.New("receipt").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Receipt from Loupe</title>` + pageStyle + `</head><body><main>
<span class="badge">Test mode</span>
<h1>Receipt from Loupe</h1>
<p class="amount">{{.Amount}}</p>
<dl><dt>Paid on</dt><dd>{{.Date}}</dd><dt>For</dt><dd>{{.Charge.Description}}</dd><dt>Receipt</dt><dd>{{.Charge.ID}}</dd>
{{if .Charge.AmountRefunded}}<dt>Refunded</dt><dd>{{.Refunded}}</dd>{{end}}</dl>
</main></body></html>`))

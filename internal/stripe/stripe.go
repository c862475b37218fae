// Package stripe is loupe's local stand-in for the part of Stripe's API that
// Loupe uses (Connect onboarding, Checkout, refunds), so the payments
// function runs unchanged, through the real stripe-go client, on a machine
// without the internet.
//
// It serves POST /v1/accounts, GET /v1/accounts/{id} and POST
// /v1/account_links with Stripe's JSON shapes and errors (stripe-go wants
// its API at a host's root, so these sit beside the other services' paths),
// and the onboarding page an account link points to
// (/emulator/stripe/connect/{link}). Completing that page enables charges
// on the account, sends the functions an account.updated event signed the
// way Stripe signs webhooks (stripe-go's webhook package), and
// redirects to the link's return URL. checkout.go adds Checkout Sessions,
// payment intents, refunds and their hosted pages.
//
// A POST with an Idempotency-Key header is answered once: a repeat with the
// same key gets the first answer again, as Stripe does.
//
// Caveats: accounts and payments live in memory (the payments function
// creates a new account when Stripe no longer knows the stored id); any
// secret key starting with sk_test_ is accepted; events carry the API
// version the client announced in its Stripe-Version header.
package stripe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/server"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// Local credentials the functions process gets when the operator gave none.
const (
	SecretKey     = "sk_test_loupe_local"
	WebhookSecret = "whsec_loupe_local"
	// WebhookPath is where the payments function takes Stripe's events.
	WebhookPath = "/payments/webhook"
)

// account is a Connect account as Stripe returns it.
type account struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Type             string            `json:"type"`
	Email            string            `json:"email,omitempty"`
	Metadata         map[string]string `json:"metadata"`
	ChargesEnabled   bool              `json:"charges_enabled"`
	PayoutsEnabled   bool              `json:"payouts_enabled"`
	DetailsSubmitted bool              `json:"details_submitted"`
	Created          int64             `json:"created"`
	apiVersion       string
}

// link is an account link: one onboarding visit.
type link struct {
	account            string
	returnURL, refresh string
	created, expiresAt int64
}

// Service is the Stripe stand-in.
type Service struct {
	functions func() (*url.URL, bool)
	client    *http.Client

	mu       sync.Mutex
	accounts map[string]*account
	links    map[string]*link
	sessions map[string]*session
	intents  map[string]*paymentIntent
	charges  map[string]*charge
	refunds  map[string]*refund
	// answered holds the first answer to each Idempotency-Key.
	answered map[string]recorded
}

// recorded is a stored API answer.
type recorded struct {
	status int
	body   []byte
}

// New builds the stand-in; functions resolves the functions process, where
// webhooks go (not yet known while it builds).
func New(functions func() (*url.URL, bool)) *Service {
	return &Service{functions: functions, client: &http.Client{Timeout: 10 * time.Second},
		accounts: map[string]*account{}, links: map[string]*link{}, sessions: map[string]*session{},
		intents: map[string]*paymentIntent{}, charges: map[string]*charge{}, refunds: map[string]*refund{},
		answered: map[string]recorded{}}
}

// FunctionEnv is the environment that points the payments function at this
// stand-in, given loupe's base URL.
func FunctionEnv(loupeURL string) []string {
	return []string{"STRIPE_SECRET_KEY=" + SecretKey, "STRIPE_WEBHOOK_SECRET=" + WebhookSecret,
		"STRIPE_API_BASE=" + strings.TrimSuffix(loupeURL, "/")}
}

// Name implements server.Service.
func (s *Service) Name() string { return "stripe" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("POST /v1/accounts", s.authorized(s.createAccount))
	r.HTTP.HandleFunc("GET /v1/accounts/{id}", s.authorized(s.getAccount))
	r.HTTP.HandleFunc("POST /v1/account_links", s.authorized(s.createLink))
	r.HTTP.HandleFunc("GET /emulator/stripe/connect/{link}", s.onboardingPage)
	r.HTTP.HandleFunc("POST /emulator/stripe/connect/{link}", s.completeOnboarding)
	s.registerCheckout(r.HTTP)
}

// authorized checks the secret key as Stripe does (Bearer or basic auth).
func (s *Service) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			key, _, ok = r.BasicAuth()
		}
		if !ok || !strings.HasPrefix(key, "sk_test_") {
			writeError(w, http.StatusUnauthorized, "", "", "Invalid API Key provided: use a test-mode secret key (sk_test_…)")
			return
		}
		if err := r.ParseForm(); err != nil {
			writeError(w, http.StatusBadRequest, "parameter_invalid", "", "Invalid request body: "+err.Error())
			return
		}
		key = r.Header.Get("Idempotency-Key")
		if r.Method != http.MethodPost || key == "" {
			next(w, r)
			return
		}
		key = r.URL.Path + " " + key
		s.mu.Lock()
		first, seen := s.answered[key]
		s.mu.Unlock()
		if seen {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(first.status)
			_, _ = w.Write(first.body)
			return
		}
		rec := httptest.NewRecorder()
		next(rec, r)
		s.mu.Lock()
		s.answered[key] = recorded{rec.Code, rec.Body.Bytes()}
		s.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}
}

func (s *Service) createAccount(w http.ResponseWriter, r *http.Request) {
	typ := r.PostForm.Get("type")
	if typ == "" {
		typ = "standard"
	}
	if typ != "express" && typ != "standard" && typ != "custom" {
		writeError(w, http.StatusBadRequest, "parameter_invalid_string", "type", "Invalid type: must be one of express, standard or custom")
		return
	}
	a := &account{ID: "acct_" + randomID(16), Object: "account", Type: typ, Email: r.PostForm.Get("email"),
		Metadata: formMap(r.PostForm, "metadata"), Created: time.Now().Unix(), apiVersion: r.Header.Get("Stripe-Version")}
	s.mu.Lock()
	s.accounts[a.ID] = a
	s.mu.Unlock()
	httpjson.Write(w, http.StatusOK, a)
}

// find returns a copy of m[id], taken under the lock.
func find[T any](s *Service, m map[string]*T, id string) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := m[id]
	if !ok {
		var zero T
		return zero, false
	}
	return *v, true
}

func (s *Service) getAccount(w http.ResponseWriter, r *http.Request) {
	copied, ok := find(s, s.accounts, r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "resource_missing", "account", fmt.Sprintf("No such account: '%s'", r.PathValue("id")))
		return
	}
	httpjson.Write(w, http.StatusOK, &copied)
}

func (s *Service) createLink(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	for _, p := range []string{"account", "type", "return_url", "refresh_url"} {
		if f.Get(p) == "" {
			writeError(w, http.StatusBadRequest, "parameter_missing", p, "Missing required param: "+p+".")
			return
		}
	}
	if t := f.Get("type"); t != "account_onboarding" && t != "account_update" {
		writeError(w, http.StatusBadRequest, "parameter_invalid_string", "type", "Invalid type: must be account_onboarding or account_update")
		return
	}
	now := time.Now()
	l := &link{account: f.Get("account"), returnURL: f.Get("return_url"), refresh: f.Get("refresh_url"),
		created: now.Unix(), expiresAt: now.Add(5 * time.Minute).Unix()}
	id := randomID(24)
	s.mu.Lock()
	_, known := s.accounts[l.account]
	if known {
		s.links[id] = l
	}
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, "resource_missing", "account", fmt.Sprintf("No such account: '%s'", l.account))
		return
	}
	base := "http://" + r.Host
	httpjson.Write(w, http.StatusOK, map[string]any{"object": "account_link", "created": l.created, "expires_at": l.expiresAt,
		"url": base + "/emulator/stripe/connect/" + id})
}

// visit finds a live link and a copy of its account.
func (s *Service) visit(id string) (*link, account, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[id]
	if !ok || time.Now().Unix() > l.expiresAt {
		return nil, account{}, false
	}
	a, ok := s.accounts[l.account]
	if !ok {
		return nil, account{}, false
	}
	return l, *a, true
}

func (s *Service) onboardingPage(w http.ResponseWriter, r *http.Request) {
	l, a, ok := s.visit(r.PathValue("link"))
	if !ok {
		renderPage(w, http.StatusNotFound, pageData{Title: "This onboarding link has expired",
			Message: "Go back to Loupe and press Connect payouts again."})
		return
	}
	renderPage(w, http.StatusOK, pageData{Title: "Set up payouts for Loupe", Email: a.Email,
		Message: "This is loupe's local Stripe test mode: no real account is created and no money moves.",
		Action:  r.URL.Path, Cancel: l.returnURL})
}

func (s *Service) completeOnboarding(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("link")
	l, _, ok := s.visit(id)
	if !ok {
		renderPage(w, http.StatusNotFound, pageData{Title: "This onboarding link has expired",
			Message: "Go back to Loupe and press Connect payouts again."})
		return
	}
	s.mu.Lock()
	a := s.accounts[l.account]
	a.ChargesEnabled, a.PayoutsEnabled, a.DetailsSubmitted = true, true, true
	snapshot := *a
	s.mu.Unlock()
	if err := s.send(r.Context(), "account.updated", snapshot.apiVersion, &snapshot); err != nil {
		// The link stays usable, so the person can try again.
		renderPage(w, http.StatusBadGateway, pageData{Title: "Loupe did not receive the update",
			Message: err.Error(), Action: r.URL.Path, Cancel: l.returnURL})
		return
	}
	s.mu.Lock()
	delete(s.links, id)
	s.mu.Unlock()
	http.Redirect(w, r, l.returnURL, http.StatusSeeOther)
}

// send posts a signed event of type typ about object to the functions.
func (s *Service) send(ctx context.Context, typ, apiVersion string, object any) error {
	base, ok := s.functions()
	if !ok {
		return fmt.Errorf("the functions are not running yet; try again in a moment")
	}
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base.String()+WebhookPath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: WebhookSecret, Timestamp: time.Unix(now, 0)})
	req.Header.Set("Stripe-Signature", signed.Header)
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}

// formMap collects Stripe's bracketed form keys: name[key]=value.
func formMap(form url.Values, name string) map[string]string {
	out := map[string]string{}
	for k, v := range form {
		if key, ok := strings.CutPrefix(k, name+"["); ok && strings.HasSuffix(key, "]") && len(v) > 0 {
			out[strings.TrimSuffix(key, "]")] = v[0]
		}
	}
	return out
}

func randomID(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeError answers in Stripe's error shape.
func writeError(w http.ResponseWriter, status int, code, param, message string) {
	e := map[string]string{"type": "invalid_request_error", "message": message}
	if code != "" {
		e["code"] = code
	}
	if param != "" {
		e["param"] = param
	}
	httpjson.Write(w, status, map[string]any{"error": e})
}

type pageData struct {
	Title, Message, Email, Action, Cancel string
}

var page = template.Must(template.New("onboarding").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}}</title>` + pageStyle + `</head><body><main>
<span class="badge">Test mode</span>
<h1>{{.Title}}</h1>
{{if .Email}}<p>Account: {{.Email}}</p>{{end}}
<p>{{.Message}}</p>
{{if .Action}}<form method="post" action="{{.Action}}"><button type="submit">Complete onboarding</button></form>{{end}}
{{if .Cancel}}<a href="{{.Cancel}}">Return to Loupe</a>{{end}}
</main></body></html>`))

func renderPage(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = page.Execute(w, d)
}

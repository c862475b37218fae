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
// payment intents, refunds and their hosted pages; transfers.go the
// transfers of destination charges to connected accounts (GET
// /v1/transfers), which refunds with reverse_transfer take back.
//
// A POST with an Idempotency-Key header that changed something is answered
// once: a repeat with the same key within a day gets the first answer
// again, or Stripe's idempotency_error when its parameters differ, as
// Stripe does.
//
// The objects and those answers are kept in the data dir (store.go: a
// write-ahead log, exported as stripe_export/objects.jsonl), so receipts,
// refunds and retries work across restarts; with --in-memory they last
// while loupe runs.
//
// Caveats: any secret key starting with sk_test_ is accepted; events carry
// the API version the client announced in its Stripe-Version header.
package stripe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/wal"
	"github.com/stripe/stripe-go/v85/webhook"
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
	Account   string `json:"account"`
	ReturnURL string `json:"return_url"`
	Refresh   string `json:"refresh_url"`
	Created   int64  `json:"created"`
	ExpiresAt int64  `json:"expires_at"`
}

// Service is the Stripe stand-in.
type Service struct {
	env       server.Env
	functions func() (base *url.URL, release func(), ok bool)
	client    *http.Client

	// mu guards the objects and the order of appends to log.
	mu sync.Mutex
	objects
	// log is the open write-ahead log (store.go), nil in memory.
	log *wal.Log
}

// New builds the stand-in, kept in env.DataDir (in memory when empty) once
// opened; functions resolves the functions process, where webhooks go (not
// yet known while it builds), and holds it until release.
func New(env server.Env, functions func() (base *url.URL, release func(), ok bool)) *Service {
	return &Service{env: env, functions: functions, client: &http.Client{Timeout: 10 * time.Second}, objects: newObjects()}
}

// Open implements server.Opener: it loads the data folder's log, then
// --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.DataDir != "" {
		log, err := openLog(s.env.DataDir, &s.objects)
		if err != nil {
			return err
		}
		s.log = log
	}
	if s.env.ImportDir != "" {
		return s.Import(ctx, s.env.ImportDir)
	}
	return nil
}

// Close implements server.Closer: it syncs and closes the log.
func (s *Service) Close() error {
	if s.log == nil {
		return nil
	}
	return s.log.Close()
}

// Export implements server.Exporter: stripe_export/objects.jsonl.
func (s *Service) Export(_ context.Context, dir string) error {
	s.mu.Lock()
	entries, seq := s.snapshot(), s.appendedLocked()
	s.mu.Unlock()
	if err := s.wait(seq); err != nil {
		return err
	}
	return writeExport(dir, entries)
}

// Import implements server.Importer: the objects become those of
// dir/stripe_export/objects.jsonl (nothing changes without the file, or
// when it is damaged).
func (s *Service) Import(_ context.Context, dir string) error {
	fresh, err := readExport(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fresh.prune(time.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		if err := rewrite(s.log, fresh.snapshot()); err != nil {
			return err
		}
	}
	s.replaceWith(fresh)
	return nil
}

// commitLocked writes a change's entries into the objects and appends them
// to the log as one record; s.mu is held, so the log's order is the order
// of the changes. It returns the sequence number to pass to durable.
func (s *Service) commitLocked(entries []entry) (uint64, error) {
	var seq uint64
	if s.log != nil {
		payload, err := encodeChange(entries)
		if err != nil {
			return 0, err
		}
		if seq, err = s.log.Append(payload); err != nil {
			return 0, err
		}
	}
	for _, e := range entries {
		s.apply(e)
	}
	return seq, nil
}

// commitAndUnlock commits entries as commitLocked does, releases s.mu and
// waits until they are durable.
func (s *Service) commitAndUnlock(entries []entry) error {
	seq, err := s.commitLocked(entries)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.durable(seq)
}

// durable waits until the change numbered seq is on disk. When it could
// not be written, the objects are read back from the log, so that nothing
// the disk refused stays visible.
func (s *Service) durable(seq uint64) error {
	err := s.wait(seq)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		_ = s.log.Flush() // what is queued fails or lands before the log is read
		o := newObjects()
		if _, rerr := wal.Replay(s.log.Path(), false, o.applyChange); rerr != nil {
			return errors.Join(err, rerr)
		}
		s.replaceWith(o)
	}
	return err
}

// appendedLocked is the sequence number of the last change; s.mu is held.
func (s *Service) appendedLocked() uint64 {
	if s.log == nil {
		return 0
	}
	return s.log.Appended()
}

// wait returns once the change numbered seq is on disk: a reader that saw
// the objects up to it answers only then.
func (s *Service) wait(seq uint64) error {
	if s.log == nil || seq == 0 {
		return nil
	}
	return s.log.Wait(seq)
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
	r.Admin("DELETE /emulator/v1/stripe", s.clear)
	s.registerCheckout(r.HTTP)
	s.registerTransfers(r.HTTP)
}

// clear serves DELETE /emulator/v1/stripe: every object and kept answer
// goes, as the Stripe dashboard's "Delete all test data" does.
func (s *Service) clear(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		if err := rewrite(s.log, nil); err != nil {
			writeStorageError(w, err)
			return
		}
	}
	s.replaceWith(newObjects())
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// authorized checks the secret key as Stripe does (Bearer or basic auth),
// parses the form, and answers a POST whose Idempotency-Key was answered
// before with that first answer.
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
		if key := idempotencyKey(r); key != "" && s.replay(w, r, key) {
			return
		}
		next(w, r)
	}
}

// idempotencyKey is the key under which a POST's answer is kept, "" when
// it has no Idempotency-Key.
func idempotencyKey(r *http.Request) string {
	key := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost || key == "" {
		return ""
	}
	return r.URL.Path + " " + key
}

// paramsOf is what a request with an Idempotency-Key must repeat to get
// the first answer: its form, in a stable order.
func paramsOf(r *http.Request) string { return r.PostForm.Encode() }

// replay answers with the first answer to key, once it is on disk, and
// reports whether there was one. A request with other parameters than the
// first gets Stripe's idempotency_error instead.
func (s *Service) replay(w http.ResponseWriter, r *http.Request, key string) bool {
	s.mu.Lock()
	first, seen := s.answered[key]
	seq := s.appendedLocked()
	s.mu.Unlock()
	if !seen {
		return false
	}
	if err := s.wait(seq); err != nil {
		writeStorageError(w, err)
		return true
	}
	if first.Params != paramsOf(r) {
		httpjson.Write(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"type": "idempotency_error",
			"message": fmt.Sprintf("Keys for idempotent requests can only be used with the same parameters they were first used with. "+
				"Try using a key other than '%s' if you meant to execute a different request.", r.Header.Get("Idempotency-Key"))}})
		return true
	}
	w.Header().Set("Idempotent-Replayed", "true")
	writeBody(w, first.Status, []byte(first.Body))
	return true
}

// apiError is an answer in Stripe's error shape.
type apiError struct {
	status               int
	code, param, message string
}

// change runs build under s.mu and commits the entries it returns, with
// the answer out when the request has an Idempotency-Key, as one change;
// once that is on disk it answers out. A build that fails changes nothing
// and its error is not kept for the key, as Stripe keeps no answer for a
// request that failed validation. A request whose key was answered while
// it waited for the lock gets that answer.
func (s *Service) change(w http.ResponseWriter, r *http.Request, build func() (out any, entries []entry, fail *apiError)) {
	key := idempotencyKey(r)
	s.mu.Lock()
	if _, seen := s.answered[key]; key != "" && seen {
		s.mu.Unlock()
		s.replay(w, r, key)
		return
	}
	out, entries, fail := build()
	if fail != nil {
		s.mu.Unlock()
		writeError(w, fail.status, fail.code, fail.param, fail.message)
		return
	}
	body, err := json.Marshal(out)
	if err != nil {
		s.mu.Unlock()
		writeStorageError(w, err)
		return
	}
	body = append(body, '\n')
	if key != "" {
		entries = append(entries, entry{Answer: &storedAnswer{key, http.StatusOK, string(body), time.Now().Unix(), paramsOf(r)}})
	}
	if err := s.commitAndUnlock(entries); err != nil {
		writeStorageError(w, err)
		return
	}
	writeBody(w, http.StatusOK, body)
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
	s.change(w, r, func() (any, []entry, *apiError) { return a, []entry{putAccount(a)}, nil })
}

// find returns a copy of m[id], taken under the lock, once what it read is
// on disk.
func find[T any](s *Service, m map[string]*T, id string) (T, bool, error) {
	s.mu.Lock()
	v, ok := m[id]
	var copied T
	if ok {
		copied = *v
	}
	seq := s.appendedLocked()
	s.mu.Unlock()
	return copied, ok, s.wait(seq)
}

func (s *Service) getAccount(w http.ResponseWriter, r *http.Request) {
	copied, ok, err := find(s, s.accounts, r.PathValue("id"))
	switch {
	case err != nil:
		writeStorageError(w, err)
	case !ok:
		writeError(w, http.StatusNotFound, "resource_missing", "account", fmt.Sprintf("No such account: '%s'", r.PathValue("id")))
	default:
		httpjson.Write(w, http.StatusOK, &copied)
	}
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
	l := link{Account: f.Get("account"), ReturnURL: f.Get("return_url"), Refresh: f.Get("refresh_url"),
		Created: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix()}
	id := randomID(24)
	base := "http://" + r.Host
	s.change(w, r, func() (any, []entry, *apiError) {
		if _, known := s.accounts[l.Account]; !known {
			return nil, nil, &apiError{http.StatusNotFound, "resource_missing", "account", fmt.Sprintf("No such account: '%s'", l.Account)}
		}
		return map[string]any{"object": "account_link", "created": l.Created, "expires_at": l.ExpiresAt,
			"url": base + "/emulator/stripe/connect/" + id}, []entry{{Link: &storedLink{id, l}}}, nil
	})
}

// visitLocked finds a live link and its account; s.mu is held.
func (s *Service) visitLocked(id string) (*link, *account, bool) {
	l, ok := s.links[id]
	if !ok || time.Now().Unix() > l.ExpiresAt {
		return nil, nil, false
	}
	a, ok := s.accounts[l.Account]
	return l, a, ok
}

// linkExpired is the page of a link that is used up, expired or unknown.
var linkExpired = pageData{Title: "This onboarding link has expired", Message: "Go back to Loupe and press Connect payouts again."}

func (s *Service) onboardingPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	l, a, ok := s.visitLocked(r.PathValue("link"))
	var page pageData
	if ok {
		page = pageData{Title: "Set up payouts for Loupe", Email: a.Email,
			Message: "This is loupe's local Stripe test mode: no real account is created and no money moves.",
			Action:  r.URL.Path, Cancel: l.ReturnURL}
	}
	seq := s.appendedLocked()
	s.mu.Unlock()
	switch err := s.wait(seq); {
	case err != nil:
		renderPage(w, http.StatusInternalServerError, storagePage(err))
	case !ok:
		renderPage(w, http.StatusNotFound, linkExpired)
	default:
		renderPage(w, http.StatusOK, page)
	}
}

// completeOnboarding enables charges and payouts on the link's account,
// sends account.updated and, once the functions took it, uses the link up
// and returns to the app.
func (s *Service) completeOnboarding(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("link")
	s.mu.Lock()
	l, a, ok := s.visitLocked(id)
	if !ok {
		s.mu.Unlock()
		renderPage(w, http.StatusNotFound, linkExpired)
		return
	}
	back := l.ReturnURL
	enabled := *a
	enabled.ChargesEnabled, enabled.PayoutsEnabled, enabled.DetailsSubmitted = true, true, true
	if err := s.commitAndUnlock([]entry{putAccount(&enabled)}); err != nil {
		renderPage(w, http.StatusInternalServerError, storagePage(err))
		return
	}
	if err := s.send(r.Context(), "account.updated", enabled.apiVersion, &enabled); err != nil {
		// The link stays usable, so the person can try again.
		renderPage(w, http.StatusBadGateway, pageData{Title: "Loupe did not receive the update",
			Message: err.Error(), Action: r.URL.Path, Cancel: back})
		return
	}
	s.mu.Lock()
	if err := s.commitAndUnlock([]entry{{Unlink: id}}); err != nil {
		renderPage(w, http.StatusInternalServerError, storagePage(err))
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// send posts a signed event of type typ about object to the functions.
func (s *Service) send(ctx context.Context, typ, apiVersion string, object any) error {
	base, release, ok := s.functions()
	if !ok {
		return fmt.Errorf("the functions are not running yet; try again in a moment")
	}
	defer release()
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

// writeStorageError answers a change or read that the disk refused, as
// Stripe answers its own failures (api_error, 500).
func writeStorageError(w http.ResponseWriter, err error) {
	httpjson.Write(w, http.StatusInternalServerError, map[string]any{"error": map[string]string{"type": "api_error",
		"message": "loupe could not save Stripe's objects: " + err.Error()}})
}

// storagePage is the page of a change or read that the disk refused.
func storagePage(err error) pageData {
	return pageData{Title: "Loupe could not save this", Message: err.Error()}
}

// writeBody answers status with a JSON body already encoded.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
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

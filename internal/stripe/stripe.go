// Package stripe is loupe's local stand-in for the part of Stripe's API that
// Loupe uses (Connect onboarding, Checkout, refunds), so the payments
// function runs unchanged, through the real stripe-go client, on a machine
// without the internet.
//
// It serves POST /v1/accounts, GET /v1/accounts/{id} and POST
// /v1/account_links with Stripe's JSON shapes and errors (stripe-go wants
// its API at a host's root, so these sit beside the other services' paths),
// and the onboarding page an account link points to
// (/emulator/stripe/connect/{link}) (connect.go). Completing that page
// enables charges on the account, sends the functions an account.updated
// event signed the way Stripe signs webhooks (webhook.go, with stripe-go's
// webhook package), and redirects to the link's return URL. checkout.go adds
// Checkout Sessions, payment intents, refunds and their hosted pages;
// transfers.go the transfers of destination charges to connected accounts
// (GET /v1/transfers), which refunds with reverse_transfer take back.
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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/wal"
)

// Service is the Stripe stand-in.
type Service struct {
	env       server.Env
	functions func(w http.ResponseWriter, r *http.Request) bool

	// mu guards the objects and the order of appends to log.
	mu sync.Mutex
	objects
	// log is the open write-ahead log (store.go), nil in memory.
	log *wal.Log
}

// New builds the stand-in, kept in env.DataDir (in memory when empty) once
// opened; functions serves a request with the functions process, where
// webhooks go (it returns false, writing nothing, while none runs).
func New(env server.Env, functions func(w http.ResponseWriter, r *http.Request) bool) *Service {
	return &Service{env: env, functions: functions, objects: newObjects()}
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
	c := s.applyChange(r, key, build)
	switch {
	case c.replay:
		s.replay(w, r, key)
		return
	case c.fail != nil:
		writeError(w, c.fail.status, c.fail.code, c.fail.param, c.fail.message)
		return
	case c.err == nil:
		c.err = s.durable(c.seq)
	}
	if c.err != nil {
		writeStorageError(w, c.err)
		return
	}
	writeBody(w, http.StatusOK, c.body)
}

// applied is what applyChange did: nothing but find the key answered
// (replay), a refusal (fail), or a change committed as seq with its answer.
type applied struct {
	replay bool
	fail   *apiError
	seq    uint64
	body   []byte
	err    error
}

// applyChange runs build and commits what it makes, with the answer under
// key, holding s.mu until it returns (also when build panics on a request
// it did not foresee).
func (s *Service) applyChange(r *http.Request, key string, build func() (out any, entries []entry, fail *apiError)) applied {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.answered[key]; key != "" && seen {
		return applied{replay: true}
	}
	out, entries, fail := build()
	if fail != nil {
		return applied{fail: fail}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return applied{err: err}
	}
	body = append(body, '\n')
	if key != "" {
		entries = append(entries, entry{Answer: &storedAnswer{key, http.StatusOK, string(body), time.Now().Unix(), paramsOf(r)}})
	}
	seq, err := s.commitLocked(entries)
	return applied{seq: seq, body: body, err: err}
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

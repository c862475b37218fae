package stripe

import (
	"fmt"
	"net/http"
	"time"

	"github.com/loupe-dev/loupe/internal/httpjson"
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

package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/loupe-dev/loupe/internal/errs"
)

// Blocking calls a project's Auth blocking functions; the functions
// service implements it (app wires it in with SetBlocking).
type Blocking interface {
	// Declared reports whether a function is declared for event
	// ("beforeCreate", "beforeSignIn").
	Declared(event string) bool
	// Call calls it with the event's claims (the payload of the JWT that
	// production signs and posts as {"data": {"jwt": …}}) and returns the
	// function's HTTP status and body; err when it could not be reached.
	Call(ctx context.Context, event string, claims map[string]any) (status int, body []byte, err error)
}

// SetBlocking installs the blocking functions; nil removes them.
func (s *Engine) SetBlocking(b Blocking) { s.blocking = b }

// errBlockingPending ends a method's run when it needs a blocking
// function's answer: Do undoes the run, calls the function outside the
// store's lock (the function may call Auth back) and runs the method again
// with the answer.
var errBlockingPending = errors.New("a blocking function's answer is needed")

// blockingCall is a blocking function call a run is waiting for.
type blockingCall struct {
	event  string
	claims map[string]any
}

// answer is what a blocking function said: the user fields to change.
type answer struct {
	UserRecord *struct {
		UpdateMask    string         `json:"updateMask"`
		DisplayName   any            `json:"displayName"`
		PhotoURL      any            `json:"photoURL"`
		Disabled      any            `json:"disabled"`
		EmailVerified any            `json:"emailVerified"`
		CustomClaims  map[string]any `json:"customClaims"`
		SessionClaims map[string]any `json:"sessionClaims"`
	} `json:"userRecord"`
}

// block asks the blocking function for event about u, signed in with
// method: with its answer known (a run after Do called it), it applies the
// answer to u; otherwise it records the call for Do and returns
// errBlockingPending. Without a function for event, or for the owner, it
// does nothing.
func (s *Engine) block(q *Call, event string, u *User, method string) error {
	if s.blocking == nil || q.Admin || !s.blocking.Declared(event) {
		return nil
	}
	if a, ok := q.answers[event]; ok {
		a.apply(u)
		if r := a.UserRecord; event == "beforeSignIn" && r != nil && slices.Contains(strings.Split(r.UpdateMask, ","), "sessionClaims") {
			// Production puts a beforeSignIn's sessionClaims in the
			// session's ID tokens (not in the user's custom claims).
			q.sessionClaims = r.SessionClaims
		}
		return nil
	}
	claims := blockingClaims(q.Project, event, u, method, s.now().Unix())
	if q.rawUserInfo != "" {
		claims["raw_user_info"] = q.rawUserInfo
	}
	q.pending = &blockingCall{event: event, claims: claims}
	return errBlockingPending
}

// signInBlocked runs the blocking functions of a sign-in with method: for
// a new user beforeCreate, then beforeSignIn unless the account came out
// disabled, for an existing one beforeSignIn; it fails with USER_DISABLED
// when an answer disabled the account, as firebase-tools does.
func (s *Engine) signInBlocked(q *Call, u *User, method string, isNew bool) error {
	if isNew {
		if err := s.block(q, "beforeCreate", u, method); err != nil {
			return err
		}
	}
	if !u.disabled() {
		if err := s.block(q, "beforeSignIn", u, method); err != nil {
			return err
		}
	}
	if u.disabled() {
		return errUserDisabled
	}
	return nil
}

// callBlocking calls the pending function and keeps its answer in q, or
// returns the error the request fails with, as production words it.
func (s *Engine) callBlocking(q *Call) error {
	p := q.pending
	q.pending = nil
	status, body, err := s.blocking.Call(context.Background(), p.event, p.claims)
	if err != nil {
		return errs.New(errs.Internal, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Failed to make request to the "+p.event+" function: "+err.Error()+"))")
	}
	if status < 200 || status > 299 {
		return badRequest("BLOCKING_FUNCTION_ERROR_RESPONSE : ((HTTP Cloud Function returned an error: " + strings.TrimSpace(string(body)) + "))")
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return errs.New(errs.Internal, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Response body is not valid JSON.))")
	}
	if a.UserRecord != nil && a.UserRecord.UpdateMask == "" {
		return errs.New(errs.Internal, "BLOCKING_FUNCTION_ERROR_RESPONSE : ((Response UserRecord is missing updateMask.))")
	}
	if q.answers == nil {
		q.answers = map[string]answer{}
	}
	q.answers[p.event] = a
	return nil
}

// apply makes the fields the answer's updateMask names the user's.
func (a answer) apply(u *User) {
	r := a.UserRecord
	if r == nil {
		return
	}
	for _, field := range strings.Split(r.UpdateMask, ",") {
		switch field {
		case "displayName":
			u.DisplayName = stringOf(r.DisplayName)
		case "photoURL":
			u.PhotoURL = stringOf(r.PhotoURL)
		case "disabled":
			u.Disabled = flag(truthy(r.Disabled))
		case "emailVerified":
			u.EmailVerified = flag(truthy(r.EmailVerified))
		case "customClaims":
			data, _ := json.Marshal(r.CustomClaims)
			u.CustomAttributes = string(data)
		}
	}
}

func stringOf(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func truthy(v any) bool {
	b, _ := v.(bool)
	return b
}

// blockingClaims is the payload of the JWT a blocking function gets, in the
// fields firebase-functions reads.
func blockingClaims(project, event string, u *User, method string, now int64) map[string]any {
	var claims map[string]any
	if u.CustomAttributes != "" {
		_ = json.Unmarshal([]byte(u.CustomAttributes), &claims)
	}
	record := map[string]any{
		"uid": u.LocalID, "email": u.Email, "email_verified": u.EmailVerified != nil && *u.EmailVerified,
		"display_name": u.DisplayName, "photo_url": u.PhotoURL, "disabled": u.disabled(),
		"custom_claims": claims,
		"metadata":      map[string]any{"creation_time": millisInt(u.CreatedAt), "last_sign_in_time": millisInt(u.LastLoginAt)},
	}
	var providers []map[string]any
	for _, p := range u.ProviderUserInfo {
		providers = append(providers, map[string]any{"provider_id": p.ProviderID, "display_name": p.DisplayName,
			"photo_url": p.PhotoURL, "email": p.Email, "uid": p.RawID})
	}
	record["provider_data"] = providers
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	return map[string]any{
		"iss": "https://securetoken.google.com/" + project, "aud": "run.app", "iat": now, "exp": now + 600,
		"event_id": base64.RawURLEncoding.EncodeToString(id), "event_type": event,
		"user_agent": "loupe", "ip_address": "127.0.0.1", "locale": "en",
		"sub": u.LocalID, "sign_in_method": method, "user_record": record,
	}
}

func millisInt(ms string) any {
	var n int64
	if err := json.Unmarshal([]byte(ms), &n); err != nil {
		return nil
	}
	return n
}

package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/mail"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// projectNumber is the project number token answers carry, firebase-tools' fake one.
const projectNumber = "12345"

// Engine is Auth's core: the accounts of every project, their tokens and
// captured e-mails, and the Identity Toolkit and Secure Token methods over
// them. It has no transport code: the HTTP adapter (package
// auth/emulator) decodes a request into a Call, runs a method with Do and
// writes the answer or the error in the Identity Toolkit shape.
type Engine struct {
	creds     identity.Credentials
	projectID string
	store     *store
	now       func() time.Time
	blocking  Blocking
}

// NewEngine opens the accounts store under dataDir (in memory when empty);
// projectID is the default project, creds mint and check tokens.
func NewEngine(dataDir, projectID string, creds identity.Credentials) (*Engine, error) {
	st, err := openStore(dataDir)
	if err != nil {
		return nil, err
	}
	return &Engine{creds: creds, projectID: projectID, store: st, now: time.Now}, nil
}

// Publisher takes Auth's events: the functions' trigger table.
type Publisher interface {
	Publish(events ...triggers.Event)
}

// SetPublisher has p told of the accounts each request creates or deletes
// (not those of a project cleared whole), once they are durable, as
// user.create and user.delete events carrying the account as the Admin
// SDK's UserRecord JSON.
func (s *Engine) SetPublisher(p Publisher) {
	s.store.changed = func(changes []AccountChange) {
		events := make([]triggers.Event, 0, len(changes))
		now := s.now()
		for i, c := range changes {
			kind := triggers.UserCreated
			if c.Deleted {
				kind = triggers.UserDeleted
			}
			data, _ := json.Marshal(c.User.Record())
			events = append(events, triggers.Event{ID: fmt.Sprintf("%d-%d", now.UnixNano(), i), Source: triggers.Auth,
				Types: []string{kind}, Project: c.Project, Resource: c.User.LocalID, Time: now, Data: data})
		}
		p.Publish(events...)
	}
}

// Close syncs and closes the accounts log.
func (s *Engine) Close() error { return s.store.close() }

// Call is one API call: its project, whether the owner makes it, its
// parameters (the JSON body or form) and the base URL it came to, which
// e-mailed links point at.
type Call struct {
	Project string
	Admin   bool
	Params  map[string]any
	BaseURL string

	// pending is the blocking function call a run waits for; answers are
	// the answers of those called (blocking.go); localID is the uid a new
	// user of an earlier run of the same call had.
	pending *blockingCall
	answers map[string]answer
	localID string
	// sessionClaims are the extra claims of the session being signed in:
	// a beforeSignIn function's sessionClaims, a custom token's claims, a
	// refreshed session's.
	sessionClaims map[string]any
	// rawUserInfo is the identity provider's user info (JSON) of an IdP
	// sign-in, which blocking functions get.
	rawUserInfo string
}

// methods are the API's methods by name: accounts:NAME of the Identity
// Toolkit, and "token" for the Secure Token API's refresh.
var methods = map[string]func(*Engine, *Call) (map[string]any, error){
	"signUp": (*Engine).signUp, "signInWithPassword": (*Engine).signInWithPassword, "lookup": (*Engine).lookup,
	"update": (*Engine).update, "delete": (*Engine).deleteAccount, "sendOobCode": (*Engine).sendOobCode,
	"resetPassword": (*Engine).resetPassword, "signInWithIdp": (*Engine).signInWithIdp,
	"signInWithCustomToken": (*Engine).signInWithCustomToken, "createAuthUri": (*Engine).createAuthUri,
	"batchDelete": (*Engine).batchDelete, "batchCreate": (*Engine).batchCreate, "query": (*Engine).query,
	"batchGet": (*Engine).batchGet, "token": (*Engine).refresh, "signInWithEmailLink": (*Engine).signInWithEmailLink,
}

// Do runs method name for q as one change of the store: when it succeeds
// its changes are durable before Do returns, when it fails they are
// undone. A failure to save is an Internal error. Do may set q.Project
// (a refresh names its project in the token). A method that needs a
// blocking function's answer is run again once Do has it (blocking.go);
// an answer refusing the request is the request's error.
func (s *Engine) Do(name string, q *Call) (map[string]any, error) {
	m, ok := methods[name]
	if !ok {
		return nil, errs.New(errs.NotFound, "Not Found")
	}
	for {
		var out map[string]any
		apiErr, saveErr := s.store.run(func() (err error) {
			out, err = m(s, q)
			return err
		})
		if saveErr != nil {
			return nil, saveError(saveErr)
		}
		if errors.Is(apiErr, errBlockingPending) {
			if err := s.callBlocking(q); err != nil {
				return nil, err
			}
			continue
		}
		return out, apiErr
	}
}

// Clear removes every account and e-mail of project.
func (s *Engine) Clear(project string) error {
	_, err := s.store.run(func() error {
		s.store.project(project).clear()
		return nil
	})
	if err != nil {
		return saveError(err)
	}
	return nil
}

// saveError is the error of a change the accounts log could not keep: on a
// full disk RESOURCE_EXHAUSTED (as production answers when it is out of a
// resource; the change was undone, and a retry succeeds once there is room),
// else INTERNAL; neither names a file of the server.
func saveError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return errs.New(errs.ResourceExhausted, "RESOURCE_EXHAUSTED : the disk of loupe's data dir is full; the change was not saved")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s accounts log: %w", pe.Op, pe.Err)
	}
	return errs.New(errs.Internal, "INTERNAL : "+err.Error())
}

// Mail is a copy of the e-mails project would have sent, oldest first.
func (s *Engine) Mail(project string) []OOBCode {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return append([]OOBCode{}, s.store.project(project).mail...)
}

// Config is the project's sign-in configuration, as the emulator's
// config endpoint and an export give it.
func Config() map[string]any {
	return map[string]any{"signIn": map[string]any{"allowDuplicateEmails": false},
		"emailPrivacyConfig": map[string]any{"enableImprovedEmailPrivacy": false}}
}

// ErrMalformed marks errors about the request's payload itself, which
// Google's front end answers with a status name beside the message.
var ErrMalformed = errors.New("malformed request")

// malformed is an InvalidArgument error about the payload.
func malformed(msg string) error {
	return &errs.Error{Kind: errs.InvalidArgument, Message: msg, Cause: ErrMalformed}
}

// str is a string parameter; numbers and booleans count as their JSON
// text, so that {"email":42} is an invalid e-mail rather than none.
func (q *Call) str(key string) string {
	switch v := q.Params[key].(type) {
	case string:
		return v
	case nil:
		return ""
	case float64, bool:
		data, _ := json.Marshal(v)
		return string(data)
	default:
		return "[object]"
	}
}

func (q *Call) boolean(key string) bool {
	v, _ := q.Params[key].(bool)
	return v
}

func (q *Call) strings(key string) []string {
	var out []string
	switch v := q.Params[key].(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case string:
		out = append(out, v)
	}
	return out
}

func validEmail(e string) bool {
	a, err := mail.ParseAddress(e)
	return err == nil && a.Address == e && strings.Contains(e, "@")
}

// tokens issues an ID token and a refresh token, recording the login.
func (s *Engine) tokens(q *Call, u *User, provider string) map[string]any {
	now := s.now()
	u.LastLoginAt = millis(now)
	u.LastRefreshAt = now.UTC().Format(time.RFC3339Nano)
	return map[string]any{
		"idToken":      idToken(s.creds, q.Project, u, provider, q.sessionClaims, now),
		"refreshToken": refreshToken(s.creds, q.Project, u.LocalID, provider, q.sessionClaims),
		"expiresIn":    strconv.Itoa(int(tokenLifetime.Seconds())),
	}
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func (s *Engine) newUser(p *project, localID string) (*User, error) {
	if localID == "" {
		localID = randomString(28)
	}
	if p.user(localID) != nil {
		return nil, errDuplicateLocalID
	}
	now := s.now()
	u := &User{LocalID: localID, CreatedAt: millis(now), LastLoginAt: millis(now)}
	p.put(u)
	return u, nil
}

// userInfo is the account as the API answers it (without loupe's own
// fields).
func userInfo(u *User) map[string]any {
	data, _ := json.Marshal(u)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	delete(out, "loupeHashConfig")
	return out
}

package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
)

// maxBody bounds request bodies.
const maxBody = 1 << 20

// projectNumber is the project number token answers carry, firebase-tools' fake one.
const projectNumber = "12345"

// Service is the auth service of loupe serve.
type Service struct {
	env   server.Env
	store *store
	now   func() time.Time
	// Requests, when set, records every Identity Toolkit and Secure Token
	// call from a client (not the owner).
	Requests *requestlog.Log
}

// New opens the accounts store under env.DataDir (in memory when empty).
func New(env server.Env) (*Service, error) {
	st, err := openStore(env.DataDir)
	if err != nil {
		return nil, err
	}
	return &Service{env: env, store: st, now: time.Now}, nil
}

// Name implements server.Service.
func (s *Service) Name() string { return "auth" }

const (
	idt = "/identitytoolkit.googleapis.com/v1"
	sec = "/securetoken.googleapis.com/v1"
)

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	user := map[string]func(*request) (any, *apiError){
		"signUp": s.signUp, "signInWithPassword": s.signInWithPassword, "lookup": s.lookup,
		"update": s.update, "delete": s.deleteAccount, "sendOobCode": s.sendOobCode,
		"resetPassword": s.resetPassword, "signInWithIdp": s.signInWithIdp,
		"signInWithCustomToken": s.signInWithCustomToken, "createAuthUri": s.createAuthUri,
	}
	for verb, h := range user {
		r.HTTP.Handle("POST "+idt+"/accounts:"+verb, s.handle(h))
		r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts:"+verb, s.handle(h))
	}
	r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts", s.handle(s.signUp))
	r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts:batchDelete", s.handle(s.batchDelete))
	r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts:batchCreate", s.handle(s.batchCreate))
	r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts:query", s.handle(s.query))
	r.HTTP.Handle("GET "+idt+"/projects/{project}/accounts:batchGet", s.handle(s.batchGet))
	r.HTTP.Handle("POST "+sec+"/token", s.handle(s.refresh))
	for _, prefix := range []string{idt, sec} {
		r.HTTP.HandleFunc(prefix+"/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, errNotFound) })
	}
	r.HTTP.HandleFunc("GET "+idt+"/projects", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"projectId": s.env.ProjectID, "authorizedDomains": []string{"localhost"}})
	})
	r.HTTP.HandleFunc("GET "+idt+"/recaptchaParams", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"kind": "identitytoolkit#GetRecaptchaParamResponse",
			"recaptchaStoken":  "This-is-a-fake-token__Dont-send-this-to-the-Recaptcha-service__The-Auth-Emulator-does-not-support-Recaptcha",
			"recaptchaSiteKey": "Fake-key__Do-not-send-this-to-Recaptcha_"})
	})
	r.Admin("DELETE /emulator/v1/projects/{project}/accounts", s.clear)
	r.Admin("GET /emulator/v1/projects/{project}/oobCodes", s.listOOBCodes)
	r.Admin("GET /emulator/v1/projects/{project}/config", s.config)
	r.HTTP.HandleFunc("GET /emulator/action", s.actionPage)
	r.HTTP.HandleFunc("POST /emulator/action", s.actionPage)
	r.HTTP.HandleFunc("GET /emulator/auth/handler", s.chooserPage)
	r.HTTP.HandleFunc("GET /emulator/auth/mail", s.mailPage)
}

// request is one API call: its project, caller and JSON body.
type request struct {
	r       *http.Request
	project string
	admin   bool
	body    map[string]any
}

// str is a string parameter; numbers and booleans count as their JSON
// text, so that {"email":42} is an invalid e-mail rather than none.
func (q *request) str(key string) string {
	switch v := q.body[key].(type) {
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
func (q *request) boolean(key string) bool {
	v, _ := q.body[key].(bool)
	return v
}
func (q *request) strings(key string) []string {
	var out []string
	switch v := q.body[key].(type) {
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

// decodeBody reads a request's parameters: a JSON object, or a form for
// application/x-www-form-urlencoded, plus the query string's (but "key")
// where the body has none.
func decodeBody(contentType string, data []byte, query url.Values) (map[string]any, *apiError) {
	body := map[string]any{}
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		form, err := url.ParseQuery(string(data))
		if err != nil {
			return nil, &apiError{status: http.StatusBadRequest, message: "Invalid form payload received. " + err.Error(), reason: "parseError", grpc: "INVALID_ARGUMENT"}
		}
		for k := range form {
			body[k] = form.Get(k)
		}
	} else if len(bytes.TrimSpace(data)) > 0 {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, errBadJSON(err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, errNotAnObject
		}
		body = obj
	}
	for k, v := range query {
		if _, ok := body[k]; !ok && k != "key" {
			body[k] = v[0]
		}
	}
	return body, nil
}

func (s *Service) handle(f func(*request) (any, *apiError)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := &request{r: r, project: r.PathValue("project"), body: map[string]any{}}
		if q.project == "" {
			q.project = s.env.ProjectID
		}
		if p, err := s.env.Credentials.FromAuthorization(r.Header.Get("Authorization")); err == nil && p.Owner {
			q.admin = true
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			s.record(q, nil, errTooLarge)
			writeError(w, errTooLarge)
			return
		}
		var apiErr *apiError
		if q.body, apiErr = decodeBody(r.Header.Get("Content-Type"), data, r.URL.Query()); apiErr != nil {
			s.record(q, nil, apiErr)
			writeError(w, apiErr)
			return
		}
		var out any
		apiErr, saveErr := s.store.run(func() (apiErr *apiError) {
			out, apiErr = f(q)
			return apiErr
		})
		if saveErr != nil {
			apiErr = &apiError{status: http.StatusInternalServerError, message: "INTERNAL : " + saveErr.Error(), grpc: "INTERNAL"}
		}
		s.record(q, out, apiErr)
		if apiErr != nil {
			writeError(w, apiErr)
			return
		}
		writeJSON(w, out)
	})
}

// record puts a client's call in the request log: the method named by the
// path, the caller (the account the call signed in, or whose ID token it
// carries), the body with passwords hidden, and the answer's status.
func (s *Service) record(q *request, out any, apiErr *apiError) {
	if s.Requests == nil || q.admin {
		return
	}
	p := q.r.URL.Path
	method := p[strings.LastIndexByte(p, '/')+1:]
	if _, verb, ok := strings.Cut(method, ":"); ok {
		method = verb
	} else if method == "accounts" {
		method = "signUp"
	}
	e := requestlog.Entry{Service: "auth", Method: method, Path: p, Project: q.project, Outcome: requestlog.Allowed, Status: http.StatusOK}
	if apiErr != nil {
		e.Outcome, e.Status, e.Message = requestlog.Error, apiErr.status, apiErr.message
	}
	body := make(map[string]any, len(q.body))
	for k, v := range q.body {
		if strings.Contains(strings.ToLower(k), "password") {
			v = "••••••"
		}
		body[k] = v
	}
	e.Request = body
	token, _ := q.body["idToken"].(string)
	if m, ok := out.(map[string]any); ok {
		if t, ok := m["idToken"].(string); ok {
			token = t
		}
	}
	if token != "" {
		if who, err := s.env.Credentials.FromAuthorization("Bearer " + token); err == nil && who.Authenticated() {
			e.Caller = &requestlog.Caller{UID: who.UID, Claims: who.Claims}
		}
	}
	s.Requests.Add(e)
}

func validEmail(e string) bool {
	a, err := mail.ParseAddress(e)
	return err == nil && a.Address == e && strings.Contains(e, "@")
}

// tokens issues an ID token and a refresh token, recording the login.
func (s *Service) tokens(q *request, u *User, provider string) map[string]any {
	now := s.now()
	u.LastLoginAt = millis(now)
	u.LastRefreshAt = now.UTC().Format(time.RFC3339Nano)
	return map[string]any{
		"idToken":      idToken(s.env.Credentials, q.project, u, provider, now),
		"refreshToken": refreshToken(s.env.Credentials, q.project, u.LocalID, provider),
		"expiresIn":    strconv.Itoa(int(tokenLifetime.Seconds())),
	}
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

func (s *Service) newUser(p *project, localID string) (*User, *apiError) {
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

func (s *Service) signUp(q *request) (any, *apiError) {
	p := s.store.project(q.project)
	email, password := strings.ToLower(q.str("email")), q.str("password")
	if email != "" && !validEmail(email) {
		return nil, errInvalidEmail
	}
	if !q.admin && (email != "" || password != "") {
		if email == "" {
			return nil, errMissingEmail
		}
		if password == "" {
			return nil, errMissingPassword
		}
	}
	if password != "" && len(password) < 6 {
		return nil, errWeakPassword
	}
	if email != "" && p.byEmail(email) != nil {
		return nil, errEmailExists
	}
	localID := ""
	if q.admin {
		localID = q.str("localId")
	}
	u, err := s.newUser(p, localID)
	if err != nil {
		return nil, err
	}
	u.Email, u.DisplayName, u.PhotoURL = email, q.str("displayName"), q.str("photoUrl")
	if q.admin || email != "" {
		u.EmailVerified = flag(q.admin && q.boolean("emailVerified"))
	}
	if q.admin && q.boolean("disabled") {
		u.Disabled = flag(true)
	}
	provider := "anonymous"
	if password != "" {
		u.setPassword(password, s.now())
		provider = "password"
	}
	if email != "" {
		u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: "password", Email: email, FederatedID: email, RawID: email, DisplayName: u.DisplayName, PhotoURL: u.PhotoURL})
	}
	out := map[string]any{"kind": "identitytoolkit#SignupNewUserResponse", "localId": u.LocalID}
	if email != "" {
		out["email"] = email
	}
	if u.DisplayName != "" {
		out["displayName"] = u.DisplayName
	}
	if q.admin {
		return out, nil
	}
	return merge(out, s.tokens(q, u, provider)), nil
}

func (s *Service) signInWithPassword(q *request) (any, *apiError) {
	p := s.store.project(q.project)
	email, password := strings.ToLower(q.str("email")), q.str("password")
	switch {
	case email == "":
		return nil, errMissingEmail
	case password == "":
		return nil, errMissingPassword
	case !validEmail(email):
		return nil, errInvalidEmail
	}
	u := p.byEmail(email)
	switch {
	case u == nil:
		return nil, errEmailNotFound
	case u.PasswordHash == "" || u.password() != password:
		return nil, errInvalidPassword
	case u.disabled():
		return nil, errUserDisabled
	}
	out := map[string]any{"kind": "identitytoolkit#VerifyPasswordResponse", "registered": true, "localId": u.LocalID, "email": u.Email}
	return merge(out, s.tokens(q, u, "password")), nil
}

// userFromToken resolves the idToken of a request to its user.
func (s *Service) userFromToken(q *request) (*User, parsedToken, *apiError) {
	if q.str("idToken") == "" {
		return nil, parsedToken{}, errMissingIDToken
	}
	tok, ok := parseIDToken(s.env.Credentials, q.str("idToken"))
	if !ok {
		return nil, tok, errInvalidIDToken
	}
	u := s.store.project(q.project).user(tok.uid)
	if u == nil {
		return nil, tok, errUserNotFound
	}
	validSince, _ := strconv.ParseInt(u.ValidSince, 10, 64)
	if tok.iat < validSince || tok.exp < s.now().Unix() {
		return nil, tok, errTokenExpired
	}
	if u.disabled() {
		return nil, tok, errUserDisabled
	}
	return u, tok, nil
}

// target is the user an update or delete is about: the idToken's user, or
// for the owner a localId.
func (s *Service) target(q *request) (*User, parsedToken, *apiError) {
	if q.admin && q.str("localId") != "" {
		u := s.store.project(q.project).user(q.str("localId"))
		if u == nil {
			return nil, parsedToken{}, errUserNotFound
		}
		return u, parsedToken{}, nil
	}
	if q.str("idToken") == "" {
		if q.admin {
			return nil, parsedToken{}, errMissingLocalID
		}
		return nil, parsedToken{}, errMissingIDToken
	}
	return s.userFromToken(q)
}

func userInfo(u *User) map[string]any {
	data, _ := json.Marshal(u)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

func (s *Service) lookup(q *request) (any, *apiError) {
	p := s.store.project(q.project)
	out := map[string]any{"kind": "identitytoolkit#GetAccountInfoResponse"}
	var users []map[string]any
	if q.admin && q.body["idToken"] == nil {
		seen := map[string]bool{}
		add := func(u *User) {
			if u != nil && !seen[u.LocalID] {
				seen[u.LocalID] = true
				users = append(users, userInfo(u))
			}
		}
		for _, id := range q.strings("localId") {
			add(p.user(id))
		}
		for _, e := range q.strings("email") {
			add(p.byEmail(e))
		}
	} else {
		u, _, err := s.userFromToken(q)
		if err != nil {
			return nil, err
		}
		users = append(users, userInfo(u))
	}
	if len(users) > 0 {
		out["users"] = users
	}
	return out, nil
}

func (s *Service) update(q *request) (any, *apiError) {
	u, tok, err := s.target(q)
	if err != nil {
		return nil, err
	}
	p := s.store.project(q.project)
	now := s.now()
	newTokens := false
	if v, ok := q.body["email"].(string); ok && v != "" {
		email := strings.ToLower(v)
		if !validEmail(email) {
			return nil, errInvalidEmail
		}
		if other := p.byEmail(email); other != nil && other != u {
			return nil, errEmailExists
		}
		u.Email = email
		if pi := u.provider("password"); pi != nil {
			pi.Email, pi.FederatedID, pi.RawID = email, email, email
		}
		newTokens = true
	}
	if v, ok := q.body["password"].(string); ok && v != "" {
		if len(v) < 6 {
			return nil, errWeakPassword
		}
		u.setPassword(v, now)
		if u.Email != "" && u.provider("password") == nil {
			u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: "password", Email: u.Email, FederatedID: u.Email, RawID: u.Email})
		}
		newTokens = true
	}
	if v, ok := q.body["displayName"].(string); ok {
		u.DisplayName = v
	}
	if v, ok := q.body["photoUrl"].(string); ok {
		u.PhotoURL = v
	}
	for _, attr := range q.strings("deleteAttribute") {
		switch attr {
		case "DISPLAY_NAME":
			u.DisplayName = ""
		case "PHOTO_URL":
			u.PhotoURL = ""
		}
	}
	if q.admin {
		if v, ok := q.body["disableUser"].(bool); ok {
			u.Disabled = flag(v)
		}
		if v, ok := q.body["emailVerified"].(bool); ok {
			u.EmailVerified = flag(v)
		}
		if v, ok := q.body["customAttributes"].(string); ok {
			var claims map[string]any
			if v != "" && json.Unmarshal([]byte(v), &claims) != nil {
				return nil, errInvalidClaims
			}
			u.CustomAttributes = v
			if v == "{}" {
				u.CustomAttributes = ""
			}
		}
	}
	for i := range u.ProviderUserInfo {
		if u.ProviderUserInfo[i].ProviderID == "password" {
			u.ProviderUserInfo[i].DisplayName, u.ProviderUserInfo[i].PhotoURL = u.DisplayName, u.PhotoURL
		}
	}
	out := map[string]any{"kind": "identitytoolkit#SetAccountInfoResponse", "localId": u.LocalID, "email": u.Email,
		"displayName": u.DisplayName, "photoUrl": u.PhotoURL, "providerUserInfo": append([]ProviderInfo{}, u.ProviderUserInfo...),
		"passwordHash": u.PasswordHash, "emailVerified": u.verified()}
	if newTokens && !q.admin {
		provider := tok.provider
		if provider == "" {
			provider = "password"
		}
		merge(out, s.tokens(q, u, provider))
	}
	return out, nil
}

func (s *Service) deleteAccount(q *request) (any, *apiError) {
	u, _, err := s.target(q)
	if err != nil {
		return nil, err
	}
	s.store.project(q.project).remove(u.LocalID)
	return map[string]any{"kind": "identitytoolkit#DeleteAccountResponse"}, nil
}

func (s *Service) batchDelete(q *request) (any, *apiError) {
	p := s.store.project(q.project)
	for _, id := range q.strings("localIds") {
		p.remove(id)
	}
	return map[string]any{}, nil
}

func (s *Service) batchCreate(q *request) (any, *apiError) {
	p := s.store.project(q.project)
	raw, _ := json.Marshal(q.body["users"])
	var users []*User
	if err := json.Unmarshal(raw, &users); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, message: "Invalid JSON payload received. users must be a list of accounts", grpc: "INVALID_ARGUMENT"}
	}
	var failed []map[string]any
	for i, u := range users {
		if u.LocalID == "" {
			failed = append(failed, map[string]any{"index": i, "message": "localId is missing"})
			continue
		}
		if u.CreatedAt == "" {
			u.CreatedAt = millis(s.now())
		}
		u.Email = strings.ToLower(u.Email)
		p.put(u)
	}
	out := map[string]any{}
	if failed != nil {
		out["error"] = failed
	}
	return out, nil
}

func (s *Service) batchGet(q *request) (any, *apiError) {
	max, _ := strconv.Atoi(q.str("maxResults"))
	if max <= 0 || max > 1000 {
		max = 1000
	}
	after := q.str("nextPageToken")
	var page []map[string]any
	next := ""
	for _, u := range s.store.project(q.project).sorted() {
		if u.LocalID <= after {
			continue
		}
		if len(page) == max {
			next = page[len(page)-1]["localId"].(string)
			break
		}
		page = append(page, userInfo(u))
	}
	out := map[string]any{"kind": "identitytoolkit#DownloadAccountResponse"}
	if page != nil {
		out["users"] = page
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

func (s *Service) query(q *request) (any, *apiError) {
	var users []map[string]any
	for _, u := range s.store.project(q.project).sorted() {
		users = append(users, userInfo(u))
	}
	return map[string]any{"recordsCount": strconv.Itoa(len(users)), "userInfo": users}, nil
}

func (s *Service) sendOobCode(q *request) (any, *apiError) {
	p := s.store.project(q.project)
	var u *User
	mode := ""
	switch q.str("requestType") {
	case "PASSWORD_RESET":
		email := strings.ToLower(q.str("email"))
		if email == "" {
			return nil, errMissingEmail
		}
		if u = p.byEmail(email); u == nil {
			return nil, errEmailNotFound
		}
		mode = "resetPassword"
	case "VERIFY_EMAIL":
		var err *apiError
		if u, _, err = s.target(q); err != nil {
			return nil, err
		}
		if u.Email == "" {
			return nil, errMissingEmail
		}
		mode = "verifyEmail"
	case "":
		return nil, errMissingReqType
	default:
		return nil, badRequest("INVALID_REQ_TYPE : Unsupported request type " + q.str("requestType"))
	}
	code := randomString(50)
	link := baseURL(q.r) + "/emulator/action?mode=" + mode + "&lang=en&oobCode=" + code + "&apiKey=fake-api-key"
	if c := q.str("continueUrl"); c != "" {
		link += "&continueUrl=" + url.QueryEscape(c)
	}
	p.send(OOBCode{Email: u.Email, RequestType: q.str("requestType"), OOBCode: code, OOBLink: link, SentAt: s.now().UTC(), ContinueURL: q.str("continueUrl")}, u.LocalID)
	return map[string]any{"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": u.Email}, nil
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// useCode finds the user and mail of an out-of-band code.
func (s *Service) useCode(p *project, code string) (*User, *OOBCode) {
	id, ok := p.codes[code]
	if !ok {
		return nil, nil
	}
	for i := range p.mail {
		if p.mail[i].OOBCode == code {
			return p.user(id), &p.mail[i]
		}
	}
	return nil, nil
}

func (s *Service) resetPassword(q *request) (any, *apiError) {
	if q.str("oobCode") == "" {
		return nil, errMissingOOBCode
	}
	p := s.store.project(q.project)
	u, m := s.useCode(p, q.str("oobCode"))
	if u == nil || m.RequestType != "PASSWORD_RESET" {
		return nil, errInvalidOOBCode
	}
	out := map[string]any{"kind": "identitytoolkit#ResetPasswordResponse", "requestType": "PASSWORD_RESET", "email": u.Email}
	if pw := q.str("newPassword"); pw != "" {
		if len(pw) < 6 {
			return nil, errWeakPassword
		}
		u.setPassword(pw, s.now())
		u.EmailVerified = flag(true)
		p.useUp(q.str("oobCode"))
	}
	return out, nil
}

// idpClaims reads the id_token of a signInWithIdp request, from postBody or
// requestUri: raw JSON claims, or an unsigned JWT. It returns the claims,
// which always have a sub, the provider and the raw id_token.
func idpClaims(creds identity.Credentials, requestURI, postBody string) (map[string]any, string, string, *apiError) {
	params := url.Values{}
	if u, err := url.Parse(requestURI); err == nil {
		params = u.Query()
		if frag, err := url.ParseQuery(u.Fragment); err == nil {
			for k, v := range frag {
				params[k] = v
			}
		}
	}
	if pb, err := url.ParseQuery(strings.TrimPrefix(postBody, "&")); err == nil {
		for k, v := range pb {
			params[k] = v
		}
	}
	provider := params.Get("providerId")
	if provider == "" {
		provider = "google.com"
	}
	raw := params.Get("id_token")
	var claims map[string]any
	if strings.HasPrefix(strings.TrimSpace(raw), "{") {
		if creds.IsStrict() || json.Unmarshal([]byte(raw), &claims) != nil {
			return nil, provider, raw, errInvalidIdp(raw)
		}
	} else if c, err := creds.DecodeJWT(raw); err == nil {
		claims = c
	} else {
		return nil, provider, raw, errInvalidIdp(raw)
	}
	if sub, _ := claims["sub"].(string); sub == "" {
		return nil, provider, raw, badRequest("INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing sub claim.")
	}
	return claims, provider, raw, nil
}

func (s *Service) signInWithIdp(q *request) (any, *apiError) {
	if q.str("requestUri") == "" {
		return nil, errMissingRequestURI
	}
	claims, provider, rawToken, err := idpClaims(s.env.Credentials, q.str("requestUri"), q.str("postBody"))
	if err != nil {
		return nil, err
	}
	p := s.store.project(q.project)
	sub, _ := claims["sub"].(string)
	email, _ := claims["email"].(string)
	email = strings.ToLower(email)
	name, _ := claims["name"].(string)
	picture, _ := claims["picture"].(string)
	verified, _ := claims["email_verified"].(bool)
	u := p.byProvider(provider, sub)
	isNew := false
	if u == nil && email != "" {
		u = p.byEmail(email)
	}
	if u == nil {
		isNew = true
		if u, err = s.newUser(p, ""); err != nil {
			return nil, err
		}
		u.Email, u.DisplayName, u.PhotoURL, u.EmailVerified = email, name, picture, flag(verified)
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	if u.provider(provider) == nil {
		u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: provider, RawID: sub,
			FederatedID: "https://accounts.google.com/" + sub, Email: email, DisplayName: name, PhotoURL: picture})
	}
	rawInfo, _ := json.Marshal(claims)
	out := map[string]any{
		"kind": "identitytoolkit#VerifyAssertionResponse", "providerId": provider,
		"federatedId": "https://accounts.google.com/" + sub, "localId": u.LocalID, "email": u.Email,
		"emailVerified": u.verified(), "displayName": u.DisplayName, "fullName": u.DisplayName, "context": "",
		"rawUserInfo": string(rawInfo), "oauthIdToken": rawToken,
		"oauthAccessToken": "FirebaseAuthEmulatorFakeAccessToken_" + provider, "isNewUser": isNew,
	}
	if u.PhotoURL != "" {
		out["photoUrl"] = u.PhotoURL
	}
	return merge(out, s.tokens(q, u, provider)), nil
}

func (s *Service) signInWithCustomToken(q *request) (any, *apiError) {
	if q.str("token") == "" {
		return nil, errMissingCustom
	}
	claims, err := s.env.Credentials.DecodeJWT(q.str("token"))
	if err != nil {
		return nil, errInvalidCustom
	}
	uid, _ := claims["uid"].(string)
	if uid == "" {
		return nil, badRequest("INVALID_CUSTOM_TOKEN : custom token is missing the uid claim")
	}
	p := s.store.project(q.project)
	u, isNew := p.user(uid), false
	if u == nil {
		isNew = true
		var apiErr *apiError
		if u, apiErr = s.newUser(p, uid); apiErr != nil {
			return nil, apiErr
		}
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	out := map[string]any{"kind": "identitytoolkit#VerifyCustomTokenResponse", "isNewUser": isNew}
	return merge(out, s.tokens(q, u, "custom")), nil
}

func (s *Service) createAuthUri(q *request) (any, *apiError) {
	email := strings.ToLower(q.str("identifier"))
	if email == "" {
		return nil, errMissingIdentifier
	}
	if !validEmail(email) {
		return nil, errInvalidIdentifier
	}
	u := s.store.project(q.project).byEmail(email)
	methods := []string{}
	if u != nil {
		for _, pi := range u.ProviderUserInfo {
			methods = append(methods, pi.ProviderID)
		}
	}
	return map[string]any{"kind": "identitytoolkit#CreateAuthUriResponse", "registered": u != nil, "sessionId": randomString(27),
		"allProviders": methods, "signinMethods": methods}, nil
}

func (s *Service) refresh(q *request) (any, *apiError) {
	if q.str("grant_type") != "refresh_token" {
		return nil, errInvalidGrantType
	}
	if q.str("refresh_token") == "" {
		return nil, errMissingRefresh
	}
	rt, ok := parseRefreshToken(s.env.Credentials, q.str("refresh_token"))
	if !ok {
		return nil, errInvalidRefresh
	}
	q.project = rt.ProjectID
	u := s.store.project(rt.ProjectID).user(rt.LocalID)
	if u == nil {
		return nil, errInvalidRefresh
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	t := s.tokens(q, u, rt.Provider)
	return map[string]any{"id_token": t["idToken"], "access_token": t["idToken"], "expires_in": t["expiresIn"],
		"refresh_token": t["refreshToken"], "token_type": "Bearer", "user_id": u.LocalID, "project_id": projectNumber}, nil
}

func (s *Service) clear(w http.ResponseWriter, r *http.Request) {
	_, err := s.store.run(func() *apiError {
		s.store.project(r.PathValue("project")).clear()
		return nil
	})
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, message: "INTERNAL : " + err.Error(), grpc: "INTERNAL"})
		return
	}
	writeJSON(w, map[string]any{})
}

func (s *Service) listOOBCodes(w http.ResponseWriter, r *http.Request) {
	s.store.mu.Lock()
	codes := append([]OOBCode{}, s.store.project(r.PathValue("project")).mail...)
	s.store.mu.Unlock()
	writeJSON(w, map[string]any{"oobCodes": codes})
}

func (s *Service) config(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"signIn": map[string]any{"allowDuplicateEmails": false},
		"emailPrivacyConfig": map[string]any{"enableImprovedEmailPrivacy": false}})
}

// ExportDir is the folder of an export that holds the accounts.
const ExportDir = "auth_export"

// Export implements server.Exporter: accounts.json and config.json in
// firebase-tools' format, for the default project.
func (s *Service) Export(_ context.Context, dir string) error {
	out := filepath.Join(dir, ExportDir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	s.store.mu.Lock()
	users := s.store.project(s.env.ProjectID).sorted()
	s.store.mu.Unlock()
	accounts, _ := json.MarshalIndent(map[string]any{"kind": "identitytoolkit#DownloadAccountResponse", "users": users}, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "accounts.json"), append(accounts, '\n'), 0o644); err != nil {
		return err
	}
	config, _ := json.MarshalIndent(map[string]any{"signIn": map[string]any{"allowDuplicateEmails": false}, "emailPrivacyConfig": map[string]any{"enableImprovedEmailPrivacy": false}}, "", "  ")
	return os.WriteFile(filepath.Join(out, "config.json"), append(config, '\n'), 0o644)
}

// Import implements server.Importer: the default project's accounts become
// those of dir/auth_export/accounts.json (nothing changes without the file).
func (s *Service) Import(_ context.Context, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, ExportDir, "accounts.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var file struct {
		Users []*User `json:"users"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return fmt.Errorf("auth_export/accounts.json: %w", err)
	}
	_, err = s.store.run(func() *apiError {
		p := s.store.project(s.env.ProjectID)
		p.clear()
		for _, u := range file.Users {
			if u.LocalID != "" {
				p.put(u)
			}
		}
		return nil
	})
	return err
}

// Close implements server.Closer: it syncs and closes the accounts log.
func (s *Service) Close() error { return s.store.close() }

// Open implements server.Opener: it loads --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.ImportDir == "" {
		return nil
	}
	return s.Import(ctx, s.env.ImportDir)
}

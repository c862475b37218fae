// Package emulator serves Auth's engine over HTTP as loupe serve's auth
// service: the Identity Toolkit and Secure Token REST APIs as the Firebase
// JS SDK and the Admin SDKs call them, the emulator's admin endpoints, and
// the small pages behind e-mailed links and the local Google sign-in
// (pages.go). It is thin: it decodes a request into an auth.Call, runs the
// engine's method and writes the answer, or the error in the Identity
// Toolkit shape, and records client calls in the request log.
package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/loupe-dev/loupe/internal/auth"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
)

// maxBody bounds request bodies.
const maxBody = 1 << 20

// Service is the auth service of loupe serve.
type Service struct {
	env    server.Env
	engine *auth.Engine
	// Requests, when set, records every Identity Toolkit and Secure Token
	// call from a client (not the owner).
	Requests *requestlog.Log
}

// SetFunctions installs the project's Auth blocking functions and has
// accounts created and deleted published to the trigger table.
func (s *Service) SetFunctions(b auth.Blocking, p auth.Publisher) {
	s.engine.SetBlocking(b)
	s.engine.SetPublisher(p)
}

// New opens the accounts store under env.DataDir (in memory when empty).
func New(env server.Env) (*Service, error) {
	e, err := auth.NewEngine(env.DataDir, env.ProjectID, env.Credentials)
	if err != nil {
		return nil, err
	}
	return &Service{env: env, engine: e}, nil
}

// Name implements server.Service.
func (s *Service) Name() string { return "auth" }

const (
	idt   = "/identitytoolkit.googleapis.com/v1"
	idtV2 = "/identitytoolkit.googleapis.com/v2"
	sec   = "/securetoken.googleapis.com/v1"
)

// userMethods are the accounts:VERB methods a client calls, with or
// without a project in the path.
var userMethods = []string{"signUp", "signInWithPassword", "lookup", "update", "delete", "sendOobCode",
	"resetPassword", "signInWithIdp", "signInWithCustomToken", "createAuthUri", "signInWithEmailLink"}

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	for _, verb := range userMethods {
		r.HTTP.Handle("POST "+idt+"/accounts:"+verb, s.handle(verb))
		r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts:"+verb, s.handle(verb))
	}
	r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts", s.handle("signUp"))
	for _, verb := range []string{"batchDelete", "batchCreate", "query"} {
		r.HTTP.Handle("POST "+idt+"/projects/{project}/accounts:"+verb, s.handle(verb))
	}
	r.HTTP.Handle("GET "+idt+"/projects/{project}/accounts:batchGet", s.handle("batchGet"))
	r.HTTP.Handle("POST "+sec+"/token", s.handle("token"))
	r.HTTP.HandleFunc("GET "+idtV2+"/projects/{project}/config", s.projectConfig)
	for _, prefix := range []string{idt, sec} {
		r.HTTP.HandleFunc(prefix+"/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, errNotFound) })
	}
	r.HTTP.HandleFunc("GET "+idt+"/projects", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, http.StatusOK, map[string]any{"projectId": s.env.ProjectID, "authorizedDomains": []string{"localhost"}})
	})
	r.HTTP.HandleFunc("GET "+idt+"/recaptchaParams", func(w http.ResponseWriter, r *http.Request) {
		httpjson.Write(w, http.StatusOK, map[string]any{"kind": "identitytoolkit#GetRecaptchaParamResponse",
			"recaptchaStoken":  "This-is-a-fake-token__Dont-send-this-to-the-Recaptcha-service__The-Auth-Emulator-does-not-support-Recaptcha",
			"recaptchaSiteKey": "Fake-key__Do-not-send-this-to-Recaptcha_"})
	})
	r.Admin("DELETE /emulator/v1/projects/{project}/accounts", s.clear)
	r.Admin("GET /emulator/v1/projects/{project}/oobCodes", s.listOOBCodes)
	r.Admin("GET /emulator/v1/projects/{project}/users", s.listUsers)
	r.Admin("GET /emulator/v1/projects/{project}/users:changes", s.userChanges)
	r.Admin("GET /emulator/v1/projects/{project}/config", s.config)
	r.HTTP.HandleFunc("GET /emulator/action", s.actionPage)
	r.HTTP.HandleFunc("POST /emulator/action", s.actionPage)
	r.HTTP.HandleFunc("GET /emulator/auth/handler", s.chooserPage)
	r.Admin("GET /emulator/auth/mail", s.mailPage)
}

// decodeBody reads the parameters of a call to method: a JSON object, or a
// form for application/x-www-form-urlencoded, whose fields must be the
// request message's (checkFields), plus the query string's (but "key")
// where the body has none.
func decodeBody(method, contentType string, data []byte, query url.Values) (map[string]any, *apiError) {
	body := map[string]any{}
	form := strings.HasPrefix(contentType, "application/x-www-form-urlencoded")
	if form {
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
	if e := checkFields(method, body, form); e != nil {
		return nil, e
	}
	if e := checkParameters(method, query); e != nil {
		return nil, e
	}
	for k, v := range query {
		if _, ok := body[k]; !ok && k != "key" {
			body[k] = v[0]
		}
	}
	return body, nil
}

// handle serves the engine's method name.
func (s *Service) handle(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := &auth.Call{Project: r.PathValue("project"), Params: map[string]any{}, BaseURL: baseURL(r)}
		if q.Project == "" {
			q.Project = s.env.ProjectID
		}
		header := r.Header.Get("Authorization")
		who, authErr := s.env.Credentials.Authenticate(header, q.Project)
		q.Admin = authErr == nil && who.Owner
		if r.PathValue("project") != "" && !q.Admin {
			// Methods of a named project are the Admin SDKs': the
			// official emulator answers them only with its owner
			// credential, production only with an OAuth token.
			e := errNeedsOwner
			if header != "" && authErr != nil {
				e = errBadCredential
			}
			s.record(r, q, nil, e)
			writeError(w, e)
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			s.record(r, q, nil, errTooLarge)
			writeError(w, errTooLarge)
			return
		}
		var apiErr *apiError
		if q.Params, apiErr = decodeBody(name, r.Header.Get("Content-Type"), data, r.URL.Query()); apiErr != nil {
			s.record(r, q, nil, apiErr)
			writeError(w, apiErr)
			return
		}
		out, err := s.engine.Do(name, q)
		if err != nil {
			apiErr = wireError(err)
		}
		s.record(r, q, out, apiErr)
		if apiErr != nil {
			writeError(w, apiErr)
			return
		}
		httpjson.Write(w, http.StatusOK, out)
	})
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// record puts a client's call in the request log: the method named by the
// path, the caller (the account the call signed in, or whose ID token it
// carries), the body with passwords hidden, and the answer's status.
func (s *Service) record(r *http.Request, q *auth.Call, out map[string]any, apiErr *apiError) {
	if s.Requests == nil || q.Admin {
		return
	}
	p := r.URL.Path
	method := p[strings.LastIndexByte(p, '/')+1:]
	if _, verb, ok := strings.Cut(method, ":"); ok {
		method = verb
	} else if method == "accounts" {
		method = "signUp"
	}
	e := requestlog.Entry{Service: "auth", Method: method, Path: p, Project: q.Project, Outcome: requestlog.Allowed, Status: http.StatusOK}
	if apiErr != nil {
		e.Outcome, e.Status, e.Message = requestlog.Error, apiErr.status, apiErr.message
	}
	body := make(map[string]any, len(q.Params))
	for k, v := range q.Params {
		if strings.Contains(strings.ToLower(k), "password") {
			v = "••••••"
		}
		body[k] = v
	}
	e.Request = body
	token, _ := q.Params["idToken"].(string)
	if t, ok := out["idToken"].(string); ok {
		token = t
	}
	if token != "" {
		if who, err := s.env.Credentials.Authenticate("Bearer "+token, q.Project); err == nil && who.Authenticated() {
			e.Caller = &requestlog.Caller{UID: who.UID, Claims: who.Claims}
		}
	}
	s.Requests.Add(e)
}

func (s *Service) clear(w http.ResponseWriter, r *http.Request) {
	if err := s.engine.Clear(r.PathValue("project")); err != nil {
		writeError(w, wireError(err))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// listUsers answers the console's page of users: ?q= searches uid, e-mail,
// display name and phone, ?pageToken= continues after a page, ?pageSize=
// (at most 1000, 100 when absent) bounds it.
func (s *Service) listUsers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := strconv.Atoi(q.Get("pageSize"))
	if q.Get("pageSize") == "" {
		size, err = 100, nil
	}
	if err != nil || size < 1 || size > auth.MaxUserPage {
		httpjson.Error(w, errs.New(errs.InvalidArgument, fmt.Sprintf("pageSize must be a number from 1 to %d", auth.MaxUserPage)))
		return
	}
	httpjson.Write(w, http.StatusOK, s.engine.Users(r.PathValue("project"), q.Get("q"), q.Get("pageToken"), size))
}

// userChanges answers {"version": N}, Auth's change counter, once it differs
// from ?since= (at once without it), or after a long poll unchanged.
func (s *Service) userChanges(w http.ResponseWriter, r *http.Request) {
	httpjson.ServeChanges(w, r, s.engine.Changes())
}

func (s *Service) listOOBCodes(w http.ResponseWriter, r *http.Request) {
	httpjson.Write(w, http.StatusOK, map[string]any{"oobCodes": s.engine.Mail(r.PathValue("project"))})
}

// projectConfig answers the admin API's project config (what the Admin
// SDKs' GetProjectConfig reads), with the password hash parameters under
// signIn.hashConfig; like every admin method it needs the owner.
func (s *Service) projectConfig(w http.ResponseWriter, r *http.Request) {
	header := r.Header.Get("Authorization")
	if who, err := s.env.Credentials.Authenticate(header, ""); err != nil || !who.Owner {
		e := errNeedsOwner
		if header != "" && err != nil {
			e = errBadCredential
		}
		writeError(w, e)
		return
	}
	httpjson.Write(w, http.StatusOK, s.engine.ProjectConfig(r.PathValue("project")))
}

func (s *Service) config(w http.ResponseWriter, _ *http.Request) {
	httpjson.Write(w, http.StatusOK, auth.Config())
}

// Export implements server.Exporter: accounts.json and config.json in
// firebase-tools' format, for the default project.
func (s *Service) Export(ctx context.Context, dir string) error { return s.engine.Export(ctx, dir) }

// Import implements server.Importer: the default project's accounts become
// those of dir/auth_export/accounts.json (nothing changes without the file).
func (s *Service) Import(ctx context.Context, dir string) error { return s.engine.Import(ctx, dir) }

// Close implements server.Closer: it syncs and closes the accounts log.
func (s *Service) Close() error { return s.engine.Close() }

// Open implements server.Opener: it loads --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.ImportDir == "" {
		return nil
	}
	return s.Import(ctx, s.env.ImportDir)
}

// apiError is an error in the Identity Toolkit's wire shape: the HTTP
// status, the message the JS SDK maps to its error codes, the reason
// ("invalid" when "") and, for errors about the request itself (bad JSON,
// unknown method), the gRPC status name Google's front end adds.
type apiError struct {
	status  int
	message string
	reason  string
	grpc    string
}

// wireError maps an engine error to the wire: its kind gives the status;
// payload errors and internal ones also carry the status name.
func wireError(err error) *apiError {
	kind := errs.KindOf(err)
	_, name, status := kind.Status()
	e := &apiError{status: status, message: err.Error()}
	if kind == errs.Internal || kind == errs.ResourceExhausted || errors.Is(err, auth.ErrMalformed) {
		e.grpc = name
	}
	return e
}

// The errors about a request that never reaches the engine.
var (
	errNotAnObject = &apiError{status: http.StatusBadRequest, message: "Invalid JSON payload received.  must be object", grpc: "INVALID_ARGUMENT"}
	errTooLarge    = &apiError{status: http.StatusRequestEntityTooLarge, message: "Request payload is too large.", grpc: "INVALID_ARGUMENT"}
	errNotFound    = &apiError{status: http.StatusNotFound, message: "Not Found", reason: "notFound", grpc: "NOT_FOUND"}
	// errNeedsOwner is the official emulator's answer to a method of a
	// named project called without its owner credential.
	errNeedsOwner = &apiError{status: http.StatusBadRequest, message: "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id."}
	// errBadCredential is production's answer to a credential it refuses
	// (in strict mode: the local owner credential, a token loupe did not sign).
	errBadCredential = &apiError{status: http.StatusUnauthorized, reason: "unauthorized", grpc: "UNAUTHENTICATED",
		message: identity.InvalidCredentialMessage}
)

// errBadJSON words a JSON syntax error as Node's parser does, which is
// what firebase-tools answers.
func errBadJSON(err error) *apiError {
	detail := "Unexpected end of JSON input"
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) && syntax.Error() != "unexpected end of JSON input" && !errors.Is(err, io.ErrUnexpectedEOF) {
		detail = fmt.Sprintf("Unexpected token in JSON at position %d", max(syntax.Offset-1, 0))
	}
	return &apiError{status: http.StatusBadRequest, message: "Invalid JSON payload received. " + detail, reason: "parseError", grpc: "INVALID_ARGUMENT"}
}

func writeError(w http.ResponseWriter, e *apiError) {
	entry := map[string]string{"message": e.message, "reason": e.reason}
	if e.reason == "" {
		entry["reason"], entry["domain"] = "invalid", "global"
	} else if e.reason != "notFound" {
		entry["domain"] = "global"
	}
	body := map[string]any{"code": e.status, "message": e.message, "errors": []map[string]string{entry}}
	if e.grpc != "" {
		body["status"] = e.grpc
	}
	httpjson.Write(w, e.status, map[string]any{"error": body})
}

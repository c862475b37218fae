// Package messaging stands in for Firebase Cloud Messaging. It serves the
// FCM HTTP v1 send endpoint that the Admin SDK's messaging client calls
// (pointed here with option.WithEndpoint), and delivers messages to browsers
// without Google's push service: a page gets a registration token from
// loupe and receives its messages over server-sent events. The app's service
// worker holds a stream of its own for the same token (every open stream
// gets each message), so that it can show a notification when no page is
// focused or all are closed, as FCM's push would.
//
// Endpoints:
//
//	POST   /v1/projects/{p}/messages:send                  FCM v1 send ({"message":…, "validate_only":…})
//	POST   /emulator/v1/projects/{p}/messaging/tokens      issue a token → {"token":…} to the caller
//	DELETE /emulator/v1/projects/{p}/messaging/tokens/{t}  unregister a token
//	GET    /emulator/v1/projects/{p}/messaging/stream?token=t   SSE: one event per message, data is the
//	                                                       FCM JS SDK's MessagePayload {notification, data, fcmOptions, from, messageId}
//	GET    /emulator/v1/projects/{p}/messaging/messages    the inbox: every message sent (an admin endpoint)
//
// A message to a token loupe never issued, or one unregistered, fails with
// FCM's UNREGISTERED error, so senders clean up stale tokens as in production.
//
// A token belongs to whoever it was issued to (the user of the request's ID
// token; in local mode a caller without one). Each keeps at most
// maxTokensPerOwner: issuing one more unregisters their oldest, as a
// browser's new registration replaces its old one. In strict mode issuing
// needs a user's ID token or the admin credential, and unregistering a
// token needs its own user's or the admin credential.
package messaging

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
)

// Sent is one message in the inbox.
type Sent struct {
	Name    string          `json:"name"`
	Token   string          `json:"token,omitempty"`
	Topic   string          `json:"topic,omitempty"`
	Message json.RawMessage `json:"message"`
	SentAt  time.Time       `json:"sentAt"`
}

// Service is the messaging service of loupe serve.
type Service struct {
	creds  identity.Credentials
	mu     sync.Mutex
	tokens map[string]*registration // token → its owner and open streams
	// owned lists each owner's tokens, oldest first.
	owned map[string][]string
	inbox map[string][]Sent // project → messages
}

// registration is one issued token.
type registration struct {
	owner   string
	streams map[chan []byte]bool
}

// maxTokensPerOwner is how many tokens one owner holds at most.
const maxTokensPerOwner = 20

// maxInbox is how many messages the inbox keeps per project, the newest.
const maxInbox = 1000

// adminOwner owns the tokens issued to the admin credential.
const adminOwner = "(admin)"

// New builds the service; state lives in memory (tokens are re-issued by
// pages). In strict mode (creds) sending needs the admin credential, as FCM
// needs an OAuth token.
func New(creds identity.Credentials) *Service {
	return &Service{creds: creds, tokens: map[string]*registration{}, owned: map[string][]string{}, inbox: map[string][]Sent{}}
}

// Name implements server.Service.
func (s *Service) Name() string { return "messaging" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("POST /v1/projects/{project}/messages:send", s.send)
	r.HTTP.HandleFunc("POST /emulator/v1/projects/{project}/messaging/tokens", s.issue)
	r.HTTP.HandleFunc("DELETE /emulator/v1/projects/{project}/messaging/tokens/{token}", s.unregister)
	r.HTTP.HandleFunc("GET /emulator/v1/projects/{project}/messaging/stream", s.stream)
	r.Admin("GET /emulator/v1/projects/{project}/messaging/messages", s.list)
}

// fcmError writes a google.rpc error with an FcmError detail, as FCM does.
func fcmError(w http.ResponseWriter, status int, rpcStatus, code, msg string) {
	httpjson.Write(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": rpcStatus,
		"details": []map[string]string{{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}},
	}})
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// message is the part of an FCM v1 message loupe reads.
type message struct {
	Token        string            `json:"token"`
	Topic        string            `json:"topic"`
	Condition    string            `json:"condition"`
	Data         map[string]string `json:"data"`
	Notification *struct {
		Title string `json:"title"`
		Body  string `json:"body"`
		Image string `json:"image"`
	} `json:"notification"`
	Webpush *struct {
		Notification map[string]any `json:"notification"`
		FcmOptions   *struct {
			Link string `json:"link"`
		} `json:"fcm_options"`
	} `json:"webpush"`
}

// checkFields refuses a field the FCM v1 send request or its message lacks,
// as FCM's front end does.
func checkFields(body []byte) error {
	var top, msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return err
	}
	if err := httpjson.CheckFields(top, "", "message", "validateOnly"); err != nil {
		return err
	}
	if err := json.Unmarshal(top["message"], &msg); err != nil {
		return err
	}
	return httpjson.CheckFields(msg, "message", "name", "data", "notification", "android", "webpush", "apns", "fcmOptions", "token", "topic", "condition")
}

func (s *Service) send(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	if err := s.creds.RequireAdmin(r.Header.Get("Authorization"), project); err != nil {
		httpjson.Error(w, err)
		return
	}
	var req struct {
		Message      json.RawMessage `json:"message"`
		ValidateOnly bool            `json:"validate_only"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	var m message
	if err == nil {
		err = json.Unmarshal(req.Message, &m)
	}
	if err != nil || len(req.Message) == 0 {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Request contains an invalid argument.")
		return
	}
	if err := checkFields(body); err != nil {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", err.Error())
		return
	}
	targets := 0
	for _, t := range []string{m.Token, m.Topic, m.Condition} {
		if t != "" {
			targets++
		}
	}
	if targets != 1 {
		fcmError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Exactly one of token, topic or condition must be specified.")
		return
	}
	s.mu.Lock()
	_, registered := s.tokens[m.Token]
	s.mu.Unlock()
	if m.Token != "" && !registered {
		fcmError(w, http.StatusNotFound, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.")
		return
	}
	name := fmt.Sprintf("projects/%s/messages/%s", project, randomID(12))
	if req.ValidateOnly {
		httpjson.Write(w, http.StatusOK, map[string]string{"name": name})
		return
	}
	s.deliver(project, Sent{Name: name, Token: m.Token, Topic: m.Topic, Message: req.Message, SentAt: time.Now().UTC()}, browserPayload(m, name))
	httpjson.Write(w, http.StatusOK, map[string]string{"name": name})
}

// deliver keeps sent in project's inbox (the newest maxInbox) and hands
// payload to every open stream of its token, under the lock that
// unregistering closes them under.
func (s *Service) deliver(project string, sent Sent, payload map[string]any) {
	data, _ := json.Marshal(payload)
	s.mu.Lock()
	defer s.mu.Unlock()
	inbox := append(s.inbox[project], sent)
	s.inbox[project] = inbox[max(0, len(inbox)-maxInbox):]
	if reg, ok := s.tokens[sent.Token]; ok {
		for ch := range reg.streams {
			select {
			case ch <- data:
			default: // a stalled tab does not hold up the sender
			}
		}
	}
}

// browserPayload is the MessagePayload the FCM JS SDK hands to onMessage.
func browserPayload(m message, name string) map[string]any {
	p := map[string]any{"from": "loupe", "messageId": name}
	if m.Notification != nil {
		p["notification"] = map[string]string{"title": m.Notification.Title, "body": m.Notification.Body, "image": m.Notification.Image}
	}
	if m.Data != nil {
		p["data"] = m.Data
	}
	if m.Webpush != nil && m.Webpush.FcmOptions != nil && m.Webpush.FcmOptions.Link != "" {
		p["fcmOptions"] = map[string]string{"link": m.Webpush.FcmOptions.Link}
	}
	return p
}

// caller is the owner a token request issues to or acts as: a user's
// uid, adminOwner, or in local mode "" for a caller without a credential.
// In strict mode a caller with neither is UNAUTHENTICATED.
func (s *Service) caller(r *http.Request) (string, error) {
	who, err := s.creds.Authenticate(r.Header.Get("Authorization"), r.PathValue("project"))
	switch {
	case err == nil && who.Owner:
		return adminOwner, nil
	case err == nil && who.Authenticated():
		return who.UID, nil
	case s.creds.IsStrict():
		return "", errs.New(errs.Unauthenticated, "loupe runs with --strict-credentials: push tokens are issued and unregistered with the user's ID token")
	}
	return "", nil
}

// issue answers POST …/messaging/tokens: a new token of the caller's.
func (s *Service) issue(w http.ResponseWriter, r *http.Request) {
	owner, err := s.caller(r)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	token := "loupe:" + randomID(96)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = &registration{owner: owner, streams: map[chan []byte]bool{}}
	s.owned[owner] = append(s.owned[owner], token)
	if old := s.owned[owner]; len(old) > maxTokensPerOwner {
		s.dropLocked(old[0])
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"token": token})
}

// unregister answers DELETE …/messaging/tokens/{token}: 204 once the token
// is gone (also when it never was); another user's token is refused.
func (s *Service) unregister(w http.ResponseWriter, r *http.Request) {
	owner, err := s.caller(r)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	token := r.PathValue("token")
	if reg, ok := s.tokens[token]; ok && s.creds.IsStrict() && owner != adminOwner && reg.owner != owner {
		httpjson.Error(w, errs.New(errs.PermissionDenied, "this push token was issued to another user"))
		return
	}
	s.dropLocked(token)
	w.WriteHeader(http.StatusNoContent)
}

// dropLocked unregisters token, ending its streams; s.mu is held.
func (s *Service) dropLocked(token string) {
	reg, ok := s.tokens[token]
	if !ok {
		return
	}
	delete(s.tokens, token)
	s.owned[reg.owner] = slices.DeleteFunc(s.owned[reg.owner], func(t string) bool { return t == token })
	if len(s.owned[reg.owner]) == 0 {
		delete(s.owned, reg.owner)
	}
	for ch := range reg.streams {
		close(ch)
	}
}

// keepAlive is how often an idle stream gets a comment line.
const keepAlive = 25 * time.Second

func (s *Service) stream(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	ch := make(chan []byte, 64)
	s.mu.Lock()
	reg, ok := s.tokens[token]
	if ok {
		reg.streams[ch] = true
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown token", http.StatusNotFound)
		return
	}
	defer func() {
		s.mu.Lock()
		if reg, ok := s.tokens[token]; ok {
			delete(reg.streams, ch)
		}
		s.mu.Unlock()
	}()
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = io.WriteString(w, ": connected\n\n")
	if flusher != nil {
		flusher.Flush()
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case payload, open := <-ch:
			if !open {
				return
			}
			_, _ = fmt.Fprintf(w, "data: %s\n\n", payload)
		case <-tick.C:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	msgs := append([]Sent{}, s.inbox[r.PathValue("project")]...)
	s.mu.Unlock()
	httpjson.Write(w, http.StatusOK, map[string]any{"messages": msgs})
}

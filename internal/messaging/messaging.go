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
//	POST   /emulator/v1/projects/{p}/messaging/tokens      issue a token → {"token":…}
//	DELETE /emulator/v1/projects/{p}/messaging/tokens/{t}  unregister a token
//	GET    /emulator/v1/projects/{p}/messaging/stream?token=t   SSE: one event per message, data is the
//	                                                       FCM JS SDK's MessagePayload {notification, data, fcmOptions, from, messageId}
//	GET    /emulator/v1/projects/{p}/messaging/messages    the inbox: every message sent (an admin endpoint)
//
// A message to a token loupe never issued, or one unregistered, fails with
// FCM's UNREGISTERED error, so senders clean up stale tokens as in production.
package messaging

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	tokens map[string]map[chan []byte]bool // token → open streams
	inbox  map[string][]Sent               // project → messages
}

// New builds the service; state lives in memory (tokens are re-issued by
// pages). In strict mode (creds) sending needs the admin credential, as FCM
// needs an OAuth token.
func New(creds identity.Credentials) *Service {
	return &Service{creds: creds, tokens: map[string]map[chan []byte]bool{}, inbox: map[string][]Sent{}}
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
	if s.creds.IsStrict() {
		header := r.Header.Get("Authorization")
		if who, err := s.creds.Authenticate(header, project); err != nil || !who.Owner {
			msg := identity.InvalidCredentialMessage
			if header == "" {
				msg = identity.MissingCredentialMessage
			}
			httpjson.Error(w, errs.New(errs.Unauthenticated, msg))
			return
		}
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
	streams, registered := s.tokens[m.Token]
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
	s.mu.Lock()
	s.inbox[project] = append(s.inbox[project], Sent{Name: name, Token: m.Token, Topic: m.Topic, Message: req.Message, SentAt: time.Now().UTC()})
	s.mu.Unlock()
	payload, _ := json.Marshal(browserPayload(m, name))
	for ch := range streams {
		select {
		case ch <- payload:
		default: // a stalled tab does not hold up the sender
		}
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"name": name})
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

func (s *Service) issue(w http.ResponseWriter, _ *http.Request) {
	token := "loupe:" + randomID(96)
	s.mu.Lock()
	s.tokens[token] = map[chan []byte]bool{}
	s.mu.Unlock()
	httpjson.Write(w, http.StatusOK, map[string]string{"token": token})
}

func (s *Service) unregister(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	streams := s.tokens[r.PathValue("token")]
	delete(s.tokens, r.PathValue("token"))
	s.mu.Unlock()
	for ch := range streams {
		close(ch)
	}
	w.WriteHeader(http.StatusNoContent)
}

// keepAlive is how often an idle stream gets a comment line.
const keepAlive = 25 * time.Second

func (s *Service) stream(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	ch := make(chan []byte, 64)
	s.mu.Lock()
	streams, ok := s.tokens[token]
	if ok {
		streams[ch] = true
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown token", http.StatusNotFound)
		return
	}
	defer func() {
		s.mu.Lock()
		if streams, ok := s.tokens[token]; ok {
			delete(streams, ch)
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

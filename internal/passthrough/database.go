package passthrough

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/websocket"
)

// The Realtime Database is passed through over REST (with its event
// streams) and over the SDKs' WebSocket protocol. Production serves a
// namespace NAME at NAME.firebaseio.com, or at the host its WebSocket
// sessions redirect to; an upstream emulator serves every namespace,
// named by ?ns=.

// maxDatabaseMessage is the largest WebSocket message either side may send
// through: production takes writes of up to 16 MB.
const maxDatabaseMessage = 17 << 20

// databaseDialTimeout bounds the opening of a WebSocket to the upstream
// (one that accepts and never answers, say).
var databaseDialTimeout = 30 * time.Second

// databaseProductionDomain is the domain of production's namespaces.
const databaseProductionDomain = "firebaseio.com"

// databaseHosts remembers, by namespace, the host production's WebSocket
// sessions redirected to (a namespace outside us-central1 lives on its
// region's host).
type databaseHosts struct {
	mu    sync.Mutex
	hosts map[string]string
}

func (h *databaseHosts) get(ns string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if host, ok := h.hosts[ns]; ok {
		return host
	}
	return ns + "." + databaseProductionDomain
}

func (h *databaseHosts) set(ns, host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hosts == nil {
		h.hosts = map[string]string{}
	}
	h.hosts[ns] = host
}

// registerDatabase adds the Realtime Database's paths: the WebSocket, and
// REST for requests that name a namespace (?ns= or a database host), as
// the database emulator claims them.
func (s *Service) registerDatabase(r *server.Routes) {
	r.HTTP.HandleFunc("/.ws", s.proxyDatabaseWebSocket)
	r.Fallback(func(r *http.Request) bool {
		return strings.HasSuffix(r.URL.Path, ".json") && (r.URL.Query().Has("ns") || database.HostNamespace(r.Host) != "")
	}, s.proxyDatabaseREST())
}

// databaseNamespace is the namespace a request names: ?ns=, the host's
// first label on a database host, else the project's default instance.
func (s *Service) databaseNamespace(r *http.Request) string {
	if ns := r.URL.Query().Get("ns"); ns != "" {
		return ns
	}
	if ns := database.HostNamespace(r.Host); ns != "" {
		return ns
	}
	return s.o.Project + "-default-rtdb"
}

// databaseHost is the host:port serving ns: the upstream, or production's.
func (s *Service) databaseHost(ns string) string {
	if s.o.Upstream != "" {
		return s.o.Upstream
	}
	return s.dbHosts.get(ns)
}

// proxyDatabaseREST forwards REST requests and event streams, streaming,
// without an emulator-only credential in the Authorization header or the
// auth= and access_token= parameters.
func (s *Service) proxyDatabaseREST() http.Handler {
	scheme := "https"
	if s.o.Upstream != "" {
		scheme = "http"
	}
	rp := &httputil.ReverseProxy{
		Transport: s.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			ns := s.databaseNamespace(pr.In)
			pr.SetURL(&url.URL{Scheme: scheme, Host: s.databaseHost(ns)})
			pr.Out.Host = pr.Out.URL.Host
			q := pr.Out.URL.Query()
			if !q.Has("ns") {
				q.Set("ns", ns) // the upstream emulator's host does not name it
			}
			held := false
			for _, name := range []string{"auth", "access_token"} {
				if s.o.Credentials.EmulatorOnly(q.Get(name)) {
					q.Del(name)
					held = true
				}
			}
			pr.Out.URL.RawQuery = q.Encode()
			if s.emulatorOnly(pr.In.Header.Get("Authorization")) {
				pr.Out.Header.Del("Authorization")
				held = true
			}
			if held {
				s.heldBack("database")
			}
		},
		FlushInterval:  -1, // event streams as they come
		ModifyResponse: server.OwnCORS,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			host := s.databaseHost(s.databaseNamespace(r))
			s.o.Logger.Warn("pass-through: the upstream did not answer", "service", "database", "upstream", host, "error", err)
			databaseError(w, http.StatusBadGateway, "loupe passes database through to "+host+", which did not answer")
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns := s.databaseNamespace(r)
		if err := database.CheckNamespace(ns); err != nil {
			databaseError(w, http.StatusBadRequest, err.Error())
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		end := s.record(requestlog.Entry{Service: "database", Method: r.Method, Path: r.URL.Path, Database: ns},
			isStream(r), s.databaseHost(ns))
		defer func() { end(rec.status, "") }() // also when the proxy aborts (the client went away mid-stream)
		rp.ServeHTTP(rec, r)
	})
}

// databaseError answers {"error": message}, as the database's REST API does.
func databaseError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": message})
}

// notForwardedWebSocketHeaders are the handshake headers a WebSocket to the
// upstream does not copy from the caller's: the connection's own, and
// the browser's cookies and origin, which are loupe's and not the
// upstream's.
var notForwardedWebSocketHeaders = []string{"Connection", "Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version",
	"Sec-Websocket-Extensions", "Sec-Websocket-Protocol", "Cookie", "Origin", "Host", "Te", "Keep-Alive", "Proxy-Connection"}

// proxyDatabaseWebSocket relays a session of the SDKs' WebSocket protocol
// between the caller and the upstream, message by message: the caller's
// auth requests with an emulator-only credential become unauth requests
// (production then judges the session as unauthenticated), and the
// upstream's handshake and redirects name loupe's host, so the SDK never
// leaves loupe.
func (s *Service) proxyDatabaseWebSocket(w http.ResponseWriter, r *http.Request) {
	ns := s.databaseNamespace(r)
	if err := database.CheckNamespace(ns); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !websocket.HeaderHas(r.Header, "Upgrade", "websocket") {
		http.Error(w, "expected a WebSocket upgrade", http.StatusBadRequest)
		return
	}
	header := r.Header.Clone()
	for _, h := range notForwardedWebSocketHeaders {
		header.Del(h)
	}
	if s.emulatorOnly(header.Get("Authorization")) {
		header.Del("Authorization")
		s.heldBack("database")
	}
	host := s.databaseHost(ns)
	target := "wss://" + host + "/.ws?" + r.URL.RawQuery
	if s.o.Upstream != "" {
		q := r.URL.Query()
		q.Set("ns", ns)
		target = "ws://" + host + "/.ws?" + q.Encode()
	}
	end := s.record(requestlog.Entry{Service: "database", Method: "WebSocket", Path: "/.ws", Database: ns}, true, host)
	dial, cancel := context.WithTimeout(r.Context(), databaseDialTimeout)
	up, err := websocket.Dial(dial, target, header, maxDatabaseMessage)
	cancel()
	if err != nil {
		s.o.Logger.Warn("pass-through: the upstream did not answer", "service", "database", "upstream", host, "error", err)
		status := http.StatusBadGateway
		var refused *websocket.HandshakeError
		if errors.As(err, &refused) {
			status = refused.Status
		}
		end(status, err.Error())
		http.Error(w, "loupe passes database through to "+host+", which did not open the WebSocket: "+err.Error(), status)
		return
	}
	down, err := websocket.Upgrade(w, r, maxDatabaseMessage)
	if err != nil {
		up.Close()
		end(http.StatusBadRequest, err.Error())
		http.Error(w, "expected a WebSocket upgrade", http.StatusBadRequest)
		return
	}
	relay := &databaseRelay{s: s, ns: ns, localHost: r.Host, up: up, down: down}
	done := make(chan struct{})
	go func() {
		defer close(done)
		relay.downstream()
	}()
	relay.upstream()
	<-done
	end(http.StatusOK, relay.ended())
}

// databaseRelay is one WebSocket session relayed to the upstream.
type databaseRelay struct {
	s         *Service
	ns        string
	localHost string // the host the caller reached loupe at
	up, down  *websocket.Conn

	once sync.Once
	why  string // how the session ended
}

// stop closes both ends once, noting why.
func (d *databaseRelay) stop(why string) {
	d.once.Do(func() {
		d.why = why
		d.up.Close()
		d.down.Close()
	})
}

func (d *databaseRelay) ended() string { return d.why }

// closedBy names how a side's read ended.
func closedBy(side string, err error) string {
	if errors.Is(err, io.EOF) {
		return side + " closed the WebSocket"
	}
	return side + ": " + err.Error()
}

// relayWriteTimeout is how long a write to either side may stall (a peer
// that does not read) before the session is dropped.
var relayWriteTimeout = time.Minute

// send writes msgs to c, within relayWriteTimeout.
func send(c *websocket.Conn, msgs [][]byte) error {
	_ = c.SetWriteDeadline(time.Now().Add(relayWriteTimeout))
	return c.WriteTexts(msgs)
}

// pump relays the messages read from one side, as change leaves them, to
// the other, until either fails; messages split into frames (a count, then
// the frames) are gathered first, so that change sees them whole.
func (d *databaseRelay) pump(from, to *websocket.Conn, fromName, toName string, change func([][]byte) [][]byte) {
	for {
		frames, err := readMessage(from)
		if err != nil {
			d.stop(closedBy(fromName, err))
			return
		}
		if err := send(to, change(frames)); err != nil {
			d.stop(toName + ": " + err.Error())
			return
		}
	}
}

// upstream relays the caller's messages to the upstream, an auth request
// with an emulator-only credential as unauth.
func (d *databaseRelay) upstream() {
	d.pump(d.down, d.up, "the client", "the upstream", func(frames [][]byte) [][]byte {
		if kept, ok := d.withoutEmulatorCredential(frames); ok {
			return [][]byte{kept}
		}
		return frames
	})
}

// downstream relays the upstream's messages to the caller, its handshake
// and redirects naming loupe's host instead of the upstream's.
func (d *databaseRelay) downstream() {
	d.pump(d.up, d.down, "the upstream", "the client", func(frames [][]byte) [][]byte {
		if len(frames) == 1 {
			frames[0] = d.localControl(frames[0])
		}
		return frames
	})
}

// readMessage reads one message of the protocol: a frame, or a frame
// count (up to 6 digits) and that many frames, at most maxDatabaseMessage
// bytes in all.
func readMessage(c *websocket.Conn) ([][]byte, error) {
	first, err := c.Read()
	if err != nil {
		return nil, err
	}
	frames := [][]byte{[]byte(first)}
	n, err := strconv.Atoi(first)
	if len(first) > 6 || err != nil || n < 2 {
		return frames, nil
	}
	size := 0
	for range n {
		f, err := c.Read()
		if err != nil {
			return nil, err
		}
		if size += len(f); size > maxDatabaseMessage {
			return nil, errors.New("a message over 16 MB")
		}
		frames = append(frames, []byte(f))
	}
	return frames, nil
}

// authRequest is the part of a data message the relay reads: an auth or
// gauth request {"t":"d","d":{"r":n,"a":"auth","b":{"cred":…}}}.
type authRequest struct {
	T string `json:"t"`
	D struct {
		R json.Number `json:"r"`
		A string      `json:"a"`
		B struct {
			Cred string `json:"cred"`
		} `json:"b"`
	} `json:"d"`
}

// withoutEmulatorCredential is the unauth request that replaces an auth
// request whose credential only an emulator takes, and whether the
// message (frames, as read) was one.
func (d *databaseRelay) withoutEmulatorCredential(frames [][]byte) ([]byte, bool) {
	msg := frames[0]
	if len(frames) > 1 {
		msg = []byte(strings.Join(byteStrings(frames[1:]), ""))
	}
	if !strings.Contains(string(msg), `"cred"`) {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(string(msg)))
	dec.UseNumber()
	var m authRequest
	if dec.Decode(&m) != nil || m.T != "d" || m.D.A != "auth" && m.D.A != "gauth" || !d.s.o.Credentials.EmulatorOnly(m.D.B.Cred) {
		return nil, false
	}
	d.s.heldBack("database")
	out, _ := json.Marshal(map[string]any{"t": "d", "d": map[string]any{"r": m.D.R, "a": "unauth", "b": map[string]any{}}})
	return out, true
}

func byteStrings(frames [][]byte) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = string(f)
	}
	return out
}

// controlMessage is a control message of the upstream's: the handshake
// {"t":"c","d":{"t":"h","d":{…,"h":host}}} or a reset {"t":"c","d":{"t":"r","d":host}}.
type controlMessage struct {
	T string `json:"t"`
	D struct {
		T string          `json:"t"`
		D json.RawMessage `json:"d"`
	} `json:"d"`
}

// localControl is msg with loupe's host where the upstream named its own:
// in the handshake, and in a reset (production's redirect to the host
// serving the namespace, which the relay then connects to itself).
func (d *databaseRelay) localControl(msg []byte) []byte {
	if !strings.HasPrefix(string(msg), `{"t":"c"`) {
		return msg
	}
	var m controlMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	switch m.D.T {
	case "h":
		var hello map[string]any
		if json.Unmarshal(m.D.D, &hello) != nil {
			return msg
		}
		hello["h"] = d.localHost
		out, _ := json.Marshal(map[string]any{"t": "c", "d": map[string]any{"t": "h", "d": hello}})
		return out
	case "r":
		var host string
		if json.Unmarshal(m.D.D, &host) != nil {
			return msg
		}
		if d.s.o.Upstream == "" && database.HostNamespace(host) != "" {
			d.s.dbHosts.set(d.ns, host)
		}
		out, _ := json.Marshal(map[string]any{"t": "c", "d": map[string]any{"t": "r", "d": d.localHost}})
		return out
	}
	return msg
}

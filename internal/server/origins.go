package server

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// exposedHeaders are the response headers the SDKs read from cross-origin
// responses: WebChannel's session header and the Storage upload protocol.
const exposedHeaders = "X-HTTP-Session-Id, Content-Type, Content-Length, Content-Range, ETag, " +
	"X-Firebase-Storage-Version, X-Goog-Upload-Size-Received, X-Goog-Upload-URL, X-Goog-Upload-Command, " +
	"X-GUploader-UploadID, X-Goog-Upload-Header-Content-Length, X-Goog-Upload-Header-Content-Type, " +
	"X-Goog-Upload-Protocol, X-Goog-Upload-Status, X-Goog-Upload-Chunk-Granularity, X-Goog-Upload-Control-URL"

// HostPolicy says which names loupe answers to as itself and which pages may
// call it. Under strict credentials that is this machine: localhost (and
// *.localhost), any IP address (a page cannot rebind an address, only a
// name) and the --host name; --allow-origin adds origins (and their host
// names). In default mode loupe answers every name and every page, as the
// official emulators do (another container calls it by its service name, an
// app runs on a LAN address, a cloud IDE or a dev host name), and logs each
// name and origin those rules would refuse once.
type HostPolicy struct {
	names   map[string]bool
	origins map[string]bool
	// otherNames and otherOrigins log what default mode answers beyond the
	// rules; nil under strict credentials, where those are refused.
	otherNames, otherOrigins *seenOnce
	// refusedOrigins logs the pages strict credentials refuse; nil in
	// default mode.
	refusedOrigins *seenOnce
}

// seenOnce logs message (and, with hint, hint followed by the name) for the
// first request from each name or origin,
// up to maxNamesLogged of them (a client sending endless made-up names
// grows neither memory nor the log).
type seenOnce struct {
	logger  *slog.Logger
	message string
	hint    string
	key     string
	mu      sync.Mutex
	seen    map[string]bool
}

// maxNamesLogged bounds the names (and, apart, the origins answered or
// refused) a policy remembers and logs.
const maxNamesLogged = 32

// note logs name the first time it is seen, while fewer than
// maxNamesLogged names have been.
func (n *seenOnce) note(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[name] || len(n.seen) >= maxNamesLogged {
		return
	}
	n.seen[name] = true
	msg := n.message
	if n.hint != "" {
		msg += n.hint + name
	}
	n.logger.Warn(msg, n.key, name, "logged", len(n.seen), "at_most", maxNamesLogged)
}

// NewHostPolicy allows the host name host (--host; "" or an address adds
// nothing) and the pages at origins ("https://app.example:3000"), which
// must be normalised by NormalizeOrigin. With answerAll (default mode),
// every other name and origin is answered too and logger hears of each
// once.
func NewHostPolicy(host string, origins []string, answerAll bool, logger *slog.Logger) HostPolicy {
	p := HostPolicy{names: map[string]bool{}, origins: map[string]bool{}}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if host != "" && net.ParseIP(host) == nil {
		p.names[strings.ToLower(host)] = true
	}
	for _, o := range origins {
		p.origins[o] = true
		if u, err := url.Parse(o); err == nil {
			p.names[strings.ToLower(u.Hostname())] = true
		}
	}
	if answerAll {
		p.otherNames = &seenOnce{logger: logger, key: "host", seen: map[string]bool{},
			message: "answering admin requests for a host name other than this machine's, as the official emulators do; --strict-credentials refuses them"}
		p.otherOrigins = &seenOnce{logger: logger, key: "origin", seen: map[string]bool{},
			message: "answering a page of another origin than this machine's, as the official emulators do: any page this browser opens can call loupe; --strict-credentials refuses such pages unless --allow-origin names them"}
	} else {
		p.refusedOrigins = &seenOnce{logger: logger, key: "origin", seen: map[string]bool{},
			message: "refused requests from a page of another origin: loupe answers pages of this machine only; to let it call loupe, list it in firebase.json emulators.cors or start loupe with ",
			hint:    "--allow-origin "}
	}
	return p
}

// ListensBeyondThisMachine reports whether loupe listening on host ("" and
// 0.0.0.0 are every interface) can be reached from other machines.
func ListensBeyondThisMachine(host string) bool {
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// NormalizeOrigin returns origin as a browser sends it (scheme://host[:port],
// lower case, no path), or false when it is not an http(s) origin.
func NormalizeOrigin(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// Allowed reports whether a request's Host header names this loupe: a
// name of this machine, an address, or a name allowed by the policy; in
// default mode any name. Under strict credentials a page whose own name was
// rebound to 127.0.0.1 sends its name, and is refused.
func (p HostPolicy) Allowed(hostport string) bool {
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if p.ownName(name) {
		return true
	}
	if p.otherNames == nil || name == "" {
		return false
	}
	p.otherNames.note(name)
	return true
}

// ownName reports whether name (lower case, no port) is this machine's, an
// address, or a name the policy allows.
func (p HostPolicy) ownName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost") || net.ParseIP(name) != nil || p.names[name]
}

// AllowedOrigin reports whether a page at origin may call loupe reached at
// host: pages of this machine (localhost, 127.0.0.0/8, [::1], any port),
// pages served by loupe itself under a name it answers to, the origins the
// policy allows, and in default mode every page.
func (p HostPolicy) AllowedOrigin(origin, host string) bool {
	if p.ownOrigin(origin, host) {
		return true
	}
	if p.otherOrigins == nil {
		p.refusedOrigins.note(origin)
		return false
	}
	p.otherOrigins.note(origin)
	return true
}

// ownOrigin reports whether origin is a page of this machine, of loupe
// itself (under a name it answers to) or one the policy names.
func (p HostPolicy) ownOrigin(origin, host string) bool {
	norm, ok := NormalizeOrigin(origin)
	if !ok {
		return false
	}
	if p.origins[norm] {
		return true
	}
	u, _ := url.Parse(norm)
	name := u.Hostname()
	if u.Host == strings.ToLower(host) && (p.otherNames != nil || p.ownName(name)) {
		return true // a page loupe serves itself
	}
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// refuseHost answers a request that names another host than loupe's to an
// admin endpoint or with the owner credential.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	httpjson.Error(w, errs.New(errs.PermissionDenied,
		"loupe does not answer admin requests for host "+r.Host+": call it by localhost or an address, or allow the name with --host or --allow-origin"))
}

// withCORS lets the Firebase SDKs call from the pages that run the app: the
// origins the policy allows (every one in default mode). For those it echoes
// the origin with credentials (WebChannel and REST use withCredentials),
// answers preflights with the requested method and headers, and exposes the
// headers the SDKs read. Under strict credentials a request from any other
// origin is refused with 403 before it reaches a service, and the log says
// how to allow it: WebChannel's POSTs are "simple" requests a browser sends
// without asking, so answering them without CORS headers would still let
// any web page write to loupe.
func withCORS(next http.Handler, hosts HostPolicy) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		if !hosts.AllowedOrigin(origin, r.Host) {
			http.Error(w, "origin "+origin+" may not call loupe (allow it with --allow-origin "+origin+")", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
				h.Set("Access-Control-Allow-Private-Network", "true")
			}
			h.Set("Access-Control-Max-Age", "3600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", exposedHeaders)
		next.ServeHTTP(w, r)
	})
}

// upstreamCORS are the CORS headers withCORS sets itself for a request with
// an Origin, which a proxied upstream's answer must not repeat: a browser
// refuses an answer with two Access-Control-Allow-Origin or
// -Allow-Credentials values. (Access-Control-Expose-Headers is a list, so
// the upstream's adds to loupe's.)
var upstreamCORS = []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Access-Control-Max-Age", "Access-Control-Allow-Private-Network"}

// OwnCORS is the ModifyResponse of a reverse proxy served behind the
// server (pass-through, functions, hosting rewrites): for a request with an
// Origin, whose CORS headers withCORS has set, it drops the upstream's own,
// so the browser sees one set.
func OwnCORS(res *http.Response) error {
	if res.Request != nil && res.Request.Header.Get("Origin") != "" {
		for _, name := range upstreamCORS {
			res.Header.Del(name)
		}
	}
	return nil
}

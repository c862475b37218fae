package server

import (
	"net"
	"net/http"
	"net/url"
)

// exposedHeaders are the response headers the SDKs read from cross-origin
// responses: WebChannel's session header and the Storage upload protocol.
const exposedHeaders = "X-HTTP-Session-Id, Content-Type, Content-Length, Content-Range, ETag, " +
	"X-Firebase-Storage-Version, X-Goog-Upload-Size-Received, X-Goog-Upload-URL, X-Goog-Upload-Command, " +
	"X-GUploader-UploadID, X-Goog-Upload-Header-Content-Length, X-Goog-Upload-Header-Content-Type, " +
	"X-Goog-Upload-Protocol, X-Goog-Upload-Status, X-Goog-Upload-Chunk-Granularity, X-Goog-Upload-Control-URL"

// withCORS lets the Firebase SDKs call from the pages that run the app: this
// machine's origins (any port on localhost, 127.0.0.0/8, [::1]) and loupe's
// own origin. For those it echoes the origin with credentials (WebChannel and
// REST use withCredentials), answers preflights with the requested method and
// headers, and exposes the headers the SDKs read. A request from any other
// origin is refused with 403 before it reaches a service: WebChannel's POSTs
// are "simple" requests a browser sends without asking, so answering them
// without CORS headers would still let any web page write to a local loupe.
func withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		if !allowedOrigin(origin, r.Host) {
			http.Error(w, "origin "+origin+" may not call loupe", http.StatusForbidden)
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

// allowedOrigin reports whether a page at origin may call loupe reached at
// host: pages served from this machine, or by loupe itself.
func allowedOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if u.Host == host {
		return true
	}
	name := u.Hostname()
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

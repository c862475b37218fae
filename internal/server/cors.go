package server

import "net/http"

// exposedHeaders are the response headers the SDKs read from cross-origin
// responses: WebChannel's session header and the Storage upload protocol.
const exposedHeaders = "X-HTTP-Session-Id, Content-Type, Content-Length, Content-Range, ETag, " +
	"X-Firebase-Storage-Version, X-Goog-Upload-Size-Received, X-Goog-Upload-URL, X-Goog-Upload-Command, " +
	"X-GUploader-UploadID, X-Goog-Upload-Header-Content-Length, X-Goog-Upload-Header-Content-Type, " +
	"X-Goog-Upload-Protocol, X-Goog-Upload-Status, X-Goog-Upload-Chunk-Granularity, X-Goog-Upload-Control-URL"

// withCORS lets the Firebase SDKs call from any origin: it echoes the origin with
// credentials (WebChannel and REST use withCredentials), answers preflights with
// the requested method and headers, and exposes the headers the SDKs read.
func withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
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

// Package httpjson writes JSON answers: the one writer the HTTP adapters
// share.
package httpjson

import (
	"encoding/json"
	"net/http"

	"github.com/loupe-dev/loupe/internal/errs"
)

// Write answers status with v as JSON (Content-Type application/json;
// charset=utf-8). An encoding failure after the header is sent is lost,
// as it would be mid-body.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Error answers err as the Google APIs' REST error body: the HTTP status of
// its kind (errs.KindOf), and {"error": {"code", "message", "status"}} with
// that status's number and name.
func Error(w http.ResponseWriter, err error) {
	_, name, status := errs.KindOf(err).Status()
	Write(w, status, map[string]any{"error": map[string]any{"code": status, "message": err.Error(), "status": name}})
}

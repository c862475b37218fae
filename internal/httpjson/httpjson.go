// Package httpjson writes JSON answers: the one writer the HTTP adapters
// share.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write answers status with v as JSON (Content-Type application/json;
// charset=utf-8). An encoding failure after the header is sent is lost,
// as it would be mid-body.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

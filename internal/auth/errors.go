package auth

import (
	"encoding/json"
	"net/http"
)

// apiError is an Identity Toolkit error: a message like "EMAIL_EXISTS" or
// "WEAK_PASSWORD : Password should be at least 6 characters", which the JS
// SDK maps to its error codes.
type apiError struct {
	status  int
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(msg string) *apiError { return &apiError{http.StatusBadRequest, msg} }

// The errors the emulator answers, worded as firebase-tools words them.
var (
	errEmailExists      = badRequest("EMAIL_EXISTS")
	errInvalidEmail     = badRequest("INVALID_EMAIL")
	errMissingEmail     = badRequest("MISSING_EMAIL")
	errMissingPassword  = badRequest("MISSING_PASSWORD")
	errWeakPassword     = badRequest("WEAK_PASSWORD : Password should be at least 6 characters")
	errEmailNotFound    = badRequest("EMAIL_NOT_FOUND")
	errInvalidPassword  = badRequest("INVALID_PASSWORD")
	errUserDisabled     = badRequest("USER_DISABLED")
	errInvalidIDToken   = badRequest("INVALID_ID_TOKEN")
	errUserNotFound     = badRequest("USER_NOT_FOUND")
	errTokenExpired     = badRequest("TOKEN_EXPIRED")
	errInvalidOOBCode   = badRequest("INVALID_OOB_CODE")
	errInvalidRefresh   = badRequest("INVALID_REFRESH_TOKEN")
	errMissingRefresh   = badRequest("MISSING_REFRESH_TOKEN")
	errInvalidIdp       = badRequest("INVALID_IDP_RESPONSE : Unparseable id_token")
	errMissingLocalID   = badRequest("MISSING_LOCAL_ID")
	errInvalidJSON      = badRequest("INVALID_ARGUMENT : Invalid JSON payload received.")
	errDuplicateLocalID = badRequest("DUPLICATE_LOCAL_ID")
	errInvalidClaims    = badRequest("INVALID_CLAIMS")
	errMissingReqType   = badRequest("MISSING_REQ_TYPE")
	errInvalidCustom    = badRequest("INVALID_CUSTOM_TOKEN")
)

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code":    e.status,
		"message": e.message,
		"errors":  []map[string]string{{"message": e.message, "reason": "invalid", "domain": "global"}},
	}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// apiError is an Identity Toolkit error: a message like "EMAIL_EXISTS" or
// "WEAK_PASSWORD : Password should be at least 6 characters", which the JS
// SDK maps to its error codes. Errors about the request itself (bad JSON,
// unknown method) also carry a gRPC status name, as Google's front end adds.
type apiError struct {
	status  int
	message string
	reason  string // "invalid" when ""
	grpc    string // e.g. "INVALID_ARGUMENT"; omitted when ""
}

func (e *apiError) Error() string { return e.message }

func badRequest(msg string) *apiError { return &apiError{status: http.StatusBadRequest, message: msg} }

// The errors the emulator answers, worded as firebase-tools words them.
var (
	errEmailExists       = badRequest("EMAIL_EXISTS")
	errInvalidEmail      = badRequest("INVALID_EMAIL")
	errMissingEmail      = badRequest("MISSING_EMAIL")
	errMissingPassword   = badRequest("MISSING_PASSWORD")
	errWeakPassword      = badRequest("WEAK_PASSWORD : Password should be at least 6 characters")
	errEmailNotFound     = badRequest("EMAIL_NOT_FOUND")
	errInvalidPassword   = badRequest("INVALID_PASSWORD")
	errUserDisabled      = badRequest("USER_DISABLED")
	errInvalidIDToken    = badRequest("INVALID_ID_TOKEN")
	errMissingIDToken    = badRequest("MISSING_ID_TOKEN")
	errUserNotFound      = badRequest("USER_NOT_FOUND")
	errTokenExpired      = badRequest("TOKEN_EXPIRED")
	errInvalidOOBCode    = badRequest("INVALID_OOB_CODE")
	errMissingOOBCode    = badRequest("MISSING_OOB_CODE")
	errInvalidRefresh    = badRequest("INVALID_REFRESH_TOKEN")
	errMissingRefresh    = badRequest("MISSING_REFRESH_TOKEN")
	errInvalidGrantType  = badRequest("INVALID_GRANT_TYPE")
	errMissingLocalID    = badRequest("MISSING_LOCAL_ID")
	errDuplicateLocalID  = badRequest("DUPLICATE_LOCAL_ID")
	errInvalidClaims     = badRequest("INVALID_CLAIMS")
	errMissingReqType    = badRequest("MISSING_REQ_TYPE")
	errInvalidCustom     = badRequest("INVALID_CUSTOM_TOKEN : Invalid assertion format")
	errMissingCustom     = badRequest("MISSING_CUSTOM_TOKEN")
	errMissingIdentifier = badRequest("MISSING_IDENTIFIER")
	errInvalidIdentifier = badRequest("INVALID_IDENTIFIER")
	errMissingRequestURI = badRequest("MISSING_REQUEST_URI")
	errNotAnObject       = &apiError{status: http.StatusBadRequest, message: "Invalid JSON payload received.  must be object", grpc: "INVALID_ARGUMENT"}
	errTooLarge          = &apiError{status: http.StatusRequestEntityTooLarge, message: "Request payload is too large.", grpc: "INVALID_ARGUMENT"}
	errNotFound          = &apiError{status: http.StatusNotFound, message: "Not Found", reason: "notFound", grpc: "NOT_FOUND"}
)

// errInvalidIdp is the answer to an id_token that is neither JSON nor a JWT.
func errInvalidIdp(token string) *apiError {
	return badRequest("INVALID_IDP_RESPONSE : Unable to parse id_token: " + token + " ((Auth Emulator only accepts strict JSON or JWTs as fake id_tokens.))")
}

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
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

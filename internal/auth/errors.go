package auth

import "github.com/loupe-dev/loupe/internal/errs"

// badRequest is an Identity Toolkit error: a message like "EMAIL_EXISTS" or
// "WEAK_PASSWORD : Password should be at least 6 characters", which the JS
// SDK maps to its error codes, of kind InvalidArgument (HTTP 400).
func badRequest(msg string) error { return errs.New(errs.InvalidArgument, msg) }

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
)

// errInvalidIdp is the answer to an id_token that is neither JSON nor a JWT.
func errInvalidIdp(token string) error {
	return badRequest("INVALID_IDP_RESPONSE : Unable to parse id_token: " + token + " ((Auth Emulator only accepts strict JSON or JWTs as fake id_tokens.))")
}

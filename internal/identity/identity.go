// Package identity turns the credential on a request into who is asking.
//
// Three kinds of caller reach the emulated services: the owner (the admin
// credential), a user with an ID token (from the Auth emulator, or an unsigned
// mock token built by @firebase/rules-unit-testing), and nobody.
//
// In local mode (the default) the owner is "Bearer owner" (or any "ya29."
// OAuth token, or a service account's self-signed JWT), as the Admin SDKs,
// the Cloud client libraries with a key file and rules-unit-testing's
// withSecurityRulesDisabled send it to the official emulators, and ID tokens
// are decoded, never verified, nor are their times checked: like the
// official emulators, loupe trusts unsigned and expired tokens, which is why
// it is for local use only. A token minted for another project is taken too,
// as the official emulators take it, with one warning for each pair of
// projects (Credentials.WarnTo); production and strict mode refuse it.
//
// Strict mode (Strict, `loupe serve --strict-credentials`) refuses the owner
// credential and every token loupe did not sign itself, and checks a token's
// times and project as production does. Its owner is the admin token
// (AdminToken), an OAuth-style access token derived from the signing key that
// an Admin SDK presents as its credential.
//
// Authenticate is the one place a service turns an Authorization header into
// a Principal; every service maps its errors to its own wire shape.
package identity

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
)

// Principal is the caller of one request.
type Principal struct {
	// Owner is true for the admin credential; rules do not apply to it.
	Owner bool
	// UID is the user id (the token's sub, or user_id); "" when unauthenticated.
	UID string
	// Claims are every claim of the ID token, as rules see request.auth.token.
	Claims map[string]any
}

// Owner is the admin principal: owner-level calls (the Admin SDKs' owner
// credential, the GCS API, admin endpoints) and the reads a service makes
// on its own behalf.
var Owner = Principal{Owner: true}

// Authenticated reports whether a user (not the owner, not nobody) is calling.
func (p Principal) Authenticated() bool { return p.UID != "" }

// The errors of Authenticate and CheckClaims. Each service answers them in
// its own shape (Firestore UNAUTHENTICATED, Storage 401, Auth
// INVALID_ID_TOKEN or TOKEN_EXPIRED).
var (
	// ErrMalformedToken is returned for a bearer value that is not a decodable JWT.
	ErrMalformedToken = errors.New("malformed ID token")
	// ErrTokenExpired is returned in strict mode for an ID token past its
	// exp, or issued in the future.
	ErrTokenExpired = errors.New("ID token has expired")
	// ErrWrongProject is returned in strict mode for an ID token whose aud
	// or iss names another project than the one the request is for.
	ErrWrongProject = errors.New("ID token was issued for another project")
)

// clockSkew is how far in the future a token's iat may lie, for clocks
// that disagree a little.
const clockSkew = 5 * time.Minute

// Authenticate reads an Authorization header value for a request to
// projects (the first is the request's; a token that names any of them
// is of the request's project; none, or "", skips the project check):
// "Bearer owner" or "Firebase owner" (or a "ya29." OAuth token, as in
// firebase-tools) is the owner in local mode, AdminToken the owner in strict
// mode, "Bearer <jwt>" or "Firebase <jwt>" a user, "" nobody.
func (c Credentials) Authenticate(header string, projects ...string) (Principal, error) {
	if header == "" {
		return Principal{}, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || (!strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "Firebase")) {
		return Principal{}, ErrMalformedToken
	}
	token = strings.TrimSpace(token)
	if c.IsStrict() && token == c.AdminToken() {
		return Owner, nil
	}
	if token == "owner" || strings.HasPrefix(token, "ya29.") {
		if c.IsStrict() {
			return Principal{}, ErrLocalCredential
		}
		return Owner, nil
	}
	claims, err := c.DecodeJWT(token)
	if err != nil {
		return Principal{}, err
	}
	if isServiceAccountJWT(claims) {
		// Only in local mode: strict mode's DecodeJWT refuses a token
		// loupe did not sign.
		return Owner, nil
	}
	if err := c.CheckClaims(claims, projects...); err != nil {
		return Principal{}, err
	}
	uid, _ := claims["sub"].(string)
	if uid == "" {
		uid, _ = claims["user_id"].(string)
	}
	if uid == "" {
		return Principal{}, ErrMalformedToken
	}
	return Principal{UID: uid, Claims: claims}, nil
}

// isServiceAccountJWT reports whether claims are those of a token a service
// account signs for itself with its key (iss and sub its e-mail, with the
// OAuth scopes or the API as aud), as google-auth-library sends it where a
// client has a key file (the Node Firestore client's REST transport):
// production's IAM takes it as the service account, an administrator.
func isServiceAccountJWT(claims map[string]any) bool {
	iss, _ := claims["iss"].(string)
	sub, _ := claims["sub"].(string)
	if iss == "" || iss != sub || !strings.Contains(iss, "@") {
		return false
	}
	scope, _ := claims["scope"].(string)
	aud, _ := claims["aud"].(string)
	return scope != "" || strings.HasPrefix(aud, "https://")
}

// CheckClaims checks an ID token's claims for a request to projects (as
// Authenticate reads them). In strict mode exp and iat must be there and
// now lie between them, and aud and iss must name one of projects
// (ErrWrongProject). In local mode nothing is refused: mock tokens without
// aud, expired ones and those of another project pass as the official
// emulators pass them, the last with a warning (WarnTo).
func (c Credentials) CheckClaims(claims map[string]any, projects ...string) error {
	if c.IsStrict() {
		exp, okExp := claims["exp"].(float64)
		iat, okIat := claims["iat"].(float64)
		now := float64(time.Now().Unix())
		if !okExp || !okIat {
			return ErrMalformedToken
		}
		if exp <= now || iat > now+clockSkew.Seconds() {
			return ErrTokenExpired
		}
	}
	if len(projects) == 0 || projects[0] == "" {
		return nil
	}
	aud, hasAud := claims["aud"].(string)
	iss, hasIss := claims["iss"].(string)
	if c.IsStrict() && (!hasAud || !hasIss) {
		return ErrWrongProject
	}
	for _, p := range projects {
		if (!hasAud || aud == p) && (!hasIss || iss == Issuer(p)) {
			return nil
		}
	}
	if c.IsStrict() {
		return ErrWrongProject
	}
	named := aud
	if !hasAud {
		named = strings.TrimPrefix(iss, Issuer(""))
	}
	c.warned.warn(named, projects[0])
	return nil
}

// Issuer is the iss claim of the ID tokens of project.
func Issuer(project string) string { return "https://securetoken.google.com/" + project }

// DecodeJWT returns the payload claims of a JWT without checking its times
// or project (CheckClaims does), and without checking its signature unless
// strict mode is on (then a token loupe did not sign is ErrLocalCredential).
// Numbers decode as float64.
func (c Credentials) DecodeJWT(token string) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, ErrMalformedToken
	}
	if err := c.verifySignature(parts); err != nil {
		return nil, err
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, ErrMalformedToken
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return nil, ErrMalformedToken
	}
	return claims, nil
}

// Google's front end's messages for a request to an API that needs an OAuth
// token (the Admin SDKs' credential): without one, and with one it refuses.
const (
	MissingCredentialMessage = "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
	InvalidCredentialMessage = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
)

// RequireAdmin is the check of a Google API that takes only an OAuth token
// with the API's rights (FCM's send, Cloud Tasks): in strict mode a request
// to project without the admin credential gets UNAUTHENTICATED with Google's
// front end's message (an ID token is no OAuth token); in local mode every
// caller passes, as with the official emulators.
func (c Credentials) RequireAdmin(header, project string) error {
	if !c.IsStrict() {
		return nil
	}
	if who, err := c.Authenticate(header, project); err == nil && who.Owner {
		return nil
	}
	if header == "" {
		return errs.New(errs.Unauthenticated, MissingCredentialMessage)
	}
	return errs.New(errs.Unauthenticated, InvalidCredentialMessage)
}

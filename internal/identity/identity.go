// Package identity turns the credential on a request into who is asking.
//
// Three kinds of caller reach the emulated services: the owner (the admin
// credential "owner", sent by the Admin SDKs and by rules-unit-testing's
// withSecurityRulesDisabled), a user with an ID token (from the Auth emulator,
// or an unsigned mock token built by @firebase/rules-unit-testing), and nobody.
// In local mode (the default) tokens are decoded, never verified: like the
// official emulators, loupe trusts the owner credential and unsigned and
// expired tokens, which is why it is for local use only. Strict mode
// (RequireSignedTokens, `loupe serve --strict-credentials`) refuses the owner
// credential and every token loupe did not sign itself.
package identity

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
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

// Authenticated reports whether a user (not the owner, not nobody) is calling.
func (p Principal) Authenticated() bool { return p.UID != "" }

// ErrMalformedToken is returned for a bearer value that is not a decodable JWT.
var ErrMalformedToken = errors.New("malformed ID token")

// FromAuthorization reads an Authorization header value: "Bearer owner" or
// "Firebase owner" is the owner, "Bearer <jwt>" or "Firebase <jwt>" a user,
// "" nobody. Any "ya29." OAuth token counts as the owner, as in firebase-tools.
func (c Credentials) FromAuthorization(header string) (Principal, error) {
	if header == "" {
		return Principal{}, nil
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || (!strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "Firebase")) {
		return Principal{}, ErrMalformedToken
	}
	token = strings.TrimSpace(token)
	if token == "owner" || strings.HasPrefix(token, "ya29.") {
		if c.IsStrict() {
			return Principal{}, ErrLocalCredential
		}
		return Principal{Owner: true}, nil
	}
	claims, err := c.DecodeJWT(token)
	if err != nil {
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

// DecodeJWT returns the payload claims of a JWT without checking its times,
// and without checking its signature unless strict mode is on (then a token
// loupe did not sign is ErrLocalCredential). Numbers decode as float64.
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

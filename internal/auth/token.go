package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/identity"
)

// tokenLifetime is how long ID tokens are valid, as in production.
const tokenLifetime = time.Hour

// idToken mints an ID token for a user, shaped like production's: unsigned,
// or signed in strict mode (see identity.Credentials.MintJWT).
func idToken(creds identity.Credentials, projectID string, u *User, provider string, extra map[string]any, now time.Time) string {
	claims := map[string]any{}
	for k, v := range u.claims() {
		claims[k] = v
	}
	// A session's claims (a beforeSignIn function's sessionClaims, a custom
	// token's claims) come after the user's own; the claims below are
	// Firebase's and win.
	for k, v := range extra {
		claims[k] = v
	}
	if u.DisplayName != "" {
		claims["name"] = u.DisplayName
	}
	if u.PhotoURL != "" {
		claims["picture"] = u.PhotoURL
	}
	if u.Email != "" {
		claims["email"] = u.Email
	}
	if u.EmailVerified != nil {
		claims["email_verified"] = *u.EmailVerified
	}
	identities := map[string]any{}
	if u.Email != "" && u.PasswordHash != "" {
		identities["email"] = []string{u.Email}
	}
	for _, p := range u.ProviderUserInfo {
		if p.ProviderID != "password" {
			identities[p.ProviderID] = []string{p.RawID}
			if p.Email != "" {
				identities["email"] = []string{p.Email}
			}
		}
	}
	if provider == "anonymous" {
		claims["provider_id"] = "anonymous"
	}
	lastLogin, _ := strconv.ParseInt(u.LastLoginAt, 10, 64)
	claims["auth_time"] = lastLogin / 1000
	claims["user_id"] = u.LocalID
	claims["firebase"] = map[string]any{"identities": identities, "sign_in_provider": provider}
	claims["iat"] = now.Unix()
	claims["exp"] = now.Add(tokenLifetime).Unix()
	claims["aud"] = projectID
	claims["iss"] = "https://securetoken.google.com/" + projectID
	claims["sub"] = u.LocalID
	return creds.MintJWT(claims)
}

// refreshPayload is what a refresh token carries.
type refreshPayload struct {
	Marker    string `json:"_AuthEmulatorRefreshToken"`
	LocalID   string `json:"localId"`
	Provider  string `json:"provider"`
	ProjectID string `json:"projectId"`
	// Claims are the session's extra claims, which every ID token the
	// refresh token mints carries.
	Claims map[string]any `json:"extraClaims,omitempty"`
}

func refreshToken(creds identity.Credentials, projectID, localID, provider string, extra map[string]any) string {
	data, _ := json.Marshal(refreshPayload{"DO NOT MODIFY", localID, provider, projectID, extra})
	return creds.Seal(base64.RawURLEncoding.EncodeToString(data))
}

func parseRefreshToken(creds identity.Credentials, t string) (refreshPayload, bool) {
	var p refreshPayload
	t, ok := creds.Unseal(t)
	if !ok {
		return p, false
	}
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(t, "="))
	if err != nil || json.Unmarshal(data, &p) != nil || p.LocalID == "" {
		return p, false
	}
	return p, true
}

// parsedToken is the part of an ID token the emulator checks.
type parsedToken struct {
	uid      string
	iat      int64
	exp      int64
	provider string
	aud      string
}

// parseIDToken decodes an ID token for project, checked as identity checks
// every service's tokens: ErrTokenExpired (strict mode) and ErrWrongProject
// come back as they are, any other failure as ErrMalformedToken.
func parseIDToken(creds identity.Credentials, token, project string) (parsedToken, error) {
	claims, err := creds.DecodeJWT(token)
	if err == nil {
		err = creds.CheckClaims(claims, project)
	}
	if err != nil {
		if !errors.Is(err, identity.ErrTokenExpired) && !errors.Is(err, identity.ErrWrongProject) {
			err = identity.ErrMalformedToken
		}
		return parsedToken{}, err
	}
	p := parsedToken{}
	p.uid, _ = claims["user_id"].(string)
	if p.uid == "" {
		p.uid, _ = claims["sub"].(string)
	}
	iat, _ := claims["iat"].(float64)
	p.iat = int64(iat)
	p.exp = 1 << 62 // no exp claim: never expires
	if exp, ok := claims["exp"].(float64); ok && exp < 1<<62 {
		p.exp = int64(exp)
	}
	p.aud, _ = claims["aud"].(string)
	if fb, ok := claims["firebase"].(map[string]any); ok {
		p.provider, _ = fb["sign_in_provider"].(string)
	}
	if p.uid == "" {
		return p, identity.ErrMalformedToken
	}
	return p, nil
}

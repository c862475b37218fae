package auth

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/loupe-dev/loupe/internal/identity"
)

// Sign-in with an identity provider (Google): the provider's id_token is
// unsigned claims JSON or an unsigned JWT, as the official emulator takes.

// idpClaims reads the id_token of a signInWithIdp request, from postBody or
// requestUri: raw JSON claims, or an unsigned JWT. It returns the claims,
// which always have a sub, the provider and the raw id_token.
func idpClaims(creds identity.Credentials, requestURI, postBody string) (map[string]any, string, string, error) {
	params := url.Values{}
	if u, err := url.Parse(requestURI); err == nil {
		params = u.Query()
		if frag, err := url.ParseQuery(u.Fragment); err == nil {
			for k, v := range frag {
				params[k] = v
			}
		}
	}
	if pb, err := url.ParseQuery(strings.TrimPrefix(postBody, "&")); err == nil {
		for k, v := range pb {
			params[k] = v
		}
	}
	provider := params.Get("providerId")
	if provider == "" {
		provider = "google.com"
	}
	raw := params.Get("id_token")
	var claims map[string]any
	if strings.HasPrefix(strings.TrimSpace(raw), "{") {
		if creds.IsStrict() || json.Unmarshal([]byte(raw), &claims) != nil {
			return nil, provider, raw, errInvalidIdp(raw)
		}
	} else if c, err := creds.DecodeJWT(raw); err == nil {
		claims = c
	} else {
		return nil, provider, raw, errInvalidIdp(raw)
	}
	if sub, _ := claims["sub"].(string); sub == "" {
		return nil, provider, raw, badRequest("INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing sub claim.")
	}
	return claims, provider, raw, nil
}

func (s *Engine) signInWithIdp(q *Call) (map[string]any, error) {
	if q.str("requestUri") == "" {
		return nil, errMissingRequestURI
	}
	claims, provider, rawToken, err := idpClaims(s.creds, q.str("requestUri"), q.str("postBody"))
	if err != nil {
		return nil, err
	}
	p := s.store.project(q.Project)
	sub, _ := claims["sub"].(string)
	email, _ := claims["email"].(string)
	email = strings.ToLower(email)
	name, _ := claims["name"].(string)
	picture, _ := claims["picture"].(string)
	verified, _ := claims["email_verified"].(bool)
	u := p.byProvider(provider, sub)
	isNew := false
	if u == nil && email != "" {
		u = p.byEmail(email)
	}
	if u == nil {
		isNew = true
		// A run again with a blocking function's answer keeps the uid.
		if u, err = s.newUser(p, q.localID); err != nil {
			return nil, err
		}
		q.localID = u.LocalID
		u.Email, u.DisplayName, u.PhotoURL, u.EmailVerified = email, name, picture, flag(verified)
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	if u.provider(provider) == nil {
		u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: provider, RawID: sub,
			FederatedID: "https://accounts.google.com/" + sub, Email: email, DisplayName: name, PhotoURL: picture})
	}
	rawInfo, _ := json.Marshal(claims)
	q.rawUserInfo = string(rawInfo)
	if err := s.signInBlocked(q, u, provider, isNew); err != nil {
		return nil, err
	}
	out := map[string]any{
		"kind": "identitytoolkit#VerifyAssertionResponse", "providerId": provider,
		"federatedId": "https://accounts.google.com/" + sub, "localId": u.LocalID, "email": u.Email,
		"emailVerified": u.verified(), "displayName": u.DisplayName, "fullName": u.DisplayName, "context": "",
		"rawUserInfo": string(rawInfo), "oauthIdToken": rawToken,
		"oauthAccessToken": "FirebaseAuthEmulatorFakeAccessToken_" + provider, "isNewUser": isNew,
	}
	if u.PhotoURL != "" {
		out["photoUrl"] = u.PhotoURL
	}
	return merge(out, s.tokens(q, u, provider)), nil
}

// LinkedAccount is a provider account linked to a user.
type LinkedAccount struct {
	RawID, Email, DisplayName string
}

// LinkedAccounts are the accounts of providerID linked to the users of
// project, in user order.
func (s *Engine) LinkedAccounts(project, providerID string) []LinkedAccount {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	var out []LinkedAccount
	for _, u := range s.store.project(project).sorted() {
		if pi := u.provider(providerID); pi != nil {
			out = append(out, LinkedAccount{RawID: pi.RawID, Email: u.Email, DisplayName: u.DisplayName})
		}
	}
	return out
}

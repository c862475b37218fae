package auth

import (
	"errors"

	"encoding/json"
	"github.com/loupe-dev/loupe/internal/identity"
	"strconv"
	"strings"
)

// The account methods: sign-up and sign-in, lookup, update and delete,
// and the Secure Token refresh.

func (s *Engine) signUp(q *Call) (map[string]any, error) {
	p := s.store.project(q.Project)
	email, password := strings.ToLower(q.str("email")), q.str("password")
	if email != "" && !validEmail(email) {
		return nil, errInvalidEmail
	}
	if !q.Admin && (email != "" || password != "") {
		if email == "" {
			return nil, errMissingEmail
		}
		if password == "" {
			return nil, errMissingPassword
		}
	}
	if password != "" && len(password) < 6 {
		return nil, errWeakPassword
	}
	if email != "" && p.byEmail(email) != nil {
		return nil, errEmailExists
	}
	localID := q.localID
	if q.Admin {
		localID = q.str("localId")
	}
	u, err := s.newUser(p, localID)
	if err != nil {
		return nil, err
	}
	q.localID = u.LocalID
	u.Email, u.DisplayName, u.PhotoURL = email, q.str("displayName"), q.str("photoUrl")
	if q.Admin || email != "" {
		u.EmailVerified = flag(q.Admin && q.boolean("emailVerified"))
	}
	if q.Admin && q.boolean("disabled") {
		u.Disabled = flag(true)
	}
	provider := "anonymous"
	if password != "" {
		u.setPassword(password, s.now())
		provider = "password"
	}
	if email != "" {
		u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: "password", Email: email, FederatedID: email, RawID: email, DisplayName: u.DisplayName, PhotoURL: u.PhotoURL})
	}
	if email != "" && !q.Admin {
		// An e-mail sign-up runs beforeCreate, then beforeSignIn unless the
		// account came out disabled. An anonymous one runs none: production
		// runs no blocking function for anonymous sign-ins.
		if err := s.signInBlocked(q, u, provider, true); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"kind": "identitytoolkit#SignupNewUserResponse", "localId": u.LocalID}
	if email != "" {
		out["email"] = email
	}
	if u.DisplayName != "" {
		out["displayName"] = u.DisplayName
	}
	if q.Admin {
		return out, nil
	}
	return merge(out, s.tokens(q, u, provider)), nil
}

func (s *Engine) signInWithPassword(q *Call) (map[string]any, error) {
	p := s.store.project(q.Project)
	email, password := strings.ToLower(q.str("email")), q.str("password")
	switch {
	case email == "":
		return nil, errMissingEmail
	case password == "":
		return nil, errMissingPassword
	case !validEmail(email):
		return nil, errInvalidEmail
	}
	u := p.byEmail(email)
	if u == nil {
		return nil, errEmailNotFound
	}
	if ok, err := u.checkPassword(password); err != nil {
		return nil, err
	} else if !ok {
		return nil, errInvalidPassword
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	if err := s.block(q, "beforeSignIn", u, "password"); err != nil {
		return nil, err
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	out := map[string]any{"kind": "identitytoolkit#VerifyPasswordResponse", "registered": true, "localId": u.LocalID, "email": u.Email}
	return merge(out, s.tokens(q, u, "password")), nil
}

// userFromToken resolves the idToken of a request to its user.
func (s *Engine) userFromToken(q *Call) (*User, parsedToken, error) {
	if q.str("idToken") == "" {
		return nil, parsedToken{}, errMissingIDToken
	}
	tok, err := parseIDToken(s.creds, q.str("idToken"), q.Project)
	if errors.Is(err, identity.ErrTokenExpired) {
		return nil, tok, errTokenExpired
	}
	if err != nil {
		return nil, tok, errInvalidIDToken
	}
	u := s.store.project(q.Project).user(tok.uid)
	if u == nil {
		return nil, tok, errUserNotFound
	}
	validSince, _ := strconv.ParseInt(u.ValidSince, 10, 64)
	if tok.iat < validSince || tok.exp < s.now().Unix() {
		return nil, tok, errTokenExpired
	}
	if u.disabled() {
		return nil, tok, errUserDisabled
	}
	return u, tok, nil
}

// target is the user an update or delete is about: the idToken's user, or
// for the owner a localId.
func (s *Engine) target(q *Call) (*User, parsedToken, error) {
	if q.Admin && q.str("localId") != "" {
		u := s.store.project(q.Project).user(q.str("localId"))
		if u == nil {
			return nil, parsedToken{}, errUserNotFound
		}
		return u, parsedToken{}, nil
	}
	if q.str("idToken") == "" {
		if q.Admin {
			return nil, parsedToken{}, errMissingLocalID
		}
		return nil, parsedToken{}, errMissingIDToken
	}
	return s.userFromToken(q)
}

func (s *Engine) lookup(q *Call) (map[string]any, error) {
	p := s.store.project(q.Project)
	out := map[string]any{"kind": "identitytoolkit#GetAccountInfoResponse"}
	var users []map[string]any
	if q.Admin && q.Params["idToken"] == nil {
		seen := map[string]bool{}
		add := func(u *User) {
			if u != nil && !seen[u.LocalID] {
				seen[u.LocalID] = true
				users = append(users, userInfo(u))
			}
		}
		for _, id := range q.strings("localId") {
			add(p.user(id))
		}
		for _, e := range q.strings("email") {
			add(p.byEmail(e))
		}
	} else {
		u, _, err := s.userFromToken(q)
		if err != nil {
			return nil, err
		}
		users = append(users, userInfo(u))
	}
	if len(users) > 0 {
		out["users"] = users
	}
	return out, nil
}

func (s *Engine) update(q *Call) (map[string]any, error) {
	u, tok, err := s.target(q)
	if err != nil {
		return nil, err
	}
	p := s.store.project(q.Project)
	now := s.now()
	newTokens := false
	if v, ok := q.Params["email"].(string); ok && v != "" {
		email := strings.ToLower(v)
		if !validEmail(email) {
			return nil, errInvalidEmail
		}
		if other := p.byEmail(email); other != nil && other != u {
			return nil, errEmailExists
		}
		u.Email = email
		if pi := u.provider("password"); pi != nil {
			pi.Email, pi.FederatedID, pi.RawID = email, email, email
		}
		newTokens = true
	}
	if v, ok := q.Params["password"].(string); ok && v != "" {
		if len(v) < 6 {
			return nil, errWeakPassword
		}
		u.setPassword(v, now)
		if u.Email != "" && u.provider("password") == nil {
			u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: "password", Email: u.Email, FederatedID: u.Email, RawID: u.Email})
		}
		newTokens = true
	}
	if v, ok := q.Params["displayName"].(string); ok {
		u.DisplayName = v
	}
	if v, ok := q.Params["photoUrl"].(string); ok {
		u.PhotoURL = v
	}
	for _, attr := range q.strings("deleteAttribute") {
		switch attr {
		case "DISPLAY_NAME":
			u.DisplayName = ""
		case "PHOTO_URL":
			u.PhotoURL = ""
		}
	}
	if q.Admin {
		if v, ok := q.Params["disableUser"].(bool); ok {
			u.Disabled = flag(v)
		}
		if v, ok := q.Params["emailVerified"].(bool); ok {
			u.EmailVerified = flag(v)
		}
		if v, ok := q.Params["customAttributes"].(string); ok {
			var claims map[string]any
			if v != "" && json.Unmarshal([]byte(v), &claims) != nil {
				return nil, errInvalidClaims
			}
			u.CustomAttributes = v
			if v == "{}" {
				u.CustomAttributes = ""
			}
		}
	}
	for i := range u.ProviderUserInfo {
		if u.ProviderUserInfo[i].ProviderID == "password" {
			u.ProviderUserInfo[i].DisplayName, u.ProviderUserInfo[i].PhotoURL = u.DisplayName, u.PhotoURL
		}
	}
	out := map[string]any{"kind": "identitytoolkit#SetAccountInfoResponse", "localId": u.LocalID, "email": u.Email,
		"displayName": u.DisplayName, "photoUrl": u.PhotoURL, "providerUserInfo": append([]ProviderInfo{}, u.ProviderUserInfo...),
		"passwordHash": u.PasswordHash, "emailVerified": u.verified()}
	if newTokens && !q.Admin {
		provider := tok.provider
		if provider == "" {
			provider = "password"
		}
		merge(out, s.tokens(q, u, provider))
	}
	return out, nil
}

func (s *Engine) deleteAccount(q *Call) (map[string]any, error) {
	u, _, err := s.target(q)
	if err != nil {
		return nil, err
	}
	s.store.project(q.Project).remove(u.LocalID)
	return map[string]any{"kind": "identitytoolkit#DeleteAccountResponse"}, nil
}

func (s *Engine) signInWithCustomToken(q *Call) (map[string]any, error) {
	if q.str("token") == "" {
		return nil, errMissingCustom
	}
	claims, err := s.creds.DecodeJWT(q.str("token"))
	if err != nil {
		return nil, errInvalidCustom
	}
	uid, _ := claims["uid"].(string)
	if uid == "" {
		return nil, badRequest("INVALID_CUSTOM_TOKEN : custom token is missing the uid claim")
	}
	p := s.store.project(q.Project)
	u, isNew := p.user(uid), false
	if u == nil {
		isNew = true
		var apiErr error
		if u, apiErr = s.newUser(p, uid); apiErr != nil {
			return nil, apiErr
		}
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	// The token's developer claims go into the session's ID tokens. No
	// blocking function runs: production runs none for custom tokens.
	if extra, ok := claims["claims"].(map[string]any); ok {
		q.sessionClaims = extra
	}
	out := map[string]any{"kind": "identitytoolkit#VerifyCustomTokenResponse", "isNewUser": isNew}
	return merge(out, s.tokens(q, u, "custom")), nil
}

func (s *Engine) createAuthUri(q *Call) (map[string]any, error) {
	email := strings.ToLower(q.str("identifier"))
	if email == "" {
		return nil, errMissingIdentifier
	}
	if !validEmail(email) {
		return nil, errInvalidIdentifier
	}
	u := s.store.project(q.Project).byEmail(email)
	methods := []string{}
	if u != nil {
		for _, pi := range u.ProviderUserInfo {
			methods = append(methods, pi.ProviderID)
		}
	}
	return map[string]any{"kind": "identitytoolkit#CreateAuthUriResponse", "registered": u != nil, "sessionId": randomString(27),
		"allProviders": methods, "signinMethods": methods}, nil
}

func (s *Engine) refresh(q *Call) (map[string]any, error) {
	if q.str("grant_type") != "refresh_token" {
		return nil, errInvalidGrantType
	}
	if q.str("refresh_token") == "" {
		return nil, errMissingRefresh
	}
	rt, ok := parseRefreshToken(s.creds, q.str("refresh_token"))
	if !ok {
		return nil, errInvalidRefresh
	}
	q.Project = rt.ProjectID
	u := s.store.project(rt.ProjectID).user(rt.LocalID)
	if u == nil {
		return nil, errInvalidRefresh
	}
	if u.disabled() {
		return nil, errUserDisabled
	}
	q.sessionClaims = rt.Claims
	t := s.tokens(q, u, rt.Provider)
	return map[string]any{"id_token": t["idToken"], "access_token": t["idToken"], "expires_in": t["expiresIn"],
		"refresh_token": t["refreshToken"], "token_type": "Bearer", "user_id": u.LocalID, "project_id": projectNumber}, nil
}

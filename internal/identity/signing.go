package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
)

// Credentials is the credential policy of one loupe: which callers are
// believed, and how the tokens loupe issues are minted. The zero value is
// local mode; Strict returns strict mode. Services get it in their
// environment, so two policies can live in one process (tests, say).
type Credentials struct {
	// key is the HMAC key of strict mode; nil means local mode.
	key []byte
	// warned, in local mode, logs a token of another project than its
	// request's (nil: nothing is logged).
	warned *projectWarnings
}

// Local is local mode: the owner credential, unsigned and mock tokens are
// believed, as the official emulators believe them, and so is a token of
// another project than the request's (WarnTo logs it).
var Local = Credentials{}

// WarnTo returns c logging to logger, once for each pair of projects, the
// tokens that local mode accepts for another project than the one they name.
func (c Credentials) WarnTo(logger *slog.Logger) Credentials {
	c.warned = &projectWarnings{logger: logger}
	return c
}

// Strict returns strict mode with key: the owner credential ("owner",
// "ya29." tokens) is refused, ID tokens are minted HS256-signed with key, and
// only tokens carrying a valid signature are decoded; unsigned emulator tokens
// and mock tokens are refused.
func Strict(key []byte) Credentials {
	return Credentials{key: append([]byte(nil), key...)}
}

// ErrLocalCredential is returned in strict mode for the owner credential and
// for tokens loupe did not sign.
var ErrLocalCredential = errors.New("local-only credential refused (loupe runs with --strict-credentials)")

// IsStrict reports whether c is strict mode.
func (c Credentials) IsStrict() bool { return c.key != nil }

// AdminToken is the owner's credential: in strict mode an OAuth-style access
// token derived from the key (the same for every run with the same data
// dir), which an Admin SDK presents as its access token; in local mode
// "owner", as the official emulators take it.
func (c Credentials) AdminToken() string {
	if !c.IsStrict() {
		return "owner"
	}
	return "ya29.loupe-admin." + base64.RawURLEncoding.EncodeToString(c.mac("loupe strict admin credential"))
}

func (c Credentials) mac(data string) []byte {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// MintJWT returns a JWT carrying claims: unsigned (alg "none", as the
// official emulators mint them) in local mode, HS256-signed in strict mode.
func (c Credentials) MintJWT(claims map[string]any) string {
	enc := func(v any) string {
		data, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	if !c.IsStrict() {
		return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "."
	}
	signed := enc(map[string]string{"alg": "HS256", "typ": "JWT"}) + "." + enc(claims)
	return signed + "." + base64.RawURLEncoding.EncodeToString(c.mac(signed))
}

// Seal protects an opaque token (a refresh token, say) from forgery in strict
// mode by appending a MAC; in local mode it returns token unchanged.
func (c Credentials) Seal(token string) string {
	if !c.IsStrict() {
		return token
	}
	return token + "." + base64.RawURLEncoding.EncodeToString(c.mac(token))
}

// Unseal returns the token Seal was given, and false when strict mode is on
// and the MAC is missing or wrong.
func (c Credentials) Unseal(sealed string) (string, bool) {
	if !c.IsStrict() {
		return sealed, true
	}
	i := strings.LastIndexByte(sealed, '.')
	if i < 0 {
		return "", false
	}
	sum, err := base64.RawURLEncoding.DecodeString(sealed[i+1:])
	if err != nil || !hmac.Equal(sum, c.mac(sealed[:i])) {
		return "", false
	}
	return sealed[:i], true
}

// EmulatorOnly reports whether token is a credential only an emulator
// takes, which production would refuse: the owner credential, an unsigned
// JWT (alg "none"), and in strict mode the admin token and the tokens loupe
// signed.
func (c Credentials) EmulatorOnly(token string) bool {
	if token == "owner" || c.IsStrict() && token == c.AdminToken() {
		return true
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[0], "="))
	var h struct {
		Alg string `json:"alg"`
	}
	if err != nil || json.Unmarshal(raw, &h) != nil {
		return false
	}
	return strings.EqualFold(h.Alg, "none") || c.IsStrict() && c.verifySignature(parts) == nil
}

// verifySignature checks a JWT's HS256 signature in strict mode.
func (c Credentials) verifySignature(parts []string) error {
	if !c.IsStrict() {
		return nil
	}
	sum, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sum) == 0 || !hmac.Equal(sum, c.mac(parts[0]+"."+parts[1])) {
		return ErrLocalCredential
	}
	return nil
}

// projectWarnings logs each pair of projects once: the one a token names
// and the one of a request it was accepted for.
type projectWarnings struct {
	logger *slog.Logger
	seen   sync.Map // "token project\x00request project" → struct{}
}

func (w *projectWarnings) warn(tokenProject, requestProject string) {
	if w == nil {
		return
	}
	if _, loaded := w.seen.LoadOrStore(tokenProject+"\x00"+requestProject, struct{}{}); loaded {
		return
	}
	w.logger.Warn("an ID token of project "+tokenProject+" was used for project "+requestProject+
		": accepted, as the official emulators accept it (production and --strict-credentials refuse it); "+
		"make the app's projectId and loupe's --project one",
		"tokenProject", tokenProject, "requestProject", requestProject)
}

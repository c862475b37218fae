package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
)

// signingKey is the HMAC key of strict mode; nil means local mode.
var signingKey atomic.Pointer[[]byte]

// ErrLocalCredential is returned in strict mode for the owner credential and
// for tokens loupe did not sign.
var ErrLocalCredential = errors.New("local-only credential refused (loupe runs with --strict-credentials)")

// RequireSignedTokens switches the process to strict mode: the owner
// credential ("owner", "ya29." tokens) is refused, ID tokens are minted
// HS256-signed with key, and only tokens carrying a valid signature are
// decoded; unsigned emulator tokens and mock tokens are refused. It is meant
// to be called once at start, before serving; a nil key returns to local mode.
func RequireSignedTokens(key []byte) {
	if key == nil {
		signingKey.Store(nil)
		return
	}
	k := append([]byte(nil), key...)
	signingKey.Store(&k)
}

// SignedTokensRequired reports whether strict mode is on.
func SignedTokensRequired() bool { return signingKey.Load() != nil }

func mac(data string) []byte {
	h := hmac.New(sha256.New, *signingKey.Load())
	h.Write([]byte(data))
	return h.Sum(nil)
}

// MintJWT returns a JWT carrying claims: unsigned (alg "none", as the
// official emulators mint them) in local mode, HS256-signed in strict mode.
func MintJWT(claims map[string]any) string {
	enc := func(v any) string {
		data, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	if !SignedTokensRequired() {
		return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "."
	}
	signed := enc(map[string]string{"alg": "HS256", "typ": "JWT"}) + "." + enc(claims)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(signed))
}

// Seal protects an opaque token (a refresh token, say) from forgery in strict
// mode by appending a MAC; in local mode it returns token unchanged.
func Seal(token string) string {
	if !SignedTokensRequired() {
		return token
	}
	return token + "." + base64.RawURLEncoding.EncodeToString(mac(token))
}

// Unseal returns the token Seal was given, and false when strict mode is on
// and the MAC is missing or wrong.
func Unseal(sealed string) (string, bool) {
	if !SignedTokensRequired() {
		return sealed, true
	}
	i := strings.LastIndexByte(sealed, '.')
	if i < 0 {
		return "", false
	}
	sum, err := base64.RawURLEncoding.DecodeString(sealed[i+1:])
	if err != nil || !hmac.Equal(sum, mac(sealed[:i])) {
		return "", false
	}
	return sealed[:i], true
}

// verifySignature checks a JWT's HS256 signature in strict mode.
func verifySignature(parts []string) error {
	if !SignedTokensRequired() {
		return nil
	}
	sum, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sum) == 0 || !hmac.Equal(sum, mac(parts[0]+"."+parts[1])) {
		return ErrLocalCredential
	}
	return nil
}

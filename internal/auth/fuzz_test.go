package auth

import (
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
)

// FuzzParseIDToken feeds arbitrary ID tokens to their decoder: it must not
// panic, and a token it accepts names a user.
func FuzzParseIDToken(f *testing.F) {
	u := &User{LocalID: "uid-1", Email: "a@example.com", EmailVerified: flag(true)}
	f.Add(idToken(identity.Local, "demo-loupe", u, "password", nil, time.Unix(1700000000, 0)))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		if p, err := parseIDToken(identity.Local, token, "demo-loupe"); err == nil && p.uid == "" {
			t.Fatalf("accepted a token without a user: %q", token)
		}
	})
}

// FuzzParseRefreshToken feeds arbitrary refresh tokens to their decoder.
func FuzzParseRefreshToken(f *testing.F) {
	f.Add(refreshToken(identity.Local, "demo-loupe", "uid-1", "password", nil))
	f.Add("eyJsb2NhbElkIjoiIn0")
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, token string) {
		if p, ok := parseRefreshToken(identity.Local, token); ok && p.LocalID == "" {
			t.Fatalf("accepted a refresh token without a user: %q", token)
		}
	})
}

// FuzzIdpClaims feeds arbitrary requestUri/postBody pairs to the
// signInWithIdp parser: it returns claims with a sub, or an invalid
// argument (a 400).
func FuzzIdpClaims(f *testing.F) {
	f.Add("http://localhost", `id_token={"sub":"1","email":"a@example.com"}&providerId=google.com`)
	f.Add("http://localhost?id_token=eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.&providerId=google.com", "")
	f.Add("http://localhost#id_token=%7B%7D", "")
	f.Add("http://[::1", "id_token=garbage")
	f.Fuzz(func(t *testing.T, uri, body string) {
		claims, _, _, err := idpClaims(identity.Local, uri, body)
		if err != nil {
			if k := errs.KindOf(err); k != errs.InvalidArgument {
				t.Fatalf("kind %v", k)
			}
			return
		}
		if sub, _ := claims["sub"].(string); sub == "" {
			t.Fatalf("claims without sub accepted: %v", claims)
		}
	})
}

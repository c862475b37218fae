package identity

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestStrict(t *testing.T) {
	now := float64(time.Now().Unix())
	claims := map[string]any{"sub": "alice", "user_id": "alice", "iat": now, "exp": now + 3600}
	unsigned := Local.MintJWT(claims)
	strict := Strict([]byte("test key"))
	signed := strict.MintJWT(claims)
	parts := strings.Split(signed, ".")
	forged := parts[0] + "." + strings.Split(Local.MintJWT(map[string]any{"sub": "mallory"}), ".")[1] + "." + parts[2]
	for _, tc := range []struct {
		name, header string
		wantUID      string
		wantErr      error
	}{
		{"signed by loupe", "Bearer " + signed, "alice", nil},
		{"owner credential", "Bearer owner", "", ErrLocalCredential},
		{"oauth token", "Bearer ya29.abc", "", ErrLocalCredential},
		{"unsigned emulator token", "Bearer " + unsigned, "", ErrLocalCredential},
		{"payload swapped under a valid signature", "Bearer " + forged, "", ErrLocalCredential},
		{"nobody", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := strict.Authenticate(tc.header, "")
			if !errors.Is(err, tc.wantErr) || p.UID != tc.wantUID || p.Owner {
				t.Errorf("Authenticate = %+v, %v; want uid %q, err %v", p, err, tc.wantUID, tc.wantErr)
			}
		})
	}
	sealed := strict.Seal("refresh")
	if got, ok := strict.Unseal(sealed); !ok || got != "refresh" {
		t.Errorf("Unseal(Seal) = %q, %v", got, ok)
	}
	if _, ok := strict.Unseal("refresh"); ok {
		t.Error("an unsealed refresh token was accepted in strict mode")
	}
	if p, err := Local.Authenticate("Bearer "+unsigned, ""); err != nil || p.UID != "alice" {
		t.Errorf("local mode beside strict mode: %+v, %v", p, err)
	}
}

// TestCheckClaims: strict mode checks a token's times and project as
// production does; local mode takes every token, as the official emulators
// take them.
func TestCheckClaims(t *testing.T) {
	now := float64(time.Now().Unix())
	good := func() map[string]any {
		return map[string]any{"sub": "alice", "aud": "p", "iss": Issuer("p"), "iat": now - 10, "exp": now + 3600}
	}
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	strict := Strict([]byte("k"))
	for _, tc := range []struct {
		name             string
		claims           map[string]any
		project          string
		wantStrict, want error
	}{
		{"valid", good(), "p", nil, nil},
		{"expired", with("exp", now-1), "p", ErrTokenExpired, nil},
		{"issued in the future", with("iat", now+3600), "p", ErrTokenExpired, nil},
		{"no exp", with("exp", nil), "p", ErrMalformedToken, nil},
		{"another project's aud", with("aud", "q"), "p", ErrWrongProject, nil},
		{"another project's iss", with("iss", Issuer("q")), "p", ErrWrongProject, nil},
		{"no aud (a mock token)", with("aud", nil), "p", ErrWrongProject, nil},
		{"no project to check", with("aud", "q"), "", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := strict.CheckClaims(tc.claims, tc.project); !errors.Is(err, tc.wantStrict) {
				t.Errorf("strict: %v, want %v", err, tc.wantStrict)
			}
			if err := Local.CheckClaims(tc.claims, tc.project); !errors.Is(err, tc.want) {
				t.Errorf("local: %v, want %v", err, tc.want)
			}
		})
	}
	// The admin token is the owner in strict mode only, and is a secret of the key.
	if p, err := strict.Authenticate("Bearer "+strict.AdminToken(), "p"); err != nil || !p.Owner {
		t.Errorf("strict admin token: %+v, %v", p, err)
	}
	if _, err := Strict([]byte("other")).Authenticate("Bearer "+strict.AdminToken(), ""); err == nil {
		t.Error("another key's admin token was accepted")
	}
	if Local.AdminToken() != "owner" {
		t.Errorf("local admin token %q", Local.AdminToken())
	}
}

// TestCheckClaims_AnotherProjectWarnsOnce: local mode takes a token of
// another project than the request's with one warning naming both, once
// for each pair; a token of any project the request names is its own.
func TestCheckClaims_AnotherProjectWarnsOnce(t *testing.T) {
	var log bytes.Buffer
	local := Local.WarnTo(slog.New(slog.NewTextHandler(&log, nil)))
	of := func(project string) map[string]any {
		return map[string]any{"sub": "alice", "aud": project, "iss": Issuer(project)}
	}
	for _, tc := range []struct {
		claims   map[string]any
		projects []string
	}{
		{of("q"), []string{"p"}},
		{of("q"), []string{"p"}},
		{of("r"), []string{"p"}},
		{of("q"), []string{"p", "q"}},
		{of("p"), []string{"p"}},
	} {
		if err := local.CheckClaims(tc.claims, tc.projects...); err != nil {
			t.Errorf("CheckClaims(%v, %v) = %v", tc.claims["aud"], tc.projects, err)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "an ID token of project q was used for project p") ||
		!strings.Contains(lines[1], "an ID token of project r was used for project p") {
		t.Errorf("warnings:\n%s\nwant one for q and one for r, each naming p", log.String())
	}
	timed := of("q")
	timed["iat"], timed["exp"] = float64(time.Now().Unix()-10), float64(time.Now().Unix()+3600)
	if err := Strict([]byte("k")).CheckClaims(timed, "p", "q"); err != nil {
		t.Errorf("strict, a token of the second project named: %v", err)
	}
}

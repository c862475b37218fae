package identity

import (
	"errors"
	"strings"
	"testing"
)

func TestStrict(t *testing.T) {
	claims := map[string]any{"sub": "alice", "user_id": "alice"}
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
			p, err := strict.FromAuthorization(tc.header)
			if !errors.Is(err, tc.wantErr) || p.UID != tc.wantUID || p.Owner {
				t.Errorf("FromAuthorization = %+v, %v; want uid %q, err %v", p, err, tc.wantUID, tc.wantErr)
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
	if p, err := Local.FromAuthorization("Bearer " + unsigned); err != nil || p.UID != "alice" {
		t.Errorf("local mode beside strict mode: %+v, %v", p, err)
	}
}

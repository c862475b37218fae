package identity

import (
	"encoding/base64"
	"errors"
	"testing"
)

func jwt(payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","type":"JWT"}`)) + "." + enc([]byte(payload)) + "."
}

func TestAuthenticate(t *testing.T) {
	mock := jwt(`{"iss":"https://securetoken.google.com/p","aud":"p","iat":0,"exp":3600,"sub":"alice","user_id":"alice","role":"admin"}`)
	for _, tc := range []struct {
		name, header string
		wantOwner    bool
		wantUID      string
		wantErr      error
	}{
		{"nobody", "", false, "", nil},
		{"owner bearer", "Bearer owner", true, "", nil},
		{"owner firebase scheme", "Firebase owner", true, "", nil},
		{"oauth token", "Bearer ya29.abc", true, "", nil},
		{"mock token", "Bearer " + mock, false, "alice", nil},
		{"storage scheme", "Firebase " + mock, false, "alice", nil},
		{"user_id only", "Bearer " + jwt(`{"user_id":"bob"}`), false, "bob", nil},
		{"no subject", "Bearer " + jwt(`{"aud":"p"}`), false, "", ErrMalformedToken},
		{"garbage", "Bearer not-a-jwt", false, "", ErrMalformedToken},
		{"bad base64", "Bearer a.!!!.b", false, "", ErrMalformedToken},
		{"unknown scheme", "Basic abc", false, "", ErrMalformedToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Local.Authenticate(tc.header, "")
			if !errors.Is(err, tc.wantErr) || p.Owner != tc.wantOwner || p.UID != tc.wantUID {
				t.Errorf("got %+v, %v; want owner=%v uid=%q err=%v", p, err, tc.wantOwner, tc.wantUID, tc.wantErr)
			}
		})
	}
	p, _ := Local.Authenticate("Bearer "+mock, "p")
	if p.Claims["role"] != "admin" || !p.Authenticated() {
		t.Errorf("claims = %v", p.Claims)
	}
}

func FuzzAuthenticate(f *testing.F) {
	f.Add("Bearer owner")
	f.Add("Bearer " + jwt(`{"sub":"u"}`))
	f.Add("Firebase a.b.c")
	f.Fuzz(func(t *testing.T, header string) {
		p, err := Local.Authenticate(header, "p")
		if err == nil && p.Owner && p.UID != "" {
			t.Fatalf("owner with a uid: %+v", p)
		}
	})
}

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
		{"service account with scopes", "Bearer " + serviceAccountJWT, true, "", nil},
		{"service account with the API as aud", "Bearer " + jwt(`{"iss":"sa@p.iam.gserviceaccount.com","sub":"sa@p.iam.gserviceaccount.com","aud":"https://firestore.googleapis.com/"}`), true, "", nil},
		// Not the service account: a user token whose iss names no project, taken as the official emulators take it.
		{"an e-mail subject of another issuer", "Bearer " + jwt(`{"iss":"a@p.iam.gserviceaccount.com","sub":"b@p.iam.gserviceaccount.com","scope":"x"}`), false, "b@p.iam.gserviceaccount.com", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Local.Authenticate(tc.header, "p")
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

// serviceAccountJWT has the claims google-auth-library signs with a
// service account's key (the Node Firestore client's REST transport).
var serviceAccountJWT = jwt(`{"iss":"sa@p.iam.gserviceaccount.com","sub":"sa@p.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/datastore","iat":0,"exp":3600}`)

// TestAuthenticate_ServiceAccountJWTOnlyLocally: under strict credentials a
// service account's token is refused, as every token loupe did not sign.
func TestAuthenticate_ServiceAccountJWTOnlyLocally(t *testing.T) {
	if p, err := Strict([]byte("k")).Authenticate("Bearer "+serviceAccountJWT, "p"); err == nil || p.Owner {
		t.Errorf("strict: %+v, %v; want an error", p, err)
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

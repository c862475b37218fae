package emulator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/server"
)

// FuzzDecodeBody feeds arbitrary bodies to request decoding: it returns an
// object or a 400 in the Identity Toolkit shape.
func FuzzDecodeBody(f *testing.F) {
	f.Add("application/json", `{"email":"a@example.com","password":"secret1"}`, "key=k")
	f.Add("application/json", `{"email":`, "")
	f.Add("application/json", `[1,2]`, "")
	f.Add("application/json", `null`, "")
	f.Add("application/json", `{"emial":"a@example.com"}`, "")
	f.Add("application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=%zz", "")
	f.Fuzz(func(t *testing.T, contentType, data, query string) {
		q, _ := url.ParseQuery(query)
		body, err := decodeBody("signUp", contentType, []byte(data), q)
		switch {
		case err != nil && (err.status != http.StatusBadRequest || err.message == ""):
			t.Fatalf("error %+v", err)
		case err == nil && body == nil:
			t.Fatal("no body and no error")
		}
	})
}

// verbs are the Identity Toolkit and Secure Token paths FuzzService_Request picks from.
var verbs = []string{
	"/identitytoolkit.googleapis.com/v1/accounts:signUp", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
	"/identitytoolkit.googleapis.com/v1/accounts:lookup", "/identitytoolkit.googleapis.com/v1/accounts:update",
	"/identitytoolkit.googleapis.com/v1/accounts:delete", "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode",
	"/identitytoolkit.googleapis.com/v1/accounts:resetPassword", "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp",
	"/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken", "/identitytoolkit.googleapis.com/v1/accounts:createAuthUri",
	"/securetoken.googleapis.com/v1/token", "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:batchCreate",
	"/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:update", "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:lookup",
}

// FuzzService_Request sends arbitrary bodies to every method of an
// in-memory service, as a user and as the owner: never a 5xx, and every
// error is in the Identity Toolkit shape.
func FuzzService_Request(f *testing.F) {
	f.Add(uint8(0), `{"email":"a@example.com","password":"secret1","returnSecureToken":true}`, false)
	f.Add(uint8(1), `{"email":"a@example.com","password":"secret1"}`, false)
	f.Add(uint8(2), `{"idToken":"eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoieCIsImV4cCI6MX0."}`, false)
	f.Add(uint8(3), `{"idToken":"garbage","password":42,"deleteAttribute":[1,{}]}`, false)
	f.Add(uint8(6), `{"oobCode":{"x":1},"newPassword":[]}`, false)
	f.Add(uint8(7), `{"requestUri":"http://localhost","postBody":"id_token={\"sub\":[1]}"}`, false)
	f.Add(uint8(10), `{"grant_type":"refresh_token","refresh_token":"eyJsb2NhbElkIjoieCJ9"}`, false)
	f.Add(uint8(11), `{"users":[{"localId":"u","email":7},{"localId":""}]}`, true)
	f.Add(uint8(12), `{"localId":"u","customAttributes":"{not json","disableUser":"yes"}`, true)
	svc, err := New(server.Env{ProjectID: "demo-loupe"})
	if err != nil {
		f.Fatal(err)
	}
	mux := server.NewMux()
	svc.Register(&server.Routes{HTTP: mux})
	f.Fuzz(func(t *testing.T, verb uint8, body string, owner bool) {
		req := httptest.NewRequest(http.MethodPost, verbs[int(verb)%len(verbs)]+"?key=k", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if owner {
			req.Header.Set("Authorization", "Bearer owner")
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s: %d %s", req.URL.Path, body, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			var e struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code != rec.Code || e.Error.Message == "" {
				t.Fatalf("%s %s: error not in the Identity Toolkit shape: %d %s", req.URL.Path, body, rec.Code, rec.Body)
			}
		}
	})
}

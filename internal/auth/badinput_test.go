package auth_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest/inproc"
)

// TestAuth_RejectsBadInput sends malformed bodies and forged, expired and
// garbage tokens: each gets its 4xx in the Identity Toolkit error shape,
// never a 500. It runs in process (package inproc): only the answers
// matter here.
func TestAuth_RejectsBadInput(t *testing.T) {
	h := inproc.Start(t, inproc.Options{Only: []string{"auth"}})
	_, signedUp := h.Do("POST", idt+"signUp?key=k", "application/json", "", `{"email":"alice@example.com","password":"secret1","returnSecureToken":true}`)
	var alice struct{ LocalID string }
	if err := json.Unmarshal([]byte(signedUp), &alice); err != nil || alice.LocalID == "" {
		t.Fatalf("signUp: %s", signedUp)
	}
	uid := alice.LocalID
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	const sec = "/securetoken.googleapis.com/v1/token"
	const batchCreate = "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:batchCreate"
	const update = "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:update"
	cases := []struct {
		name, path, contentType, body string
		status                        int
		message                       string
	}{
		{"body over 1 MiB", idt + "signUp", "application/json", `{"displayName":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "Request payload is too large."},
		{"truncated JSON", idt + "signUp", "application/json", `{"email":"a@b.co"`, 400, "Invalid JSON payload received. Unexpected end of JSON input"},
		{"JSON syntax error", idt + "signUp", "application/json", `{"email" "a@b.co"}`, 400, "Invalid JSON payload received. Unexpected token in JSON at position 9"},
		{"JSON string", idt + "signUp", "application/json", `"hello"`, 400, "Invalid JSON payload received.  must be object"},
		{"JSON null", idt + "signInWithPassword", "application/json", `null`, 400, "Invalid JSON payload received.  must be object"},
		{"e-mail as object", idt + "signUp", "application/json", `{"email":{"a":1},"password":"secret1"}`, 400, "INVALID_EMAIL"},
		{"password as number", idt + "signUp", "application/json", `{"email":"n@example.com","password":12}`, 400, "WEAK_PASSWORD : Password should be at least 6 characters"},
		{"missing fields", idt + "signInWithPassword", "application/json", `{}`, 400, "MISSING_EMAIL"},
		{"empty body", idt + "lookup", "application/json", ``, 400, "MISSING_ID_TOKEN"},
		{"id token garbage", idt + "lookup", "application/json", `{"idToken":"garbage"}`, 400, "INVALID_ID_TOKEN"},
		{"id token with bad base64", idt + "lookup", "application/json", `{"idToken":"a.!!!.c"}`, 400, "INVALID_ID_TOKEN"},
		{"id token with non-JSON claims", idt + "lookup", "application/json", `{"idToken":"a.` + b64("not json") + `.c"}`, 400, "INVALID_ID_TOKEN"},
		{"id token without a user", idt + "lookup", "application/json", `{"idToken":"a.` + b64(`{"exp":9999999999}`) + `."}`, 400, "INVALID_ID_TOKEN"},
		{"id token forged for nobody", idt + "lookup", "application/json", `{"idToken":"a.` + b64(`{"user_id":"nobody","iat":9999999990,"exp":9999999999}`) + `."}`, 400, "USER_NOT_FOUND"},
		{"id token expired", idt + "lookup", "application/json", `{"idToken":"a.` + b64(`{"user_id":"`+uid+`","iat":9999999990,"exp":2}`) + `."}`, 400, "TOKEN_EXPIRED"},
		{"id token issued before the password", idt + "update", "application/json", `{"idToken":"a.` + b64(`{"user_id":"`+uid+`","iat":1,"exp":9999999999}`) + `.","displayName":"x"}`, 400, "TOKEN_EXPIRED"},
		{"id token as a number", idt + "delete", "application/json", `{"idToken":7}`, 400, "INVALID_ID_TOKEN"},
		{"refresh token garbage", sec, "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=garbage", 400, "INVALID_REFRESH_TOKEN"},
		{"refresh token of JSON without a user", sec, "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=" + b64(`{"localId":""}`), 400, "INVALID_REFRESH_TOKEN"},
		{"refresh token forged for nobody", sec, "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=" + b64(`{"localId":"nobody","projectId":"demo-loupe"}`), 400, "INVALID_REFRESH_TOKEN"},
		{"refresh form with a bad escape", sec, "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=%zz", 400, `Invalid form payload received. invalid URL escape "%zz"`},
		{"refresh without grant type", sec, "application/x-www-form-urlencoded", "", 400, "INVALID_GRANT_TYPE"},
		{"oob code missing", idt + "resetPassword", "application/json", `{"newPassword":"secret9"}`, 400, "MISSING_OOB_CODE"},
		{"oob code garbage", idt + "resetPassword", "application/json", `{"oobCode":"` + strings.Repeat("z", 5000) + `","newPassword":"secret9"}`, 400, "INVALID_OOB_CODE"},
		{"custom token garbage", idt + "signInWithCustomToken", "application/json", `{"token":"garbage"}`, 400, "INVALID_CUSTOM_TOKEN : Invalid assertion format"},
		{"custom token without uid", idt + "signInWithCustomToken", "application/json", `{"token":"a.` + b64(`{"claims":{}}`) + `."}`, 400, "INVALID_CUSTOM_TOKEN : custom token is missing the uid claim"},
		{"idp token without sub", idt + "signInWithIdp", "application/json", `{"requestUri":"http://localhost","postBody":"id_token={}&providerId=google.com"}`, 400, "INVALID_IDP_RESPONSE : Invalid Idp Response: id_token missing sub claim."},
		{"unknown method", idt + "frobnicate", "application/json", `{}`, 404, "Not Found"},
		{"unknown field", idt + "signUp", "application/json", `{"email":"u@example.com","password":"secret1","foo":1}`, 400, unknownName("foo", "")},
		{"misspelt field", idt + "signInWithPassword", "application/json", `{"email":"alice@example.com","pasword":"secret1","returnSecureToken":true}`, 400, unknownName("pasword", "")},
		{"unknown form field", sec, "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_tokn=x", 400,
			`Invalid JSON payload received. Unknown name "refresh_tokn": Cannot bind query parameter. Field 'refresh_tokn' could not be found in request message.`},
		{"unknown query parameter", idt + "signInWithPassword?key=k&foo=1", "application/json", `{"email":"alice@example.com","password":"secret1"}`, 400,
			`Invalid JSON payload received. Unknown name "foo": Cannot bind query parameter. Field 'foo' could not be found in request message.`},
		{"system parameters are known", idt + "signInWithPassword?key=k&alt=json&prettyPrint=false", "application/json", `{"email":"alice@example.com","password":"wrong-1"}`, 400, "INVALID_PASSWORD"},
		{"unknown field of an uploaded user", "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:batchCreate", "application/json", `{"users":[{"localId":"u1"},{"localId":"u2","emial":"u2@example.com"}]}`, 400, unknownName("emial", "users[1]")},
		// Unknown fields of the nested messages, at every depth, with the
		// path in proto field names.
		{"unknown field of an uploaded provider", batchCreate, "application/json", `{"users":[{"localId":"u1","providerUserInfo":[{"providerId":"google.com","rawId":"g1","uid":"g1"}]}]}`, 400, unknownName("uid", "users[0].provider_user_info[0]")},
		{"unknown field of an uploaded second factor", batchCreate, "application/json", `{"users":[{"localId":"u1","mfaInfo":[{"phoneInfo":"+15555550100"},{"phoneInfo":"+15555550101","factorId":"phone"}]}]}`, 400, unknownName("factorId", "users[0].mfa_info[1]")},
		{"unknown field of an uploaded factor's e-mail", batchCreate, "application/json", `{"users":[{"localId":"u1","mfaInfo":[{"emailInfo":{"email":"u1@example.com"}}]}]}`, 400, unknownName("email", "users[0].mfa_info[0].email_info")},
		{"unknown field of an uploaded passkey", batchCreate, "application/json", `{"users":[{"localId":"u1","passkeyInfo":[{"credentialId":"c1","publicKey":"k"}]}]}`, 400, unknownName("publicKey", "users[0].passkey_info[0]")},
		{"unknown field of the argon2 parameters", batchCreate, "application/json", `{"argon2Parameters":{"salt":"c2FsdA"},"users":[]}`, 400, unknownName("salt", "argon2_parameters")},
		{"unknown field of a linked provider", update, "application/json", `{"localId":"` + uid + `","linkProviderUserInfo":{"providerId":"google.com","rawId":"g1","uid":"g1"}}`, 400, unknownName("uid", "link_provider_user_info")},
		{"unknown field of the second factors", update, "application/json", `{"localId":"` + uid + `","mfa":{"enrolments":[]}}`, 400, unknownName("enrolments", "mfa")},
		{"unknown field of a second factor", update, "application/json", `{"localId":"` + uid + `","mfa":{"enrollments":[{"phoneInfo":"+15555550100","factorId":"phone"}]}}`, 400, unknownName("factorId", "mfa.enrollments[0]")},
		{"unknown field of a sign-up factor", idt + "signUp", "application/json", `{"mfaInfo":[{"phoneInfo":"+15555550100","mfaEnrollmentId":"e1"}]}`, 400, unknownName("mfaEnrollmentId", "mfa_info[0]")},
		{"unknown field of a federated user id", idt + "lookup", "application/json", `{"idToken":"x","federatedUserId":[{"providerId":"google.com","uid":"g1"}]}`, 400, unknownName("uid", "federated_user_id[0]")},
		{"unknown field of a query expression", "/identitytoolkit.googleapis.com/v1/projects/demo-loupe/accounts:query", "application/json", `{"expression":[{"email":"a@example.com","uid":"u1"}]}`, 400, unknownName("uid", "expression[0]")},
		// A value of the wrong shape for a message field, or nested.
		{"second factors as a list", update, "application/json", `{"localId":"` + uid + `","mfa":[]}`, 400, `Invalid JSON payload received. Unknown name "mfa": Proto field is not repeating, cannot start list.`},
		{"linked provider as a string", update, "application/json", `{"localId":"` + uid + `","linkProviderUserInfo":"google.com"}`, 400, `Invalid value at 'link_provider_user_info' (type.googleapis.com/google.cloud.identitytoolkit.v1.ProviderUserInfo), "google.com"`},
		{"uploaded provider as a string", batchCreate, "application/json", `{"users":[{"localId":"u1","providerUserInfo":["google.com"]}]}`, 400, `Invalid value at 'users[0].provider_user_info[0]' (type.googleapis.com/google.cloud.identitytoolkit.v1.ProviderUserInfo), "google.com"`},
		{"uploaded provider id as an object", batchCreate, "application/json", `{"users":[{"localId":"u1","providerUserInfo":[{"providerId":{"id":"google.com"}}]}]}`, 400, `Invalid value at 'users[0].provider_user_info[0]' (provider_id), Starting an object on a scalar field`},
		{"uploaded display name as a list", batchCreate, "application/json", `{"users":[{"localId":"u1","displayName":["Ada"]}]}`, 400, `Invalid JSON payload received. Unknown name "displayName" at 'users[0]': Proto field is not repeating, cannot start list.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bearer := ""
			if strings.Contains(tc.path, "/projects/") {
				bearer = "owner"
			}
			status, raw := h.Do("POST", tc.path+"?key=k", tc.contentType, bearer, tc.body)
			var out struct {
				Error struct {
					Code    int                 `json:"code"`
					Message string              `json:"message"`
					Errors  []map[string]string `json:"errors"`
					Status  string              `json:"status"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(raw), &out); err != nil {
				t.Fatalf("%d, not JSON: %.200s", status, raw)
			}
			if status != tc.status || out.Error.Code != tc.status || out.Error.Message != tc.message ||
				len(out.Error.Errors) != 1 || out.Error.Errors[0]["message"] != tc.message {
				t.Errorf("got %d %.300s, want %d %q", status, raw, tc.status, tc.message)
			}
			if (strings.Contains(tc.message, "Unknown name") || strings.HasPrefix(tc.message, "Invalid value")) && out.Error.Status != "INVALID_ARGUMENT" {
				t.Errorf("status %q, want INVALID_ARGUMENT", out.Error.Status)
			}
		})
	}
	// What the front end takes at depth: a free-form map's own keys, a
	// nested field in its proto name, null for a message.
	for _, body := range []struct{ path, json string }{
		{idt + "createAuthUri", `{"identifier":"alice@example.com","continueUri":"http://localhost","customParameter":{"login_hint":"alice","prompt":"consent"}}`},
		{batchCreate, `{"users":[{"localId":"u9","providerUserInfo":[{"providerId":"google.com","raw_id":"g9"}],"mfaInfo":null}]}`},
	} {
		if status, raw := h.Do("POST", body.path+"?key=k", "application/json", "owner", body.json); status != 200 {
			t.Errorf("%s: got %d %.300s, want 200", body.path, status, raw)
		}
	}
}

// unknownName is Google's front end's answer to a body field the request
// message lacks (at: the path of the object holding it, "" at the top).
func unknownName(name, at string) string {
	if at == "" {
		return `Invalid JSON payload received. Unknown name "` + name + `": Cannot find field.`
	}
	return `Invalid JSON payload received. Unknown name "` + name + `" at '` + at + `': Cannot find field.`
}

package emulator

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// The Identity Toolkit v1 and Secure Token request messages, and the
// messages they hold, as data: as Google's front end does, a body field a
// message lacks is refused at any depth (400 INVALID_ARGUMENT, "Unknown
// name"), never dropped, and a value of the wrong JSON shape for a message
// field, or for a field of a nested message, gets the front end's type
// error. The lists are the messages' fields in the published v1 API
// (deprecated ones included: a field still in the message is still
// accepted), plus what the SDKs send that the published messages leave
// out and production accepts (returnSecureToken on signUp, which the JS
// SDK sends on every sign-up).

// A message is one request message or a message one holds: its fields by
// JSON name; of those, the ones that hold a message (nested) and the
// free-form maps, whose keys are the caller's (maps). Any other field is a
// scalar; no nested message here has a repeated scalar field.
type message struct {
	fields []string
	nested map[string]ref
	maps   []string
}

// A ref is a field holding a message: its name in messages, and whether
// the field is repeated.
type ref struct {
	message string
	list    bool
}

// protoPackage is the proto package of the Identity Toolkit v1 messages
// (the API's schemas are named GoogleCloudIdentitytoolkitV1<Message>),
// whose type URLs the front end's type errors name.
const protoPackage = "google.cloud.identitytoolkit.v1."

// requestMessage is the request message of each engine method.
var requestMessage = map[string]string{
	"signUp": "SignUpRequest", "signInWithPassword": "SignInWithPasswordRequest", "lookup": "GetAccountInfoRequest",
	"update": "SetAccountInfoRequest", "delete": "DeleteAccountRequest", "sendOobCode": "GetOobCodeRequest",
	"resetPassword": "ResetPasswordRequest", "signInWithIdp": "SignInWithIdpRequest",
	"signInWithCustomToken": "SignInWithCustomTokenRequest", "createAuthUri": "CreateAuthUriRequest",
	"signInWithEmailLink": "SignInWithEmailLinkRequest", "batchDelete": "BatchDeleteAccountsRequest",
	"batchCreate": "UploadAccountRequest", "query": "QueryUserInfoRequest", "token": "GrantTokenRequest",
}

var messages = map[string]message{
	"SignUpRequest": {fields: []string{"captchaChallenge", "captchaResponse", "clientType", "disabled", "displayName", "email",
		"emailVerified", "idToken", "instanceId", "localId", "mfaInfo", "password", "phoneNumber", "photoUrl",
		"recaptchaVersion", "targetProjectId", "tenantId", "returnSecureToken"},
		nested: map[string]ref{"mfaInfo": {"MfaFactor", true}}},
	"SignInWithPasswordRequest": {fields: []string{"captchaChallenge", "captchaResponse", "clientType", "delegatedProjectNumber", "email",
		"idToken", "instanceId", "password", "pendingIdToken", "recaptchaVersion", "returnSecureToken", "tenantId"}},
	"GetAccountInfoRequest": {fields: []string{"delegatedProjectNumber", "email", "federatedUserId", "idToken", "initialEmail", "localId",
		"phoneNumber", "targetProjectId", "tenantId"},
		nested: map[string]ref{"federatedUserId": {"FederatedUserIdentifier", true}}},
	"SetAccountInfoRequest": {fields: []string{"captchaChallenge", "captchaResponse", "createdAt", "customAttributes", "delegatedProjectNumber",
		"deleteAttribute", "deleteProvider", "disableUser", "displayName", "email", "emailVerified", "idToken",
		"instanceId", "lastLoginAt", "linkProviderUserInfo", "localId", "mfa", "oobCode", "password", "phoneNumber",
		"photoUrl", "provider", "returnSecureToken", "targetProjectId", "tenantId", "upgradeToFederatedLogin",
		"validSince", "deletePasskey"},
		nested: map[string]ref{"linkProviderUserInfo": {"ProviderUserInfo", false}, "mfa": {"MfaInfo", false}}},
	"DeleteAccountRequest": {fields: []string{"delegatedProjectNumber", "idToken", "localId", "targetProjectId", "tenantId"}},
	"GetOobCodeRequest": {fields: []string{"androidInstallApp", "androidMinimumVersion", "androidPackageName", "canHandleCodeInApp",
		"captchaResp", "challenge", "clientType", "continueUrl", "dynamicLinkDomain", "email", "iOSAppStoreId",
		"iOSBundleId", "idToken", "linkDomain", "newEmail", "recaptchaVersion", "requestType", "returnOobLink",
		"targetProjectId", "tenantId", "userIp"}},
	"ResetPasswordRequest": {fields: []string{"email", "newPassword", "oldPassword", "oobCode", "tenantId"}},
	"SignInWithIdpRequest": {fields: []string{"autoCreate", "delegatedProjectNumber", "idToken", "pendingIdToken", "pendingToken",
		"postBody", "requestUri", "returnIdpCredential", "returnRefreshToken", "returnSecureToken", "sessionId",
		"tenantId"}},
	"SignInWithCustomTokenRequest": {fields: []string{"delegatedProjectNumber", "instanceId", "returnSecureToken", "tenantId", "token"}},
	"CreateAuthUriRequest": {fields: []string{"appId", "authFlowType", "context", "continueUri", "customParameter", "hostedDomain",
		"identifier", "oauthConsumerKey", "oauthScope", "openidRealm", "otaApp", "providerId", "sessionId", "tenantId"},
		maps: []string{"customParameter"}},
	"SignInWithEmailLinkRequest": {fields: []string{"email", "idToken", "oobCode", "tenantId"}},
	"BatchDeleteAccountsRequest": {fields: []string{"force", "localIds", "tenantId"}},
	"UploadAccountRequest": {fields: []string{"allowOverwrite", "argon2Parameters", "blockSize", "cpuMemCost", "delegatedProjectNumber",
		"dkLen", "hashAlgorithm", "memoryCost", "parallelization", "passwordHashOrder", "rounds", "saltSeparator",
		"sanityCheck", "signerKey", "tenantId", "users"},
		nested: map[string]ref{"argon2Parameters": {"Argon2Parameters", false}, "users": {"UserInfo", true}}},
	"QueryUserInfoRequest": {fields: []string{"expression", "limit", "offset", "order", "returnUserInfo", "sortBy", "tenantId"},
		nested: map[string]ref{"expression": {"SqlExpression", true}}},
	// GrantTokenRequest (the SDKs send it as a form, in snake_case)
	"GrantTokenRequest": {fields: []string{"code", "grantType", "refreshToken"}},

	// The messages the requests hold.
	"MfaFactor":               {fields: []string{"displayName", "phoneInfo"}},
	"FederatedUserIdentifier": {fields: []string{"providerId", "rawId"}},
	"ProviderUserInfo": {fields: []string{"displayName", "email", "federatedId", "phoneNumber", "photoUrl", "providerId",
		"rawId", "screenName"}},
	"MfaInfo": {fields: []string{"enrollments"}, nested: map[string]ref{"enrollments": {"MfaEnrollment", true}}},
	"MfaEnrollment": {fields: []string{"displayName", "emailInfo", "enrolledAt", "mfaEnrollmentId", "phoneInfo", "totpInfo",
		"unobfuscatedPhoneInfo"},
		nested: map[string]ref{"emailInfo": {"EmailInfo", false}, "totpInfo": {"TotpInfo", false}}},
	"EmailInfo":        {fields: []string{"emailAddress"}},
	"TotpInfo":         {},
	"Argon2Parameters": {fields: []string{"associatedData", "hashLengthBytes", "hashType", "iterations", "memoryCostKib", "parallelism", "version"}},
	"UserInfo": {fields: []string{"createdAt", "customAttributes", "customAuth", "dateOfBirth", "disabled",
		"displayName", "email", "emailLinkSignin", "emailVerified", "initialEmail", "language", "lastLoginAt",
		"lastRefreshAt", "localId", "mfaInfo", "passwordHash", "passwordUpdatedAt", "phoneNumber", "photoUrl",
		"providerUserInfo", "rawPassword", "salt", "screenName", "tenantId", "timeZone", "validSince", "version",
		"passkeyInfo"},
		nested: map[string]ref{"mfaInfo": {"MfaEnrollment", true}, "providerUserInfo": {"ProviderUserInfo", true},
			"passkeyInfo": {"PasskeyInfo", true}}},
	"PasskeyInfo":   {fields: []string{"credentialId", "name"}},
	"SqlExpression": {fields: []string{"email", "phoneNumber", "userId"}},
}

// checkFields refuses a body field the request message of method lacks, at
// any depth, and a value of the wrong shape for a message field or a field
// of a nested message (the top level's scalars are left to the engine,
// which words its own errors). A form's fields are bound as query
// parameters are, and refused in those words.
func checkFields(method string, body map[string]any, form bool) *apiError {
	m, ok := messages[requestMessage[method]]
	if !ok {
		return nil
	}
	var err error
	if form {
		err = unboundParameter(slices.Collect(maps.Keys(body)), m.fields)
	} else {
		err = m.check(body, "")
	}
	if err == nil {
		return nil
	}
	return &apiError{status: http.StatusBadRequest, message: err.Error(), grpc: "INVALID_ARGUMENT"}
}

// check refuses the first field of obj, the object at the path at ("" at
// the top, else in proto field names: "users[0].provider_user_info[1]"),
// that m lacks or whose value is of the wrong shape, walking into the
// messages its fields hold; keys in order, depth first.
func (m message) check(obj map[string]any, at string) error {
	if err := httpjson.CheckFields(obj, at, m.fields...); err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		v := obj[key]
		name := key
		if !slices.Contains(m.fields, name) {
			name = httpjson.Camel(key)
		}
		if v == nil || slices.Contains(m.maps, name) {
			continue
		}
		if r, ok := m.nested[name]; ok {
			if err := r.check(key, v, at, join(at, snake(name))); err != nil {
				return err
			}
			continue
		}
		if at == "" {
			continue
		}
		switch v.(type) {
		case map[string]any:
			return httpjson.ObjectOnScalar(snake(name), at)
		case []any:
			return httpjson.NotRepeating(key, at)
		}
	}
	return nil
}

// check refuses a value of the field key (at path, of the object at at)
// that is not the message r names, or not a list of them when r is
// repeated, or a message with a field it lacks. A lone value for a
// repeated field is checked as its one element, at path: the front end
// names the element's type for a lone scalar.
func (r ref) check(key string, v any, at, path string) error {
	list, isList := v.([]any)
	if !isList {
		return r.one(v, path)
	}
	if !r.list {
		return httpjson.NotRepeating(key, at)
	}
	for i, e := range list {
		if err := r.one(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// one checks one value of a field holding r's message, at path.
func (r ref) one(v any, path string) error {
	switch v := v.(type) {
	case nil, []any:
		// null is the field's default; a list within a list is left
		// to the engine.
		return nil
	case map[string]any:
		return messages[r.message].check(v, path)
	default:
		return httpjson.InvalidValue(path, "type.googleapis.com/"+protoPackage+r.message, v)
	}
}

// join is the path of the field name of the object at the path at.
func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// snake is a field's proto name: its JSON name in snake_case.
func snake(name string) string {
	var b strings.Builder
	for _, r := range name {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkParameters refuses a query parameter that is neither one of every
// Google API's system parameters nor a field of method's request message,
// as Google's front end refuses it ("Cannot bind query parameter").
func checkParameters(method string, query url.Values) *apiError {
	m, ok := messages[requestMessage[method]]
	if !ok {
		return nil
	}
	var names []string
	for name := range query {
		if !httpjson.SystemParameter(name) {
			names = append(names, name)
		}
	}
	if err := unboundParameter(names, m.fields); err != nil {
		return &apiError{status: http.StatusBadRequest, message: err.Error(), grpc: "INVALID_ARGUMENT"}
	}
	return nil
}

// unboundParameter is the front end's error for the first of names, in
// order, that is not one of a request message's fields; nil when all are.
func unboundParameter(names, known []string) error {
	slices.Sort(names)
	for _, name := range names {
		if httpjson.CheckFields(map[string]any{name: nil}, "", known...) != nil {
			return httpjson.UnknownParameter(name)
		}
	}
	return nil
}

package emulator

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// The fields of the Identity Toolkit v1 and Secure Token request messages,
// by the engine method that serves them: as Google's front end does, a body
// field a message lacks is refused (400 INVALID_ARGUMENT, "Unknown name"),
// never dropped. The lists are the messages' fields in the published v1
// API (deprecated ones included: a field still in the message is still
// accepted), plus what the SDKs send that the published messages leave
// out and production accepts (returnSecureToken on signUp, which the JS
// SDK sends on every sign-up).
var requestFields = map[string][]string{
	// SignUpRequest
	"signUp": {"captchaChallenge", "captchaResponse", "clientType", "disabled", "displayName", "email",
		"emailVerified", "idToken", "instanceId", "localId", "mfaInfo", "password", "phoneNumber", "photoUrl",
		"recaptchaVersion", "targetProjectId", "tenantId", "returnSecureToken"},
	// SignInWithPasswordRequest
	"signInWithPassword": {"captchaChallenge", "captchaResponse", "clientType", "delegatedProjectNumber", "email",
		"idToken", "instanceId", "password", "pendingIdToken", "recaptchaVersion", "returnSecureToken", "tenantId"},
	// GetAccountInfoRequest
	"lookup": {"delegatedProjectNumber", "email", "federatedUserId", "idToken", "initialEmail", "localId",
		"phoneNumber", "targetProjectId", "tenantId"},
	// SetAccountInfoRequest
	"update": {"captchaChallenge", "captchaResponse", "createdAt", "customAttributes", "delegatedProjectNumber",
		"deleteAttribute", "deleteProvider", "disableUser", "displayName", "email", "emailVerified", "idToken",
		"instanceId", "lastLoginAt", "linkProviderUserInfo", "localId", "mfa", "oobCode", "password", "phoneNumber",
		"photoUrl", "provider", "returnSecureToken", "targetProjectId", "tenantId", "upgradeToFederatedLogin",
		"validSince", "deletePasskey"},
	// DeleteAccountRequest
	"delete": {"delegatedProjectNumber", "idToken", "localId", "targetProjectId", "tenantId"},
	// GetOobCodeRequest
	"sendOobCode": {"androidInstallApp", "androidMinimumVersion", "androidPackageName", "canHandleCodeInApp",
		"captchaResp", "challenge", "clientType", "continueUrl", "dynamicLinkDomain", "email", "iOSAppStoreId",
		"iOSBundleId", "idToken", "linkDomain", "newEmail", "recaptchaVersion", "requestType", "returnOobLink",
		"targetProjectId", "tenantId", "userIp"},
	// ResetPasswordRequest
	"resetPassword": {"email", "newPassword", "oldPassword", "oobCode", "tenantId"},
	// SignInWithIdpRequest
	"signInWithIdp": {"autoCreate", "delegatedProjectNumber", "idToken", "pendingIdToken", "pendingToken",
		"postBody", "requestUri", "returnIdpCredential", "returnRefreshToken", "returnSecureToken", "sessionId",
		"tenantId"},
	// SignInWithCustomTokenRequest
	"signInWithCustomToken": {"delegatedProjectNumber", "instanceId", "returnSecureToken", "tenantId", "token"},
	// CreateAuthUriRequest
	"createAuthUri": {"appId", "authFlowType", "context", "continueUri", "customParameter", "hostedDomain",
		"identifier", "oauthConsumerKey", "oauthScope", "openidRealm", "otaApp", "providerId", "sessionId", "tenantId"},
	// SignInWithEmailLinkRequest
	"signInWithEmailLink": {"email", "idToken", "oobCode", "tenantId"},
	// BatchDeleteAccountsRequest
	"batchDelete": {"force", "localIds", "tenantId"},
	// UploadAccountRequest
	"batchCreate": {"allowOverwrite", "argon2Parameters", "blockSize", "cpuMemCost", "delegatedProjectNumber",
		"dkLen", "hashAlgorithm", "memoryCost", "parallelization", "passwordHashOrder", "rounds", "saltSeparator",
		"sanityCheck", "signerKey", "tenantId", "users"},
	// QueryUserInfoRequest
	"query": {"expression", "limit", "offset", "order", "returnUserInfo", "sortBy", "tenantId"},
	// GrantTokenRequest (the SDKs send it as a form, in snake_case)
	"token": {"code", "grantType", "refreshToken"},
}

// userInfoFields are UserInfo's fields: each of UploadAccountRequest.users.
var userInfoFields = []string{"createdAt", "customAttributes", "customAuth", "dateOfBirth", "disabled",
	"displayName", "email", "emailLinkSignin", "emailVerified", "initialEmail", "language", "lastLoginAt",
	"lastRefreshAt", "localId", "mfaInfo", "passwordHash", "passwordUpdatedAt", "phoneNumber", "photoUrl",
	"providerUserInfo", "rawPassword", "salt", "screenName", "tenantId", "timeZone", "validSince", "version",
	"passkeyInfo"}

// checkFields refuses a body field the request message of method lacks
// (and, for batchCreate, a field of an uploaded user UserInfo lacks). A
// form's fields are bound as query parameters are, and refused in those
// words.
func checkFields(method string, body map[string]any, form bool) *apiError {
	known, ok := requestFields[method]
	if !ok {
		return nil
	}
	err := httpjson.CheckFields(body, "", known...)
	if err != nil && form {
		err = unboundParameter(slices.Collect(maps.Keys(body)), known)
	}
	if users, _ := body["users"].([]any); err == nil && method == "batchCreate" {
		for i, u := range users {
			if obj, ok := u.(map[string]any); ok {
				if err = httpjson.CheckFields(obj, fmt.Sprintf("users[%d]", i), userInfoFields...); err != nil {
					break
				}
			}
		}
	}
	if err == nil {
		return nil
	}
	return &apiError{status: http.StatusBadRequest, message: err.Error(), grpc: "INVALID_ARGUMENT"}
}

// checkParameters refuses a query parameter that is neither one of every
// Google API's system parameters nor a field of method's request message,
// as Google's front end refuses it ("Cannot bind query parameter").
func checkParameters(method string, query url.Values) *apiError {
	known, ok := requestFields[method]
	if !ok {
		return nil
	}
	var names []string
	for name := range query {
		if !httpjson.SystemParameter(name) {
			names = append(names, name)
		}
	}
	if err := unboundParameter(names, known); err != nil {
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

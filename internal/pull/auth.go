package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"firebase.google.com/go/v4/auth"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
)

// account is one Auth account as the Identity Toolkit's batchGet (the
// Admin SDKs' listUsers) answers it and its batchCreate (importUsers)
// takes it: every time the Admin SDKs show (and passwordUpdatedAt, which
// the Go Admin SDK does not) goes through as it is.
type account struct {
	LocalID           string           `json:"localId"`
	Email             string           `json:"email,omitempty"`
	EmailVerified     bool             `json:"emailVerified,omitempty"`
	DisplayName       string           `json:"displayName,omitempty"`
	PhotoURL          string           `json:"photoUrl,omitempty"`
	PhoneNumber       string           `json:"phoneNumber,omitempty"`
	Disabled          bool             `json:"disabled,omitempty"`
	CreatedAt         int64            `json:"createdAt,omitempty,string"`   // milliseconds
	LastLoginAt       int64            `json:"lastLoginAt,omitempty,string"` // milliseconds
	LastRefreshAt     string           `json:"lastRefreshAt,omitempty"`      // RFC 3339
	PasswordUpdatedAt float64          `json:"passwordUpdatedAt,omitempty"`  // milliseconds
	ValidSince        int64            `json:"validSince,omitempty,string"`  // seconds
	CustomAttributes  string           `json:"customAttributes,omitempty"`
	ProviderUserInfo  []*auth.UserInfo `json:"providerUserInfo,omitempty"`
	PasswordHash      string           `json:"passwordHash,omitempty"`
	Salt              string           `json:"salt,omitempty"`
}

// redactedHash is the password hash production answers a caller not
// allowed to read hashes: "REDACTED", base64-encoded.
const redactedHash = "UkVEQUNURUQ="

// hashConfig is a project's password hash parameters, as the admin API's
// project config reports them under signIn.hashConfig.
type hashConfig struct {
	Algorithm     string `json:"algorithm"`
	SignerKey     string `json:"signerKey"`
	SaltSeparator string `json:"saltSeparator"`
	Rounds        int    `json:"rounds"`
	MemoryCost    int    `json:"memoryCost"`
}

// accountSet is the accounts a pull read, with the source's hash
// parameters when it copies passwords.
type accountSet struct {
	users []*account
	hash  *hashConfig
}

func (s *accountSet) passwordsNote() string {
	if s.hash == nil {
		return " (without passwords)"
	}
	return " with their " + s.hash.Algorithm + " password hashes"
}

// readAuth reads the accounts o names through the admin API's batchGet,
// a page at a time (and, with WithPasswords, the project's hash
// parameters).
func readAuth(ctx context.Context, o *Options, p *progress) (*accountSet, error) {
	api, err := newAdminAPI(ctx, o.From, o.from)
	if err != nil {
		return nil, err
	}
	set := &accountSet{}
	if o.WithPasswords {
		if set.hash, err = api.hashConfig(ctx); err != nil {
			return nil, err
		}
	}
	wanted := map[string]bool{}
	for _, uid := range o.UIDs {
		wanted[uid] = true
	}
	for token := ""; ; {
		var page struct {
			Users         []*account `json:"users"`
			NextPageToken string     `json:"nextPageToken"`
		}
		q := url.Values{"maxResults": {"1000"}}
		if token != "" {
			q.Set("nextPageToken", token)
		}
		if err := api.get(ctx, "/v1/projects/"+o.From.Project+"/accounts:batchGet?"+q.Encode(), &page); err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		for _, a := range page.Users {
			if len(wanted) > 0 && !wanted[a.LocalID] || !matchesAll(o.UserQuery, a) {
				continue
			}
			delete(wanted, a.LocalID)
			if a.PasswordHash == redactedHash {
				a.PasswordHash = ""
			}
			if o.WithPasswords && a.PasswordHash == "" && hasProvider(a, "password") {
				return nil, fmt.Errorf("the password hash of %s came back empty (redacted): the credential may not read password hashes", a.LocalID)
			}
			if !o.WithPasswords {
				a.PasswordHash, a.Salt = "", ""
			}
			set.users = append(set.users, a)
			p.tick("auth: %d accounts read", len(set.users))
		}
		if token = page.NextPageToken; token == "" || len(page.Users) == 0 {
			break
		}
	}
	if len(wanted) > 0 {
		missing := make([]string, 0, len(wanted))
		for uid := range wanted {
			missing = append(missing, uid)
		}
		slices.Sort(missing)
		return nil, fmt.Errorf("no account with uid %s in project %s", strings.Join(missing, ", "), o.From.Project)
	}
	if o.WithPasswords && set.hash.Algorithm != "SCRYPT" {
		return nil, fmt.Errorf("the project's passwords are hashed with %s: loupe signs in with SCRYPT (Firebase scrypt) hashes only", set.hash.Algorithm)
	}
	p.line("auth: read %d accounts%s", len(set.users), set.passwordsNote())
	return set, nil
}

// matchesAll reports whether a passes every --user-query filter.
func matchesAll(fs []Filter, a *account) bool {
	for _, f := range fs {
		if !f.matches(accountField(a, f.Field)) {
			return false
		}
	}
	return true
}

// UserQueryFields are the account attributes --user-query filters.
const UserQueryFields = "uid, email, displayName, phoneNumber, photoURL, disabled, emailVerified, createdAt, lastSignInAt, providers, customClaims.NAME"

// accountField is an account attribute as matches compares it: nil when
// the account has none.
func accountField(a *account, field string) any {
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	millis := func(ms int64) any {
		if ms == 0 {
			return nil
		}
		return time.UnixMilli(ms)
	}
	if claim, ok := strings.CutPrefix(field, "customClaims."); ok {
		var claims map[string]any
		_ = json.Unmarshal([]byte(a.CustomAttributes), &claims)
		switch v := claims[claim].(type) {
		case float64, string, bool:
			return v
		}
		return nil
	}
	switch field {
	case "uid":
		return a.LocalID
	case "email":
		return str(a.Email)
	case "displayName":
		return str(a.DisplayName)
	case "phoneNumber":
		return str(a.PhoneNumber)
	case "photoURL":
		return str(a.PhotoURL)
	case "disabled":
		return a.Disabled
	case "emailVerified":
		return a.EmailVerified
	case "createdAt":
		return millis(a.CreatedAt)
	case "lastSignInAt":
		return millis(a.LastLoginAt)
	case "providers":
		ids := []string{}
		for _, p := range a.ProviderUserInfo {
			ids = append(ids, p.ProviderID)
		}
		return ids
	}
	return nil
}

// CheckUserQueryField reports whether --user-query can filter field.
func CheckUserQueryField(field string) error {
	if strings.HasPrefix(field, "customClaims.") || strings.Contains(UserQueryFields, field+",") || strings.HasSuffix(UserQueryFields, field) {
		return nil
	}
	return fmt.Errorf("--user-query filters %s, not %s", UserQueryFields, field)
}

// adminAPI calls the source's Identity Toolkit admin API: production's
// with the pull's credentials, or an emulator's as the owner.
type adminAPI struct {
	base    string
	project string
	client  *http.Client
	owner   bool
}

func newAdminAPI(ctx context.Context, s Source, from []option.ClientOption) (*adminAPI, error) {
	if s.Emulator != "" {
		return &adminAPI{base: "http://" + s.Emulator + "/identitytoolkit.googleapis.com", project: s.Project, client: http.DefaultClient, owner: true}, nil
	}
	opts := append(slices.Clone(from), option.WithScopes("https://www.googleapis.com/auth/cloud-platform"))
	c, _, err := htransport.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("admin API client: %w", err)
	}
	return &adminAPI{base: "https://identitytoolkit.googleapis.com", project: s.Project, client: c}, nil
}

// get reads path (under the API's base) into out, within readTimeout.
func (a *adminAPI) get(ctx context.Context, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return err
	}
	if a.owner {
		req.Header.Set("Authorization", "Bearer owner")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// hashConfig reads the source project's password hash parameters from the
// admin API's project config (which the Admin SDKs do not expose).
func (a *adminAPI) hashConfig(ctx context.Context) (*hashConfig, error) {
	var cfg struct {
		SignIn struct {
			HashConfig *hashConfig `json:"hashConfig"`
		} `json:"signIn"`
	}
	if err := a.get(ctx, "/v2/projects/"+a.project+"/config", &cfg); err != nil {
		return nil, fmt.Errorf("read the project's password hash parameters: %w", err)
	}
	if cfg.SignIn.HashConfig == nil || cfg.SignIn.HashConfig.Algorithm == "" {
		return nil, errors.New("the project's config has no password hash parameters (signIn.hashConfig): is the caller allowed to read them?")
	}
	return cfg.SignIn.HashConfig, nil
}

func hasProvider(a *account, id string) bool {
	return slices.ContainsFunc(a.ProviderUserInfo, func(p *auth.UserInfo) bool { return p.ProviderID == id })
}

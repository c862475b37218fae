package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
)

// account is one Auth account as the Identity Toolkit's batchCreate (the
// Admin SDKs' importUsers) takes it.
type account struct {
	LocalID          string           `json:"localId"`
	Email            string           `json:"email,omitempty"`
	EmailVerified    bool             `json:"emailVerified,omitempty"`
	DisplayName      string           `json:"displayName,omitempty"`
	PhotoURL         string           `json:"photoUrl,omitempty"`
	PhoneNumber      string           `json:"phoneNumber,omitempty"`
	Disabled         bool             `json:"disabled,omitempty"`
	CreatedAt        int64            `json:"createdAt,omitempty,string"`
	LastLoginAt      int64            `json:"lastLoginAt,omitempty,string"`
	LastRefreshAt    string           `json:"lastRefreshAt,omitempty"`     // RFC 3339
	ValidSince       int64            `json:"validSince,omitempty,string"` // seconds
	CustomAttributes string           `json:"customAttributes,omitempty"`
	ProviderUserInfo []*auth.UserInfo `json:"providerUserInfo,omitempty"`
	PasswordHash     string           `json:"passwordHash,omitempty"`
	Salt             string           `json:"salt,omitempty"`
}

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

// readAuth reads the accounts o names through the Admin SDK (and, with
// WithPasswords, the project's hash parameters through the admin API).
func readAuth(ctx context.Context, o *Options, p *progress) (*accountSet, error) {
	if o.From.Emulator != "" {
		// The Admin SDK reaches an emulator only through this variable;
		// the pull's own writes to loupe do not use the SDK.
		if err := os.Setenv("FIREBASE_AUTH_EMULATOR_HOST", o.From.Emulator); err != nil {
			return nil, err
		}
	}
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: o.From.Project}, o.from...)
	if err != nil {
		return nil, fmt.Errorf("firebase app: %w", err)
	}
	client, err := app.Auth(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth client: %w", err)
	}
	set := &accountSet{}
	if o.WithPasswords {
		if set.hash, err = readHashConfig(ctx, o.From, o.from); err != nil {
			return nil, err
		}
	}
	wanted := map[string]bool{}
	for _, uid := range o.UIDs {
		wanted[uid] = true
	}
	it := client.Users(ctx, "")
	for {
		u, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		if len(wanted) > 0 && !wanted[u.UID] {
			continue
		}
		if !matchesAll(o.UserQuery, u) {
			continue
		}
		delete(wanted, u.UID)
		if o.WithPasswords && u.PasswordHash == "" && hasProvider(u, "password") {
			// Production answers a redacted hash (which the Admin SDK
			// clears) to a caller not allowed to read hashes.
			return nil, fmt.Errorf("the password hash of %s came back empty (redacted): the credential may not read password hashes", u.UID)
		}
		set.users = append(set.users, accountOf(u, o.WithPasswords))
		p.tick("auth: %d accounts read", len(set.users))
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

// accountOf is u as batchCreate takes it, without its password hash unless
// withPassword.
func accountOf(u *auth.ExportedUserRecord, withPassword bool) *account {
	a := &account{LocalID: u.UID, Email: u.Email, EmailVerified: u.EmailVerified, DisplayName: u.DisplayName,
		PhotoURL: u.PhotoURL, PhoneNumber: u.PhoneNumber, Disabled: u.Disabled, ProviderUserInfo: u.ProviderUserInfo}
	if m := u.UserMetadata; m != nil {
		a.CreatedAt, a.LastLoginAt = m.CreationTimestamp, m.LastLogInTimestamp
		if m.LastRefreshTimestamp > 0 {
			a.LastRefreshAt = time.UnixMilli(m.LastRefreshTimestamp).UTC().Format(time.RFC3339Nano)
		}
	}
	a.ValidSince = u.TokensValidAfterMillis / 1000
	if len(u.CustomClaims) > 0 {
		b, _ := json.Marshal(u.CustomClaims)
		a.CustomAttributes = string(b)
	}
	if withPassword {
		a.PasswordHash, a.Salt = u.PasswordHash, u.PasswordSalt
	}
	return a
}

// matchesAll reports whether u passes every --user-query filter.
func matchesAll(fs []Filter, u *auth.ExportedUserRecord) bool {
	for _, f := range fs {
		if !f.matches(accountField(u, f.Field)) {
			return false
		}
	}
	return true
}

// UserQueryFields are the account attributes --user-query filters.
const UserQueryFields = "uid, email, displayName, phoneNumber, photoURL, disabled, emailVerified, createdAt, lastSignInAt, providers, customClaims.NAME"

// accountField is an account attribute as matches compares it: nil when
// the account has none.
func accountField(u *auth.ExportedUserRecord, field string) any {
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
		switch v := u.CustomClaims[claim].(type) {
		case float64, string, bool:
			return v
		}
		return nil
	}
	switch field {
	case "uid":
		return u.UID
	case "email":
		return str(u.Email)
	case "displayName":
		return str(u.DisplayName)
	case "phoneNumber":
		return str(u.PhoneNumber)
	case "photoURL":
		return str(u.PhotoURL)
	case "disabled":
		return u.Disabled
	case "emailVerified":
		return u.EmailVerified
	case "createdAt":
		return millis(u.UserMetadata.CreationTimestamp)
	case "lastSignInAt":
		return millis(u.UserMetadata.LastLogInTimestamp)
	case "providers":
		ids := []string{}
		for _, p := range u.ProviderUserInfo {
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

// readHashConfig reads the source project's password hash parameters from
// the admin API's project config (which the Admin SDKs do not expose).
func readHashConfig(ctx context.Context, s Source, from []option.ClientOption) (*hashConfig, error) {
	base := "https://identitytoolkit.googleapis.com"
	client := http.DefaultClient
	if s.Emulator != "" {
		base = "http://" + s.Emulator + "/identitytoolkit.googleapis.com"
	} else {
		opts := append(slices.Clone(from), option.WithScopes("https://www.googleapis.com/auth/cloud-platform"))
		c, _, err := htransport.NewClient(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("admin API client: %w", err)
		}
		client = c
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v2/projects/"+s.Project+"/config", nil)
	if err != nil {
		return nil, err
	}
	if s.Emulator != "" {
		req.Header.Set("Authorization", "Bearer owner")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the project's password hash parameters: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read the project's password hash parameters: status %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var cfg struct {
		SignIn struct {
			HashConfig *hashConfig `json:"hashConfig"`
		} `json:"signIn"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.SignIn.HashConfig == nil || cfg.SignIn.HashConfig.Algorithm == "" {
		return nil, errors.New("the project's config has no password hash parameters (signIn.hashConfig): is the caller allowed to read them?")
	}
	return cfg.SignIn.HashConfig, nil
}

func hasProvider(u *auth.ExportedUserRecord, id string) bool {
	return slices.ContainsFunc(u.ProviderUserInfo, func(p *auth.UserInfo) bool { return p.ProviderID == id })
}

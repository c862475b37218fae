// Package auth emulates Firebase Authentication (the Identity Toolkit and
// Secure Token REST APIs) as the Firebase JS SDK and the Go Admin SDK call
// them, with firebase-tools' Auth emulator as the behavioural reference:
// the same requests get the same answers and error codes.
//
// Beyond the reference it keeps every e-mail it would send (password reset,
// verification) in an inbox with working action links, and serves a Google
// account chooser for local sign-in.
//
// Google sign-in contract for the web app in local mode: open
// /emulator/auth/handler?providerId=google.com&mode=loupe-chooser&origin=<app origin>
// in a popup; when the person picks or adds an account the page posts
// {type: "loupe-google-id-token", idToken: "<claims JSON>"} to the opener at
// that origin and closes. The app then calls
// signInWithCredential(GoogleAuthProvider.credential(idToken)).
//
// Tokens are unsigned JWTs ({"alg":"none"}) with production's iss and aud;
// users persist in the data dir and import/export in firebase-tools' format.
package auth

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/atomicfile"
)

// ProviderInfo is one linked sign-in provider of a user.
type ProviderInfo struct {
	ProviderID  string `json:"providerId"`
	RawID       string `json:"rawId,omitempty"`
	FederatedID string `json:"federatedId,omitempty"`
	Email       string `json:"email,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	PhotoURL    string `json:"photoUrl,omitempty"`
}

// User is an account, in firebase-tools' export shape.
type User struct {
	LocalID           string         `json:"localId"`
	Email             string         `json:"email,omitempty"`
	EmailVerified     bool           `json:"emailVerified"`
	DisplayName       string         `json:"displayName,omitempty"`
	PhotoURL          string         `json:"photoUrl,omitempty"`
	PasswordHash      string         `json:"passwordHash,omitempty"`
	Salt              string         `json:"salt,omitempty"`
	PasswordUpdatedAt int64          `json:"passwordUpdatedAt,omitempty"`
	ValidSince        string         `json:"validSince,omitempty"`
	CreatedAt         string         `json:"createdAt,omitempty"`
	LastLoginAt       string         `json:"lastLoginAt,omitempty"`
	LastRefreshAt     string         `json:"lastRefreshAt,omitempty"`
	Disabled          bool           `json:"disabled,omitempty"`
	CustomAttributes  string         `json:"customAttributes,omitempty"`
	ProviderUserInfo  []ProviderInfo `json:"providerUserInfo,omitempty"`
}

// password returns the password stored in the emulator's fake hash.
func (u *User) password() string {
	_, pw, _ := strings.Cut(u.PasswordHash, ":password=")
	return pw
}

func (u *User) setPassword(pw string, now time.Time) {
	u.Salt = "fakeSalt" + randomString(20)
	u.PasswordHash = "fakeHash:salt=" + u.Salt + ":password=" + pw
	u.PasswordUpdatedAt = now.UnixMilli()
}

func (u *User) provider(id string) *ProviderInfo {
	for i := range u.ProviderUserInfo {
		if u.ProviderUserInfo[i].ProviderID == id {
			return &u.ProviderUserInfo[i]
		}
	}
	return nil
}

// claims are the user's custom claims.
func (u *User) claims() map[string]any {
	if u.CustomAttributes == "" {
		return nil
	}
	var c map[string]any
	_ = json.Unmarshal([]byte(u.CustomAttributes), &c)
	return c
}

// OOBCode is a captured e-mail action (password reset, verification).
type OOBCode struct {
	Email       string    `json:"email"`
	RequestType string    `json:"requestType"`
	OOBCode     string    `json:"oobCode"`
	OOBLink     string    `json:"oobLink"`
	SentAt      time.Time `json:"sentAt"`
	ContinueURL string    `json:"-"`
}

// project holds one project's accounts and mail.
type project struct {
	Users map[string]*User  `json:"users"`
	Mail  []OOBCode         `json:"mail,omitempty"`
	Codes map[string]string `json:"-"` // oob code → localId
}

// store is the accounts of every project, saved to a file after each change.
type store struct {
	mu       sync.Mutex
	path     string // "" in memory
	projects map[string]*project
}

func openStore(dir string) (*store, error) {
	s := &store{projects: map[string]*project{}}
	if dir == "" {
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("auth data folder: %w", err)
	}
	s.path = filepath.Join(dir, "accounts.json")
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &s.projects); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", s.path, err)
	}
	for _, p := range s.projects {
		p.Codes = map[string]string{}
		if p.Users == nil {
			p.Users = map[string]*User{}
		}
		for _, m := range p.Mail {
			for id, u := range p.Users {
				if strings.EqualFold(u.Email, m.Email) {
					p.Codes[m.OOBCode] = id
				}
			}
		}
	}
	return s, nil
}

func (s *store) project(id string) *project {
	p := s.projects[id]
	if p == nil {
		p = &project{Users: map[string]*User{}, Codes: map[string]string{}}
		s.projects[id] = p
	}
	return p
}

// save writes every project atomically (temp file, fsync, rename); s.mu is held.
func (s *store) save() error {
	if s.path == "" {
		return nil
	}
	data, err := json.Marshal(s.projects)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path, data, "")
}

func (p *project) byEmail(email string) *User {
	for _, u := range p.Users {
		if u.Email != "" && strings.EqualFold(u.Email, email) {
			return u
		}
	}
	return nil
}

func (p *project) byProvider(providerID, rawID string) *User {
	for _, u := range p.Users {
		if pi := u.provider(providerID); pi != nil && pi.RawID == rawID {
			return u
		}
	}
	return nil
}

// sorted returns users ordered by localId, for paging.
func (p *project) sorted() []*User {
	out := make([]*User, 0, len(p.Users))
	for _, u := range p.Users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LocalID < out[j].LocalID })
	return out
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

func millis(t time.Time) string { return fmt.Sprint(t.UnixMilli()) }

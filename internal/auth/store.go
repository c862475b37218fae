// Package auth is the core of loupe's Firebase Authentication: the
// Identity Toolkit and Secure Token methods as the Firebase JS SDK and the
// Admin SDKs call them, with firebase-tools' Auth emulator as the
// behavioural reference (the same requests get the same answers and error
// codes). It has no HTTP in it: package auth/emulator is its adapter.
// The methods are split by domain: accounts.go (sign-up, sign-in, lookup,
// update, delete, refresh), oob.go (out-of-band codes and the actions they
// complete), idp.go (identity providers), admin.go (the owner's batch
// methods, import and export).
//
// Beyond the reference it keeps every e-mail it would send (password reset,
// verification) in an inbox with working action links, and the adapter
// serves a Google account chooser for local sign-in.
//
// Google sign-in contract for the web app in local mode: open
// /emulator/auth/handler?providerId=google.com&mode=loupe-chooser&origin=<app origin>
// in a popup; when the person picks or adds an account the page posts
// {type: "loupe-google-id-token", idToken: "<claims JSON>"} to the opener at
// that origin and closes. The app then calls
// signInWithCredential(GoogleAuthProvider.credential(idToken)).
//
// Tokens are unsigned JWTs ({"alg":"none"}) with production's iss and aud;
// users persist in the data dir as an append-only log (see store) and
// import/export in firebase-tools' format.
package auth

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loupe-dev/loupe/internal/changes"
	"github.com/loupe-dev/loupe/internal/wal"
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
	EmailVerified     *bool          `json:"emailVerified,omitempty"`
	DisplayName       string         `json:"displayName,omitempty"`
	PhotoURL          string         `json:"photoUrl,omitempty"`
	PasswordHash      string         `json:"passwordHash,omitempty"`
	Salt              string         `json:"salt,omitempty"`
	PasswordUpdatedAt int64          `json:"passwordUpdatedAt,omitempty"`
	ValidSince        string         `json:"validSince,omitempty"`
	CreatedAt         string         `json:"createdAt,omitempty"`
	LastLoginAt       string         `json:"lastLoginAt,omitempty"`
	LastRefreshAt     string         `json:"lastRefreshAt,omitempty"`
	Disabled          *bool          `json:"disabled,omitempty"`
	CustomAttributes  string         `json:"customAttributes,omitempty"`
	PhoneNumber       string         `json:"phoneNumber,omitempty"`
	ProviderUserInfo  []ProviderInfo `json:"providerUserInfo,omitempty"`
	// HashConfig is how an imported PasswordHash was made (batchCreate's
	// hashAlgorithm and its parameters); nil for the emulator's fake hash.
	// It is loupe's own field: kept in the data dir and in exports, never
	// in an API answer.
	HashConfig *HashConfig `json:"loupeHashConfig,omitempty"`
}

// password returns the password stored in the emulator's fake hash.
func (u *User) password() string {
	_, pw, _ := strings.Cut(u.PasswordHash, ":password=")
	return pw
}

// setPassword sets the password, revoking the tokens issued before.
func (u *User) setPassword(pw string, now time.Time) {
	u.Salt = "fakeSalt" + randomString(20)
	u.PasswordHash = "fakeHash:salt=" + u.Salt + ":password=" + pw
	u.HashConfig = nil
	u.PasswordUpdatedAt = now.UnixMilli()
	u.ValidSince = fmt.Sprint(now.Unix())
}

// verified reports whether the user's e-mail is verified.
func (u *User) verified() bool { return u.EmailVerified != nil && *u.EmailVerified }

// disabled reports whether the account is disabled.
func (u *User) disabled() bool { return u.Disabled != nil && *u.Disabled }

// flag is a set optional boolean: firebase-tools stores emailVerified and
// disabled only once something sets them, and answers accordingly.
func flag(b bool) *bool { return &b }

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

// indexKeys are the keys the project's index finds u by: its e-mail and
// each linked identity provider account.
func indexKeys(u *User) []string {
	var keys []string
	if u.Email != "" {
		keys = append(keys, emailKey(u.Email))
	}
	for _, p := range u.ProviderUserInfo {
		if p.ProviderID != "password" && p.RawID != "" {
			keys = append(keys, providerKey(p.ProviderID, p.RawID))
		}
	}
	return keys
}

func emailKey(email string) string        { return "e:" + strings.ToLower(email) }
func providerKey(id, rawID string) string { return "p:" + id + "\x00" + rawID }

// OOBCode is a captured e-mail action (password reset, verification).
type OOBCode struct {
	Email       string    `json:"email"`
	RequestType string    `json:"requestType"`
	OOBCode     string    `json:"oobCode"`
	OOBLink     string    `json:"oobLink"`
	SentAt      time.Time `json:"-"`
	ContinueURL string    `json:"-"`
}

// snapshot is a user as it was before the current request touched it.
type snapshot struct {
	json []byte   // nil: the user did not exist
	keys []string // its index keys
}

// project holds one project's accounts and mail. Handlers reach users only
// through its methods, which remember what each request touched: the store
// then logs exactly those users, or puts them back when the request fails.
type project struct {
	users map[string]*User
	mail  []OOBCode
	codes map[string]string // live oob code → localId
	index map[string]string // indexKeys → localId
	// members changes whenever a user is added, removed or replaced by
	// another object, so that the console's sorted listing knows when it
	// must sort again.
	members uint64

	// The current request's changes.
	before  map[string]snapshot
	newMail []int    // indexes into mail
	used    []string // codes used up
	reset   bool
}

// generation hands out project.members values.
var generation atomic.Uint64

func newProject() *project {
	return &project{members: generation.Add(1), users: map[string]*User{}, codes: map[string]string{}, index: map[string]string{}, before: map[string]snapshot{}}
}

// touch records localID's state before the request changes it.
func (p *project) touch(localID string) {
	if _, ok := p.before[localID]; ok {
		return
	}
	snap := snapshot{}
	if u := p.users[localID]; u != nil {
		snap.json, _ = json.Marshal(u)
		snap.keys = indexKeys(u)
	}
	p.before[localID] = snap
}

// user returns the user with localID, or nil.
func (p *project) user(localID string) *User {
	u := p.users[localID]
	if u != nil {
		p.touch(localID)
	}
	return u
}

// lookup returns the user an index key names, or nil.
func (p *project) lookup(key string) *User {
	id, ok := p.index[key]
	if !ok {
		return nil
	}
	return p.user(id)
}

func (p *project) byEmail(email string) *User {
	if email == "" {
		return nil
	}
	return p.lookup(emailKey(email))
}

func (p *project) byProvider(providerID, rawID string) *User {
	return p.lookup(providerKey(providerID, rawID))
}

// put adds or replaces a user.
func (p *project) put(u *User) {
	p.touch(u.LocalID)
	if p.users[u.LocalID] != u {
		p.members = generation.Add(1)
	}
	p.users[u.LocalID] = u
}

// remove deletes a user.
func (p *project) remove(localID string) {
	p.touch(localID)
	delete(p.users, localID)
	p.members = generation.Add(1)
}

// clear removes every user and e-mail.
func (p *project) clear() {
	*p = *newProject()
	p.reset = true
}

// send captures an e-mail whose code acts on localID.
func (p *project) send(m OOBCode, localID string) {
	p.mail = append(p.mail, m)
	p.newMail = append(p.newMail, len(p.mail)-1)
	p.codes[m.OOBCode] = localID
}

// useUp makes an oob code invalid.
func (p *project) useUp(code string) {
	if _, ok := p.codes[code]; ok {
		delete(p.codes, code)
		p.used = append(p.used, code)
	}
}

// sorted returns users ordered by localId, for paging.
func (p *project) sorted() []*User {
	out := make([]*User, 0, len(p.users))
	for _, u := range p.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *User) int { return strings.Compare(a.LocalID, b.LocalID) })
	return out
}

func (p *project) changed() bool {
	return p.reset || len(p.before) > 0 || len(p.newMail) > 0 || len(p.used) > 0
}

// reindex moves the index entries of a touched user from its old keys to
// its current ones.
func (p *project) reindex(localID string, snap snapshot) {
	for _, k := range snap.keys {
		if p.index[k] == localID {
			delete(p.index, k)
		}
	}
	if u := p.users[localID]; u != nil {
		for _, k := range indexKeys(u) {
			p.index[k] = localID
		}
	}
}

// replace sets (or with nil deletes) a user outside any request, as
// replaying the log does.
func (p *project) replace(localID string, u *User) {
	snap := snapshot{}
	if old := p.users[localID]; old != nil {
		snap.keys = indexKeys(old)
	}
	if u == nil {
		delete(p.users, localID)
	} else {
		p.users[localID] = u
	}
	p.members = generation.Add(1)
	p.reindex(localID, snap)
}

// records are the log records of the request's changes, in a stable order.
func (p *project) records(name string) []record {
	var recs []record
	if p.reset {
		recs = append(recs, record{Project: name, Reset: true})
	}
	ids := make([]string, 0, len(p.before))
	for id := range p.before {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := p.users[id]
		switch {
		case u != nil:
			if data, _ := json.Marshal(u); string(data) != string(p.before[id].json) {
				recs = append(recs, record{Project: name, Put: u})
			}
		case p.before[id].json != nil:
			recs = append(recs, record{Project: name, Delete: id})
		}
	}
	for _, i := range p.newMail {
		recs = append(recs, mailRecord(name, p.mail[i], p.codes[p.mail[i].OOBCode]))
	}
	for _, c := range p.used {
		recs = append(recs, record{Project: name, Used: c})
	}
	return recs
}

// commit ends a request: it indexes what changed and returns its records.
func (p *project) commit(name string) []record {
	recs := p.records(name)
	for id, snap := range p.before {
		p.reindex(id, snap)
	}
	p.forget()
	return recs
}

// rollback ends a failed request: touched users are put back as they were.
func (p *project) rollback() {
	p.members = generation.Add(1)
	for id, snap := range p.before {
		delete(p.users, id)
		if snap.json != nil {
			var u User
			_ = json.Unmarshal(snap.json, &u)
			p.users[id] = &u
		}
	}
	for _, i := range p.newMail {
		delete(p.codes, p.mail[i].OOBCode)
	}
	if len(p.newMail) > 0 {
		p.mail = p.mail[:p.newMail[0]]
	}
	p.forget()
}

func (p *project) forget() {
	clear(p.before)
	p.newMail, p.used, p.reset = nil, nil, false
}

// store is the accounts of every project. With a data dir every change is
// appended to a log and synced before the request is answered.
type store struct {
	mu       sync.Mutex
	projects map[string]*project
	log      *accountsLog // nil in memory
	// changed, when set, is told of the accounts each successful request
	// created and deleted, once they are durable.
	changed func([]AccountChange)
	// changes counts the requests that changed something (an account or
	// the mail) in any project, for the console's long poll; it is bumped
	// with s.mu held, so a reader holding s.mu sees it match the data.
	changes changes.Counter
	// listing is the console's sorted view of one project's accounts, as of
	// version listed (console.go).
	listing map[string]*listing
}

// bump records a change; s.mu is held.
func (s *store) bump() { s.changes.Bump() }

// AccountChange is an account a request created or deleted.
type AccountChange struct {
	Project string
	// User is the account as created, or as it was before its deletion.
	User    User
	Deleted bool
}

// accountChanges lists the accounts p's request created or deleted.
func (p *project) accountChanges(name string) []AccountChange {
	var out []AccountChange
	for id, snap := range p.before {
		u := p.users[id]
		switch {
		case snap.json == nil && u != nil:
			out = append(out, AccountChange{Project: name, User: *u})
		case snap.json != nil && u == nil:
			var old User
			_ = json.Unmarshal(snap.json, &old)
			out = append(out, AccountChange{Project: name, User: old, Deleted: true})
		}
	}
	return out
}

func openStore(dir string) (*store, error) {
	s := &store{projects: map[string]*project{}, listing: map[string]*listing{}}
	if dir == "" {
		return s, nil
	}
	w, err := openWAL(dir, s)
	if err != nil {
		return nil, err
	}
	s.log = w
	return s, nil
}

func (s *store) project(id string) *project {
	p := s.projects[id]
	if p == nil {
		p = newProject()
		s.projects[id] = p
	}
	return p
}

// run applies f to the store as one request: when f succeeds its changes
// are logged and durable before run returns; when it fails they are undone.
// Either way it returns only once every change it could have read is
// durable, so that no answer shows what a failed write then undoes.
func (s *store) run(f func() error) (error, error) {
	s.mu.Lock()
	apiErr := f()
	var recs []record
	var changes []AccountChange
	for name, p := range s.projects {
		switch {
		case !p.changed():
		case apiErr != nil:
			p.rollback()
		default:
			if s.changed != nil && !p.reset {
				changes = append(changes, p.accountChanges(name)...)
			}
			recs = append(recs, p.commit(name)...)
		}
	}
	var seq uint64
	var err error
	if len(recs) > 0 {
		s.bump()
	}
	switch {
	case s.log != nil && len(recs) > 0:
		seq, err = s.log.append(recs)
		if err == nil && s.log.bloated(s.liveRecords()) {
			err = s.log.compact(s)
		}
	case s.log != nil:
		// A request that changed nothing may have read changes not yet
		// durable: it answers once they are.
		seq = s.log.Appended()
	}
	s.mu.Unlock()
	if err == nil && seq > 0 {
		if err = s.log.Wait(seq); err != nil {
			s.reload()
		}
	}
	if err == nil && len(changes) > 0 {
		s.changed(changes)
	}
	return apiErr, err
}

// reload rebuilds the accounts from the log after a change could not be
// written to it (the log then holds none of the changes that failed), so
// that memory again holds exactly what a restart would find. Changes
// queued meanwhile are written first; when that fails too, they are
// dropped with the rest.
func (s *store) reload() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.log.Flush()
	s.projects = map[string]*project{}
	_, _ = wal.Replay(s.log.Path(), true, s.applyLine)
	s.bump()
}

// liveRecords is the number of records a compacted log holds; s.mu is held.
func (s *store) liveRecords() int {
	n := 0
	for _, p := range s.projects {
		n += 1 + len(p.users) + len(p.mail)
	}
	return n
}

// close syncs and closes the log.
func (s *store) close() error {
	if s.log == nil {
		return nil
	}
	return s.log.Close()
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

// Record is the account as the Admin SDK's UserRecord JSON (uid, email,
// metadata.creationTime, providerData, customClaims, …), the form Auth
// events carry it in.
func (u User) Record() map[string]any {
	r := map[string]any{"uid": u.LocalID, "emailVerified": u.EmailVerified != nil && *u.EmailVerified,
		"disabled": u.disabled(), "providerData": []any{}}
	for k, v := range map[string]string{"email": u.Email, "displayName": u.DisplayName, "photoURL": u.PhotoURL, "phoneNumber": u.PhoneNumber} {
		if v != "" {
			r[k] = v
		}
	}
	meta := map[string]any{}
	if t := millisTime(u.CreatedAt); t != "" {
		meta["creationTime"] = t
	}
	if t := millisTime(u.LastLoginAt); t != "" {
		meta["lastSignInTime"] = t
	}
	r["metadata"] = meta
	var providers []any
	for _, p := range u.ProviderUserInfo {
		providers = append(providers, map[string]any{"providerId": p.ProviderID, "uid": p.RawID, "email": p.Email,
			"displayName": p.DisplayName, "photoURL": p.PhotoURL})
	}
	if providers != nil {
		r["providerData"] = providers
	}
	if u.CustomAttributes != "" {
		var claims map[string]any
		if json.Unmarshal([]byte(u.CustomAttributes), &claims) == nil {
			r["customClaims"] = claims
		}
	}
	return r
}

// millisTime turns a time in Unix milliseconds into the UTC string the
// Admin SDK gives (new Date(ms).toUTCString()), or "".
func millisTime(ms string) string {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return ""
	}
	return time.UnixMilli(n).UTC().Format(http1123)
}

// http1123 is the layout of JavaScript's Date.toUTCString.
const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

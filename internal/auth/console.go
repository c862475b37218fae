package auth

import (
	"slices"
	"sort"
	"strings"

	"github.com/loupe-dev/loupe/internal/changes"
)

// The console's view of the accounts: a page at a time, searched on the
// server, and a change counter to wait on instead of re-reading the list.

// listing is one project's accounts ordered by localId, with the text a
// search matches (lower-cased uid, e-mail, display name and phone, built at
// the first search) and the count of each sign-in provider. It is sorted
// again only when the project's members change; its text and counts are
// rebuilt after any change.
type listing struct {
	members   uint64
	version   uint64
	users     []*User
	text      []string
	providers map[string]int
}

// listingOf returns project's listing as of the store's current version;
// s.mu is held.
func (s *store) listingOf(project string) *listing {
	p := s.project(project)
	l := s.listing[project]
	version := s.changes.Version()
	if l != nil && l.version == version && l.members == p.members {
		return l
	}
	switch {
	case l == nil:
		l = &listing{members: p.members, users: p.sorted()}
	case l.members != p.members:
		l = &listing{members: p.members, users: resorted(p, l.users)}
	}
	l = &listing{members: l.members, version: version, users: l.users, providers: map[string]int{}}
	for _, u := range l.users {
		for _, pi := range u.ProviderUserInfo {
			l.providers[pi.ProviderID]++
		}
	}
	s.listing[project] = l
	return l
}

// resorted returns p's users in localId order, from those of old (in that
// order, some since deleted or replaced): sorting only the users added
// since costs far less than sorting every one again.
func resorted(p *project, old []*User) []*User {
	kept := make([]*User, 0, len(p.users))
	for _, u := range old {
		if now := p.users[u.LocalID]; now != nil {
			kept = append(kept, now)
		}
	}
	if len(kept) == len(p.users) {
		return kept
	}
	seen := make(map[string]struct{}, len(kept))
	for _, u := range kept {
		seen[u.LocalID] = struct{}{}
	}
	var added []*User
	for id, u := range p.users {
		if _, ok := seen[id]; !ok {
			added = append(added, u)
		}
	}
	slices.SortFunc(added, func(a, b *User) int { return strings.Compare(a.LocalID, b.LocalID) })
	out := make([]*User, 0, len(p.users))
	i, j := 0, 0
	for i < len(kept) || j < len(added) {
		if j == len(added) || (i < len(kept) && kept[i].LocalID < added[j].LocalID) {
			out = append(out, kept[i])
			i++
		} else {
			out = append(out, added[j])
			j++
		}
	}
	return out
}

// UserPage is a page of the console's user list.
type UserPage struct {
	// Users are the accounts as the API answers them, ordered by localId.
	Users []map[string]any `json:"users"`
	// NextPageToken is the localId the next page starts after ("" at the end).
	NextPageToken string `json:"nextPageToken,omitempty"`
	// Total is the number of accounts of the project, Matched the number
	// the search finds (Total without one).
	Total   int `json:"total"`
	Matched int `json:"matched"`
	// Providers counts the accounts linked to each sign-in provider.
	Providers map[string]int `json:"providers"`
	// Version is the store's change counter when the page was read.
	Version uint64 `json:"version"`
}

// MaxUserPage bounds a console page.
const MaxUserPage = 1000

// Users returns up to limit accounts of project after the localId after,
// in localId order, that contain search (case-insensitive) in their uid,
// e-mail, display name or phone number; an empty search matches every one.
func (s *Engine) Users(project, search, after string, limit int) UserPage {
	if limit <= 0 || limit > MaxUserPage {
		limit = MaxUserPage
	}
	search = strings.ToLower(strings.TrimSpace(search))
	s.store.mu.Lock()
	l := s.store.listingOf(project)
	out := UserPage{Users: []map[string]any{}, Total: len(l.users), Providers: l.providers, Version: s.store.changes.Version()}
	start := 0
	if after != "" {
		start = sort.Search(len(l.users), func(i int) bool { return l.users[i].LocalID > after })
	}
	if search == "" {
		out.Matched = len(l.users)
		end := min(start+limit, len(l.users))
		for _, u := range l.users[start:end] {
			out.Users = append(out.Users, userInfo(u))
		}
		if end < len(l.users) {
			out.NextPageToken = l.users[end-1].LocalID
		}
	} else {
		if l.text == nil {
			// Built at the first search after a change.
			l.text = make([]string, len(l.users))
			for i, u := range l.users {
				l.text[i] = strings.ToLower(u.LocalID + "\x00" + u.Email + "\x00" + u.DisplayName + "\x00" + u.PhoneNumber)
			}
		}
		for i, text := range l.text {
			if !strings.Contains(text, search) {
				continue
			}
			out.Matched++
			if i < start {
				continue
			}
			if len(out.Users) == limit {
				if out.NextPageToken == "" {
					out.NextPageToken = out.Users[limit-1]["localId"].(string)
				}
				continue
			}
			out.Users = append(out.Users, userInfo(l.users[i]))
		}
	}
	var seq uint64
	if s.store.log != nil {
		seq = s.store.log.Appended()
	}
	s.store.mu.Unlock()
	// Show nothing a failing write could still undo.
	if seq > 0 {
		_ = s.store.log.Wait(seq)
	}
	return out
}

// Changes is the store's change counter: it grows with every request that
// changes an account or the mail of any project.
func (s *Engine) Changes() *changes.Counter { return &s.store.changes }

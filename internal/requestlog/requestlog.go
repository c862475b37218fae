// Package requestlog keeps the last requests clients (not the owner) made to
// Firestore, Storage and Auth, newest first, for the console's Requests tab:
// who asked for what, the outcome, and for rules decisions the trace of the
// evaluation. It is bounded (the oldest entries fall off) and held in memory
// only; readers page with an id cursor or wait for new entries.
package requestlog

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Outcomes of an entry.
const (
	Allowed = "allowed"
	Denied  = "denied"
	Error   = "error"
)

// Entry is one client request.
type Entry struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	// Service is firestore, storage or auth.
	Service string `json:"service"`
	// Method is the rules method (get, list, create, update, delete) for
	// Firestore and Storage, the Identity Toolkit method (signUp,
	// signInWithPassword, …) for Auth.
	Method string `json:"method"`
	// Path is the document (or collection, for list) path under the
	// database, the object name (or prefix) in the bucket, or the Auth
	// endpoint's path.
	Path     string `json:"path"`
	Project  string `json:"project,omitempty"`
	Database string `json:"database,omitempty"`
	Bucket   string `json:"bucket,omitempty"`
	// Outcome is allowed, denied (rules said no) or error (the rules
	// evaluation failed, or an Auth call answered an error).
	Outcome string `json:"outcome"`
	// Status is the HTTP status the client was answered (403 for a denial).
	Status  int    `json:"status"`
	Message string `json:"message,omitempty"`
	// Caller is the signed-in user, nil for an unauthenticated request.
	Caller *Caller `json:"caller"`
	// Request is the data the request carries (the document or object
	// metadata as a write would leave it, the Auth call's body with passwords
	// hidden); Resource is the document or object as stored before it.
	Request  any `json:"request,omitempty"`
	Resource any `json:"resource,omitempty"`
	// Rules is the rules decision, nil when no rules were in force or the
	// service has none (Auth).
	Rules *Rules `json:"rules,omitempty"`
	// PassThrough marks a request loupe forwarded to the upstream of a
	// service it does not emulate (loupe serve --pass-through).
	PassThrough bool `json:"passThrough,omitempty"`
}

// Caller is who made a request.
type Caller struct {
	UID    string         `json:"uid"`
	Claims map[string]any `json:"claims"`
}

// Rules is how the rules in force decided a request: the file, the allow
// statement that granted it (Line, 0 when none did), every allow statement
// tried and every expression evaluated with its value. Trace renders the
// last two lazily; its JSON is {"allows": […], "expressions": […]}.
type Rules struct {
	File   string
	Line   int
	Trace  json.Marshaler
	Source string // sent only with a single entry
}

// MarshalJSON renders {"file", "line", "allows", "expressions"} (and
// "source" when set).
func (r *Rules) MarshalJSON() ([]byte, error) {
	out := map[string]any{"file": r.File, "line": r.Line}
	if r.Trace != nil {
		data, err := r.Trace.MarshalJSON()
		if err != nil {
			return nil, err
		}
		var t map[string]json.RawMessage
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, err
		}
		for k, v := range t {
			out[k] = v
		}
	}
	if r.Source != "" {
		out["source"] = r.Source
	}
	return json.Marshal(out)
}

// DefaultCapacity is how many entries a Log keeps unless told otherwise.
const DefaultCapacity = 1000

// Log is a bounded, concurrency-safe log of entries. A nil *Log records
// nothing.
type Log struct {
	mu      sync.Mutex
	ring    []Entry // ring[i%cap] holds the entry with id i+1
	next    int64   // the id the next entry gets
	floor   int64   // entries up to this id were cleared
	changed chan struct{}
	done    chan struct{} // closed by Close
	closed  sync.Once
	observe func(Entry)
}

// Observe has f called with each entry added from now on, once it is
// recorded (f must not block).
func (l *Log) Observe(f func(Entry)) {
	l.mu.Lock()
	l.observe = f
	l.mu.Unlock()
}

// New returns a log keeping the last capacity entries.
func New(capacity int) *Log {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Log{ring: make([]Entry, capacity), next: 1, changed: make(chan struct{}), done: make(chan struct{})}
}

// Add records e, giving it the next id and (when zero) the current time.
func (l *Log) Add(e Entry) {
	if l == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	l.mu.Lock()
	e.ID = l.next
	l.ring[(l.next-1)%int64(len(l.ring))] = e
	l.next++
	close(l.changed)
	l.changed = make(chan struct{})
	observe := l.observe
	l.mu.Unlock()
	if observe != nil {
		observe(e)
	}
}

// After returns the entries with an id above after that are still held,
// newest first, at most limit of them (0: all) and those matching keep (nil:
// all); latest is the newest id recorded so far (0 when none).
func (l *Log) After(after int64, limit int, keep func(*Entry) bool) (entries []Entry, latest int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	latest = l.next - 1
	oldest := l.oldest()
	for id := latest; id >= oldest && id > after; id-- {
		e := &l.ring[(id-1)%int64(len(l.ring))]
		if keep != nil && !keep(e) {
			continue
		}
		entries = append(entries, *e)
		if limit > 0 && len(entries) == limit {
			break
		}
	}
	return entries, latest
}

// Get returns the entry with id, if it is still held.
func (l *Log) Get(id int64) (Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id < l.oldest() || id >= l.next {
		return Entry{}, false
	}
	return l.ring[(id-1)%int64(len(l.ring))], true
}

// oldest is the id of the oldest entry still held; the caller holds the lock.
func (l *Log) oldest() int64 {
	return max(1, l.floor+1, l.next-int64(len(l.ring)))
}

// Clear forgets every entry; ids keep counting up.
func (l *Log) Clear() {
	l.mu.Lock()
	l.floor = l.next - 1
	clear(l.ring)
	l.mu.Unlock()
}

// Close ends every Wait, now and later (the server is stopping); entries can
// still be added and read.
func (l *Log) Close() { l.closed.Do(func() { close(l.done) }) }

// Wait blocks until an entry with an id above after is recorded, ctx ends
// or the log is closed; it reports whether an entry was recorded.
func (l *Log) Wait(ctx context.Context, after int64) bool {
	for {
		l.mu.Lock()
		latest, changed := l.next-1, l.changed
		l.mu.Unlock()
		if latest > after {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-l.done:
			return false
		}
	}
}

// Package requestlog keeps the last requests clients (not the owner) made to
// Firestore, the Realtime Database, Storage and Auth, and the calls loupe
// passed through to an upstream, newest first, for the console's Requests
// tab: who asked for what, the outcome, and for rules decisions the trace of
// the evaluation. A passed-through stream is recorded when it opens and
// updated when it ends. The log is bounded (the oldest entries fall off) and
// held in memory only; readers page with an id cursor or wait for new
// entries and updates.
package requestlog

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/ring"
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
	// Service is firestore, database, storage or auth.
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
	// Open marks a stream (a gRPC or WebChannel listen or write stream, a
	// Realtime Database WebSocket or event stream) still open: its outcome
	// is what it was when it opened, and the entry is updated, Ended set,
	// when it ends.
	Open  bool      `json:"open,omitempty"`
	Ended time.Time `json:"ended,omitzero"`
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
	*ring.Ring[Entry]
	mu      sync.Mutex
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
	return &Log{Ring: ring.New[Entry](capacity)}
}

// Add records e, giving it the next id and (when zero) the current time.
func (l *Log) Add(e Entry) {
	if l == nil {
		return
	}
	l.notify(l.add(e))
}

func (l *Log) add(e Entry) Entry {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	return l.Ring.Add(func(id int64) Entry { e.ID = id; return e })
}

// OpenStream records e as a stream that is open and returns it as
// recorded, for EndStream; observers see it when it ends.
func (l *Log) OpenStream(e Entry) Entry {
	if l == nil {
		return e
	}
	e.Open = true
	return l.add(e)
}

// EndStream updates the entry OpenStream recorded to e (its outcome, status
// and message as the stream ended), marked ended now.
func (l *Log) EndStream(e Entry) {
	if l == nil {
		return
	}
	e.Open, e.Ended = false, time.Now().UTC()
	if e.ID != 0 {
		l.Ring.Update(e.ID, func(stored *Entry) { *stored = e })
	}
	l.notify(e)
}

// notify hands e to the observer, if any.
func (l *Log) notify(e Entry) {
	l.mu.Lock()
	observe := l.observe
	l.mu.Unlock()
	if observe != nil {
		observe(e)
	}
}

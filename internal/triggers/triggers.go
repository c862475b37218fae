// Package triggers delivers Firestore document events to functions as
// CloudEvents, in the shape Eventarc delivers them in production.
//
// A Trigger names an event type (created, updated, deleted, written), a
// document path pattern ("feedbackRequests/{r}/comments/{c}", with {x=**} for
// any depth) and the URL of a function. Publish hands the dispatcher the events
// of one commit; each matching trigger gets an HTTP POST in CloudEvents binary
// mode (ce-* headers, the JSON DocumentEventData as body). Delivery is
// at-least-once: a failed POST (no answer, or a status other than 2xx) is
// retried with exponential backoff until it succeeds or MaxAttempts is reached.
// Events of one document reach one trigger in commit order; different
// documents are delivered concurrently. Every attempt is kept in a bounded log.
//
// Background triggers can be disabled and enabled again, as the Emulator
// Hub's disableBackgroundTriggers and enableBackgroundTriggers switch them in
// firebase-tools (see Disable).
package triggers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Event types, as Eventarc names them.
const (
	Created = "google.cloud.firestore.document.v1.created"
	Updated = "google.cloud.firestore.document.v1.updated"
	Deleted = "google.cloud.firestore.document.v1.deleted"
	Written = "google.cloud.firestore.document.v1.written"
)

// Event is one document change of a commit.
type Event struct {
	// ID is unique per change; redeliveries keep it, so functions can dedupe.
	ID       string
	Project  string
	Database string
	// Document is the path under documents/, e.g. "feedbackRequests/r1".
	Document string
	// Created, Deleted tell which kind of write it was (neither: an update).
	Created, Deleted bool
	Time             time.Time
	// Data is the JSON DocumentEventData: {"value":…, "oldValue":…, "updateMask":…}.
	Data []byte
}

// matches reports whether the event is of the given Eventarc type.
func (e Event) matches(eventType string) bool {
	switch eventType {
	case Written:
		return true
	case Created:
		return e.Created
	case Deleted:
		return e.Deleted
	case Updated:
		return !e.Created && !e.Deleted
	}
	return false
}

// Trigger routes matching events to a function.
type Trigger struct {
	Name      string `json:"name"`
	EventType string `json:"eventType"`
	// Document is the path pattern, e.g. "feedbackRequests/{r}/comments/{c}".
	Document string `json:"document"`
	// URL is where the CloudEvent is POSTed.
	URL string `json:"url"`
}

// Options tune delivery.
type Options struct {
	Client      *http.Client
	MaxAttempts int           // default 8
	Backoff     time.Duration // first retry delay, doubled each time; default 50 ms
	LogSize     int           // attempts kept in the log; default 1000
	Logger      *slog.Logger
}

// Dispatcher delivers events to triggers.
type Dispatcher struct {
	opts     Options
	mu       sync.Mutex
	triggers []Trigger
	queues   map[string]*queue // by trigger name + document
	log      []Attempt
	// disabled are the latest intervals in which background triggers were
	// off, oldest first; the last has a zero to while they are off.
	disabled []interval
	// dropped counts the matching events not delivered since the last Disable.
	dropped int
	// draining counts the queues being delivered; idle is closed when it
	// falls to zero (and replaced when it rises from zero).
	draining int
	idle     chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
}

// interval is a span of commit times [from, to); to is zero while it lasts.
type interval struct{ from, to time.Time }

// maxIntervals bounds the intervals of disabled triggers remembered: an event
// published after its commit's interval has been forgotten is delivered.
const maxIntervals = 64

// Attempt is one delivery attempt, as the event log shows it.
type Attempt struct {
	EventID   string `json:"eventId"`
	Trigger   string `json:"trigger"`
	Document  string `json:"document"`
	Type      string `json:"type"`
	Attempt   int    `json:"attempt"`
	Status    int    `json:"status"`
	Error     string `json:"error,omitempty"`
	Delivered bool   `json:"delivered"`
	// At is when the attempt started: the POST to the function.
	At time.Time `json:"at"`
	// Latency is the time from the commit to the start of this attempt:
	// for a first attempt, how long the function waited for the event.
	Latency time.Duration `json:"latencyNs"`
	// Duration is how long the function took to answer (or fail).
	Duration time.Duration `json:"durationNs"`
}

type queue struct {
	pending []Event
	running bool
}

// New builds a dispatcher; Close stops it.
func New(opts Options) *Dispatcher {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 60 * time.Second}
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 8
	}
	if opts.Backoff == 0 {
		opts.Backoff = 50 * time.Millisecond
	}
	if opts.LogSize == 0 {
		opts.LogSize = 1000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	idle := make(chan struct{})
	close(idle)
	return &Dispatcher{opts: opts, queues: map[string]*queue{}, idle: idle, ctx: ctx, cancel: cancel}
}

// SetTriggers replaces the trigger list; a pattern that does not parse is an error.
func (d *Dispatcher) SetTriggers(ts []Trigger) error {
	for _, t := range ts {
		if _, err := compilePattern(t.Document); err != nil {
			return fmt.Errorf("trigger %s: %w", t.Name, err)
		}
		switch t.EventType {
		case Created, Updated, Deleted, Written:
		default:
			return fmt.Errorf("trigger %s: unknown event type %q", t.Name, t.EventType)
		}
	}
	d.mu.Lock()
	d.triggers = append([]Trigger(nil), ts...)
	d.mu.Unlock()
	return nil
}

// Disable turns background triggers off, as firebase-tools' Emulator Hub
// does on PUT /functions/disableBackgroundTriggers: the events of commits
// made from now until Enable are dropped, never queued and never delivered
// later (the official functions emulator answers such an event with 204
// "Background triggers are currently disabled." and nothing replays it).
// Events are judged by their commit time, so an event of a commit made while
// triggers were off is dropped even when it is published after Enable, and
// one of an earlier commit is delivered even when its delivery starts (or is
// retried) while they are off. (firebase-tools judges an event when it
// reaches the functions emulator, which the Firestore emulator sends it to as
// it commits; loupe publishes a commit just after answering its writer, so
// judging by arrival would let a write made between Disable and Enable slip
// through when Enable comes quickly.) Like the official switch, which waits for the
// functions emulator's work queue to empty, Disable returns once the events
// already queued have been delivered or given up on, or when ctx ends (with
// its error; triggers stay off). Disabling twice is the same as once.
func (d *Dispatcher) Disable(ctx context.Context) error {
	d.mu.Lock()
	if d.enabledLocked() {
		d.disabled = append(d.disabled, interval{from: time.Now()})
		if over := len(d.disabled) - maxIntervals; over > 0 {
			d.disabled = append([]interval(nil), d.disabled[over:]...)
		}
		d.dropped = 0
		d.opts.Logger.Info("background triggers disabled: events of commits made until they are enabled again are not delivered")
	}
	idle := d.idle
	d.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Enable turns background triggers on again (PUT
// /functions/enableBackgroundTriggers): events of commits made from now on
// are delivered. It logs how many events were dropped while they were off.
func (d *Dispatcher) Enable() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.enabledLocked() {
		return
	}
	d.disabled[len(d.disabled)-1].to = time.Now()
	d.opts.Logger.Info("background triggers enabled", "eventsNotDelivered", d.dropped)
}

// Enabled reports whether background triggers are on.
func (d *Dispatcher) Enabled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.enabledLocked()
}

func (d *Dispatcher) enabledLocked() bool {
	return len(d.disabled) == 0 || !d.disabled[len(d.disabled)-1].to.IsZero()
}

// disabledAt reports whether triggers were off at commit time t; d.mu is held.
func (d *Dispatcher) disabledAt(t time.Time) bool {
	for _, iv := range d.disabled {
		if !t.Before(iv.from) && (iv.to.IsZero() || t.Before(iv.to)) {
			return true
		}
	}
	return false
}

// Publish queues the events of one commit for every matching trigger, but
// drops those of a commit made while triggers were disabled. It does not wait
// for delivery.
func (d *Dispatcher) Publish(events ...Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return
	}
	for _, t := range d.triggers {
		pattern, _ := compilePattern(t.Document)
		for _, e := range events {
			if !e.matches(t.EventType) || !pattern.match(e.Document) {
				continue
			}
			if d.disabledAt(e.Time) {
				d.dropped++
				continue
			}
			key := t.Name + "\x00" + e.Document
			q := d.queues[key]
			if q == nil {
				q = &queue{}
				d.queues[key] = q
			}
			q.pending = append(q.pending, e)
			if !q.running {
				q.running = true
				if d.draining == 0 {
					d.idle = make(chan struct{})
				}
				d.draining++
				go d.drain(t, key, q)
			}
		}
	}
}

// drain delivers one (trigger, document) queue in order until it is empty.
func (d *Dispatcher) drain(t Trigger, key string, q *queue) {
	for {
		d.mu.Lock()
		if len(q.pending) == 0 || d.ctx.Err() != nil {
			q.running = false
			delete(d.queues, key)
			if d.draining--; d.draining == 0 {
				close(d.idle)
			}
			d.mu.Unlock()
			return
		}
		e := q.pending[0]
		q.pending = q.pending[1:]
		d.mu.Unlock()
		d.deliver(t, e)
	}
}

func (d *Dispatcher) deliver(t Trigger, e Event) {
	delay := d.opts.Backoff
	for attempt := 1; attempt <= d.opts.MaxAttempts; attempt++ {
		start := time.Now()
		status, err := d.post(t, e)
		ok := err == nil && status >= 200 && status < 300
		a := Attempt{EventID: e.ID, Trigger: t.Name, Document: e.Document, Type: t.EventType, Attempt: attempt,
			Status: status, Delivered: ok, At: start.UTC(), Latency: start.Sub(e.Time), Duration: time.Since(start)}
		if err != nil {
			a.Error = err.Error()
		}
		d.record(a)
		if ok {
			return
		}
		if attempt == d.opts.MaxAttempts {
			d.opts.Logger.Error("function delivery given up", "trigger", t.Name, "document", e.Document, "event", e.ID, "attempts", attempt, "status", status, "err", err)
			return
		}
		d.opts.Logger.Warn("function delivery failed", "trigger", t.Name, "document", e.Document, "attempt", attempt, "status", status, "err", err)
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, 10*time.Second)
	}
}

func (d *Dispatcher) post(t Trigger, e Event) (int, error) {
	req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, t.URL, bytes.NewReader(e.Data))
	if err != nil {
		return 0, err
	}
	source := "//firestore.googleapis.com/projects/" + e.Project + "/databases/" + e.Database
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("ce-specversion", "1.0")
	h.Set("ce-id", e.ID)
	h.Set("ce-type", t.EventType)
	h.Set("ce-source", source)
	h.Set("ce-subject", "documents/"+e.Document)
	h.Set("ce-time", e.Time.UTC().Format(time.RFC3339Nano))
	h.Set("ce-project", e.Project)
	h.Set("ce-database", e.Database)
	h.Set("ce-namespace", "(default)")
	h.Set("ce-document", e.Document)
	h.Set("ce-location", "us-central1")
	resp, err := d.opts.Client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (d *Dispatcher) record(a Attempt) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, a)
	if over := len(d.log) - d.opts.LogSize; over > 0 {
		d.log = append([]Attempt(nil), d.log[over:]...)
	}
}

// Log returns the delivery attempts kept, oldest first.
func (d *Dispatcher) Log() []Attempt {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Attempt(nil), d.log...)
}

// Wait blocks until every queued event has been delivered or given up on.
func (d *Dispatcher) Wait() {
	d.mu.Lock()
	idle := d.idle
	d.mu.Unlock()
	<-idle
}

// Close stops retrying and waits for in-flight deliveries to return.
func (d *Dispatcher) Close() {
	d.cancel()
	d.Wait()
}

// pattern is a compiled document path pattern.
type pattern struct{ segments []string }

func compilePattern(p string) (pattern, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return pattern{}, fmt.Errorf("empty document pattern")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasSuffix(s, "=**}") && i != len(segs)-1 {
			return pattern{}, fmt.Errorf("document pattern %q: {x=**} must be the last segment", p)
		}
		if s == "" {
			return pattern{}, fmt.Errorf("document pattern %q has an empty segment", p)
		}
	}
	return pattern{segs}, nil
}

// match reports whether a document path fits the pattern: {x} matches one
// segment, {x=**} the rest of the path (at least one segment).
func (p pattern) match(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, ps := range p.segments {
		if strings.HasSuffix(ps, "=**}") {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		wild := strings.HasPrefix(ps, "{") && strings.HasSuffix(ps, "}")
		if !wild && ps != segs[i] {
			return false
		}
	}
	return len(segs) == len(p.segments)
}

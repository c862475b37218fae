package triggers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Options tune delivery.
type Options struct {
	MaxAttempts int           // default 8
	Backoff     time.Duration // first retry delay, doubled each time; default 50 ms
	LogSize     int           // attempts kept in the log; default 1000
	Logger      *slog.Logger
}

// Table routes published events to the triggers owners declared.
type Table struct {
	opts   Options
	mu     sync.Mutex
	owners map[string]*owner
	queues map[string]*queue // by owner, trigger name and resource
	limits map[string]*limiter
	log    []Attempt
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

// owner is one codebase's triggers and the generations of its functions.
type owner struct {
	triggers []Trigger
	patterns []pattern
	// gen is the generation of the current functions; old are earlier ones
	// with deliveries still under way.
	gen *generation
	old []*generation
}

// generation is one SetTriggers' functions as deliveries see them: its
// context ends, with the reason as cause, when Unavailable declares them gone.
type generation struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	active int           // deliveries under way
	done   chan struct{} // closed once replaced and no delivery is under way
}

// errTriggerGone is an attempt's error when its trigger is no longer declared.
var errTriggerGone = errors.New("the trigger is no longer declared")

// unavailableGrace is how long a delivery that failed without an answer
// waits for Unavailable to say why: a process that dies closes its
// connections just before whoever waits for it hears of the exit.
const unavailableGrace = 250 * time.Millisecond

// interval is a span of event times [from, to); to is zero while it lasts.
type interval struct{ from, to time.Time }

// maxIntervals bounds the intervals of disabled triggers remembered: an event
// published after its interval has been forgotten is delivered.
const maxIntervals = 64

// Attempt is one delivery attempt, as the event log shows it.
type Attempt struct {
	EventID string `json:"eventId"`
	// Owner is the codebase of the trigger's function.
	Owner    string `json:"owner"`
	Trigger  string `json:"trigger"`
	Source   Source `json:"source"`
	Resource string `json:"resource"`
	Type     string `json:"type"`
	Attempt  int    `json:"attempt"`
	Status   int    `json:"status"`
	Error    string `json:"error,omitempty"`
	// Delivered is true when the function took the event; GaveUp when this
	// was the event's last attempt without that.
	Delivered bool `json:"delivered"`
	GaveUp    bool `json:"gaveUp,omitempty"`
	// At is when the attempt started.
	At time.Time `json:"at"`
	// Latency is the time from the event to the start of this attempt: for a
	// first attempt, how long the function waited for the event.
	Latency time.Duration `json:"latencyNs"`
	// Duration is how long the function took to answer (or fail).
	Duration time.Duration `json:"durationNs"`
}

type queue struct {
	pending []Event
	running bool
}

// New builds a table; Close stops it.
func New(opts Options) *Table {
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
	return &Table{opts: opts, owners: map[string]*owner{}, queues: map[string]*queue{}, limits: map[string]*limiter{},
		idle: idle, ctx: ctx, cancel: cancel}
}

func (d *Table) newGeneration() *generation {
	ctx, cancel := context.WithCancelCause(d.ctx)
	return &generation{ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// SetTriggers replaces the triggers of owner (a codebase); a pattern that
// does not parse is an error. Events already queued go to the deliverer
// their trigger (by name) has when they are delivered; those of a trigger no
// longer declared are given up. It ends Unavailable's spell for the owner.
func (d *Table) SetTriggers(name string, ts []Trigger) error {
	if err := Check(ts); err != nil {
		return err
	}
	for _, t := range ts {
		if t.Deliver == nil {
			return fmt.Errorf("trigger %s: no deliverer", t.Name)
		}
	}
	ps := make([]pattern, len(ts))
	for i, t := range ts {
		if t.Pattern != "" {
			ps[i], _ = compilePattern(t.Pattern)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.owner(name)
	o.triggers, o.patterns = slices.Clone(ts), ps
	old := o.gen
	o.gen = d.newGeneration()
	if old.active == 0 {
		close(old.done)
	} else {
		o.old = append(o.old, old)
	}
	return nil
}

// owner returns the owner called name, made on first use; d.mu is held.
func (d *Table) owner(name string) *owner {
	o := d.owners[name]
	if o == nil {
		o = &owner{gen: d.newGeneration()}
		d.owners[name] = o
	}
	return o
}

// Triggers returns every declared trigger by owner.
func (d *Table) Triggers() map[string][]Trigger {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][]Trigger{}
	for name, o := range d.owners {
		out[name] = slices.Clone(o.triggers)
	}
	return out
}

// Unavailable declares owner's functions gone with err as the reason (e.g.
// "the functions process exited"): deliveries under way to them end, and
// every attempt until the owner's next SetTriggers fails at once, with err
// recorded as its error and retried as any failure to reach them is.
func (d *Table) Unavailable(name string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.owner(name).gen.cancel(err)
}

// Retired waits until the deliveries to owner's functions begun before its
// latest SetTriggers have returned, or ctx ends (with its error).
func (d *Table) Retired(ctx context.Context, name string) error {
	d.mu.Lock()
	old := slices.Clone(d.owner(name).old)
	d.mu.Unlock()
	for _, g := range old {
		select {
		case <-g.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// begin finds the trigger called t.Name of owner in its current generation
// and counts a delivery under way in it; end must follow when err is nil.
func (d *Table) begin(name string, trigger string) (g *generation, t Trigger, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.owner(name)
	i := slices.IndexFunc(o.triggers, func(t Trigger) bool { return t.Name == trigger })
	if i < 0 {
		return nil, Trigger{}, errTriggerGone
	}
	if o.gen.ctx.Err() != nil {
		return nil, Trigger{}, context.Cause(o.gen.ctx)
	}
	o.gen.active++
	return o.gen, o.triggers[i], nil
}

func (d *Table) end(name string, g *generation) {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.owner(name)
	if g.active--; g.active == 0 && g != o.gen {
		close(g.done)
		o.old = slices.DeleteFunc(o.old, func(x *generation) bool { return x == g })
	}
}

// Disable turns background triggers off, as firebase-tools' Emulator Hub
// does on PUT /functions/disableBackgroundTriggers: events that happen from
// now until Enable are dropped, never queued and never delivered later (the
// official functions emulator answers such an event with 204 "Background
// triggers are currently disabled." and nothing replays it). Events are
// judged by their time, so an event of a commit made while triggers were off
// is dropped even when it is published after Enable, and one of an earlier
// commit is delivered even when its delivery starts (or is retried) while
// they are off. (firebase-tools judges an event when it reaches the functions
// emulator, which the Firestore emulator sends it to as it commits; loupe
// publishes a commit just after answering its writer, so judging by arrival
// would let a write made between Disable and Enable slip through when Enable
// comes quickly.) Like the official switch, which waits for the functions
// emulator's work queue to empty, Disable returns once the events already
// queued have been delivered or given up on, or when ctx ends (with its
// error; triggers stay off). Disabling twice is the same as once.
func (d *Table) Disable(ctx context.Context) error {
	d.mu.Lock()
	if d.enabledLocked() {
		d.disabled = append(d.disabled, interval{from: time.Now()})
		if over := len(d.disabled) - maxIntervals; over > 0 {
			d.disabled = append([]interval(nil), d.disabled[over:]...)
		}
		d.dropped = 0
		d.opts.Logger.Info("background triggers disabled: events until they are enabled again are not delivered")
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
// /functions/enableBackgroundTriggers): events from now on are delivered.
// It logs how many events were dropped while they were off.
func (d *Table) Enable() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.enabledLocked() {
		return
	}
	d.disabled[len(d.disabled)-1].to = time.Now()
	d.opts.Logger.Info("background triggers enabled", "eventsNotDelivered", d.dropped)
}

// Enabled reports whether background triggers are on.
func (d *Table) Enabled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.enabledLocked()
}

func (d *Table) enabledLocked() bool {
	return len(d.disabled) == 0 || !d.disabled[len(d.disabled)-1].to.IsZero()
}

// disabledAt reports whether triggers were off at time t; d.mu is held.
func (d *Table) disabledAt(t time.Time) bool {
	for _, iv := range d.disabled {
		if !t.Before(iv.from) && (iv.to.IsZero() || t.Before(iv.to)) {
			return true
		}
	}
	return false
}

// Publish queues the events for every matching trigger, but drops those that
// happened while triggers were disabled. It does not wait for delivery, and
// reports how many deliveries it queued.
func (d *Table) Publish(events ...Event) int {
	return d.publish("", events)
}

// PublishTo is Publish for the triggers of one owner alone: the events that
// happened while its functions were first being built.
func (d *Table) PublishTo(name string, events ...Event) int {
	return d.publish(name, events)
}

// publish queues events for the matching triggers of owner only (all
// owners when only is "").
func (d *Table) publish(only string, events []Event) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return 0
	}
	writes := make([]*dataEvents, len(events))
	for i, e := range events {
		if e.Write != nil {
			writes[i] = &dataEvents{e: e, byPath: map[string]*Event{}}
		}
	}
	queued := 0
	for name, o := range d.owners {
		if only != "" && name != only {
			continue
		}
		for i, t := range o.triggers {
			for j, e := range events {
				if !t.inProject(e) {
					continue
				}
				matched := []Event{e}
				if writes[j] != nil {
					matched = writes[j].matching(t, o.patterns[i])
				} else if !t.matches(e, o.patterns[i]) {
					continue
				}
				for _, e := range matched {
					if d.disabledAt(e.Time) {
						d.dropped++
						continue
					}
					d.enqueue(name, t, e)
					queued++
				}
			}
		}
	}
	return queued
}

// Deliver queues e for owner's trigger called trigger alone, whether or not
// it matches (a scheduled function run on demand). It reports false when no
// such trigger is declared. Disabled triggers do not stop it: it is asked for.
func (d *Table) Deliver(name, trigger string, e Event) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	o := d.owners[name]
	if o == nil || d.ctx.Err() != nil {
		return false
	}
	i := slices.IndexFunc(o.triggers, func(t Trigger) bool { return t.Name == trigger })
	if i < 0 {
		return false
	}
	d.enqueue(name, o.triggers[i], e)
	return true
}

// enqueue adds e to the queue of owner's trigger t and its resource; d.mu is held.
func (d *Table) enqueue(name string, t Trigger, e Event) {
	key := name + "\x00" + t.Name + "\x00" + e.Resource
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
		go d.drain(name, t, key, q)
	}
}

// drain delivers one (trigger, resource) queue in order until it is empty.
func (d *Table) drain(name string, t Trigger, key string, q *queue) {
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
		d.deliver(name, t, e)
	}
}

// deliver makes the attempts at handing e to owner's trigger t.
func (d *Table) deliver(name string, t Trigger, e Event) {
	maxAttempts := d.opts.MaxAttempts
	if t.Policy.MaxAttempts > 0 {
		maxAttempts = t.Policy.MaxAttempts
	}
	delay := d.opts.Backoff
	if t.Policy.MinBackoff > 0 {
		delay = t.Policy.MinBackoff
	}
	maxDelay := 10 * time.Second
	if t.Policy.MaxBackoff > 0 {
		maxDelay = t.Policy.MaxBackoff
	}
	lim := d.limiter(name, t)
	for attempt := 1; ; attempt++ {
		if err := lim.acquire(d.ctx); err != nil {
			return
		}
		start := time.Now()
		status, err := d.attempt(name, t, e, attempt)
		lim.release()
		ok := err == nil && status >= 200 && status < 300
		// A failure to reach the function is always retried; the function's
		// own failure only when its trigger asks for retries.
		retry := !ok && !errors.Is(err, errTriggerGone) && (err != nil || t.Retry) && attempt < maxAttempts
		a := Attempt{EventID: e.ID, Owner: name, Trigger: t.Name, Source: e.Source, Resource: e.Resource, Type: t.EventType,
			Attempt: attempt, Status: status, Delivered: ok, GaveUp: !ok && !retry,
			At: start.UTC(), Latency: start.Sub(e.Time), Duration: time.Since(start)}
		if err != nil {
			a.Error = err.Error()
		}
		d.record(a)
		if ok {
			return
		}
		if !retry {
			d.opts.Logger.Error("function delivery given up", "function", t.Name, "codebase", name, "resource", e.Resource,
				"event", e.ID, "attempts", attempt, "status", status, "err", err)
			return
		}
		d.opts.Logger.Warn("function delivery failed", "function", t.Name, "codebase", name, "resource", e.Resource,
			"attempt", attempt, "status", status, "err", err)
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(delay):
		}
		if t.Policy.MaxDoublings == 0 || attempt <= t.Policy.MaxDoublings {
			delay *= 2
		}
		delay = min(delay, maxDelay)
	}
}

// attempt hands e to the current deliverer of owner's trigger t. An error
// without an answer becomes Unavailable's reason when that comes within
// unavailableGrace.
func (d *Table) attempt(name string, t Trigger, e Event, n int) (int, error) {
	g, current, err := d.begin(name, t.Name)
	if err != nil {
		return 0, err
	}
	defer d.end(name, g)
	status, err := current.Deliver.Deliver(context.WithValue(g.ctx, attemptKey{}, n), current, e)
	if err != nil {
		select {
		case <-g.ctx.Done():
			return 0, context.Cause(g.ctx)
		case <-time.After(unavailableGrace):
			return status, err
		}
	}
	return status, nil
}

func (d *Table) record(a Attempt) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log = append(d.log, a)
	if over := len(d.log) - d.opts.LogSize; over > 0 {
		d.log = append([]Attempt(nil), d.log[over:]...)
	}
}

// Log returns the delivery attempts kept, oldest first.
func (d *Table) Log() []Attempt {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Attempt(nil), d.log...)
}

// Wait blocks until every queued event has been delivered or given up on.
func (d *Table) Wait() {
	d.mu.Lock()
	idle := d.idle
	d.mu.Unlock()
	<-idle
}

// Close stops retrying and waits for deliveries under way to return.
func (d *Table) Close() {
	d.cancel()
	d.Wait()
}

type attemptKey struct{}

// AttemptOf tells a Deliverer which attempt at its event it is making (1
// for the first), as Cloud Tasks' X-CloudTasks-TaskRetryCount tells a task.
func AttemptOf(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}

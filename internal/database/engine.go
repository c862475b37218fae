package database

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/wal"
)

// Options configure an Engine.
type Options struct {
	// Dir is the data folder; "" keeps everything in memory.
	Dir string
	// Now is the clock (time.Now when nil): server timestamps and rules'
	// now.
	Now func() time.Time
	// Logger receives index warnings; nil discards them.
	Logger *slog.Logger
}

// Engine holds one JSON tree per namespace. Writes are applied in memory
// under their namespace's lock (so that a write's rules check holds up only
// the writes to its namespace), made durable in order (group-committed to
// the log), then published: readers and listeners see a write only once it
// is on disk.
type Engine struct {
	opts  Options
	authz atomic.Pointer[authorizerBox]

	mu      sync.Mutex // the pipeline: seq, queue, closed; taken after a namespace's mu
	nsMu    sync.RWMutex
	nss     map[string]*namespace
	seq     uint64
	queue   []*pending
	wake    chan struct{}
	closed  bool
	stopped chan struct{}
	log     *commitLog

	pubMu     sync.Mutex // publishing: durable roots, listeners, subscribers
	published uint64
	pubCond   *sync.Cond
	subs      map[int]func(*Commit)
	nextSub   int
}

type authorizerBox struct{ a Authorizer }

// namespace is one database instance's tree.
type namespace struct {
	name      string
	mu        sync.Mutex // writers of this namespace: latest, queued
	latest    *Node
	queued    uint64 // the seq of the last commit queued
	durable   atomic.Pointer[Node]
	listeners map[*listener]struct{}    // under Engine.pubMu
	watchers  map[*pathWatcher]struct{} // under Engine.pubMu
}

// pathWatcher is a WatchPaths subscription.
type pathWatcher struct{ fn func([]Path) }

// Commit is one write as applied: the namespace's roots before and after,
// and each location it set.
type Commit struct {
	NS     string
	Time   time.Time
	Seq    uint64
	Path   Path // where the write was addressed
	Merge  bool // an update of several children of Path
	Before *Node
	After  *Node
	// Changes are the locations written, each with its data before and after.
	Changes []Change
	// Import marks data loaded from an export or by the emulator's import
	// request, which fires no triggers.
	Import bool
	// Caller is who wrote it.
	Caller identity.Principal
}

// Change is one location a commit set.
type Change struct {
	Path          Path
	Before, After *Node
}

type pending struct {
	c    *Commit
	done chan error
}

// Open loads the data folder (when Options.Dir is set) and starts the
// commit pipeline.
func Open(opts Options) (*Engine, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{opts: opts, nss: map[string]*namespace{}, wake: make(chan struct{}, 1), stopped: make(chan struct{}), subs: map[int]func(*Commit){}}
	e.pubCond = sync.NewCond(&e.pubMu)
	if opts.Dir != "" {
		log, err := openCommitLog(opts.Dir, func(ns string, p Path, n *Node) {
			s := e.namespace(ns)
			s.latest = s.latest.WithAt(p, n)
		})
		if err != nil {
			return nil, err
		}
		for _, s := range e.nss {
			s.durable.Store(s.latest)
		}
		e.log = log
		if log.due(0) || log.legacy {
			if err := log.rewrite(e.roots()); err != nil {
				log.close()
				return nil, fmt.Errorf("database: compact the log: %w", err)
			}
		}
	}
	go e.run()
	return e, nil
}

// Close stops the pipeline once the queued writes are durable and closes
// the log.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.signal()
	<-e.stopped
	if e.log != nil {
		return e.log.close()
	}
	return nil
}

// Authorizer decides whether a caller may read or write; the composition
// root installs the rules owner's. Without one every access is allowed.
type Authorizer interface {
	Read(ctx context.Context, a ReadAccess) error
	Write(ctx context.Context, a WriteAccess) error
}

// Indexes say which queries the rules index (".indexOn"): an unindexed
// query by child or value is answered all the same, with a warning.
type Indexes interface {
	Indexed(ns string, p Path, ix Index) bool
}

// ReadAccess is a read (or a listen) to judge.
type ReadAccess struct {
	NS     string
	Path   Path
	Query  Query
	Root   *Node
	Caller identity.Principal
	Time   time.Time
	// Method is how the read came: "get" or "listen".
	Method string
}

// WriteAccess is a write to judge: the tree before and after it.
type WriteAccess struct {
	NS      string
	Path    Path
	Method  string // "set" or "update"
	Before  *Node
	After   *Node
	Changes []Change
	Caller  identity.Principal
	Time    time.Time
	// Value is the data written, as the client sent it (for the request
	// log).
	Value any
}

// SetAuthorizer installs a.
func (e *Engine) SetAuthorizer(a Authorizer) { e.authz.Store(&authorizerBox{a}) }

func (e *Engine) authorizer() Authorizer {
	if b := e.authz.Load(); b != nil {
		return b.a
	}
	return nil
}

var nsPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,62}$`)

// CheckNamespace reports whether name can name a namespace.
func CheckNamespace(name string) error {
	if !nsPattern.MatchString(name) {
		return errs.Errorf(errs.InvalidArgument, "Invalid namespace %q", name)
	}
	return nil
}

// HostNamespace is NAME of NAME.firebaseio.com, NAME.firebasedatabase.app
// (any region) or NAME.localhost, else "".
func HostNamespace(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	name, domain, ok := strings.Cut(strings.ToLower(host), ".")
	if !ok {
		return ""
	}
	if domain == "firebaseio.com" || domain == "localhost" || domain == "firebasedatabase.app" || strings.HasSuffix(domain, ".firebasedatabase.app") {
		return name
	}
	return ""
}

// namespace returns (creating) the namespace called name.
func (e *Engine) namespace(name string) *namespace {
	e.nsMu.RLock()
	s, ok := e.nss[name]
	e.nsMu.RUnlock()
	if ok {
		return s
	}
	e.nsMu.Lock()
	defer e.nsMu.Unlock()
	if s, ok := e.nss[name]; ok {
		return s
	}
	s = &namespace{name: name, latest: Empty, listeners: map[*listener]struct{}{}, watchers: map[*pathWatcher]struct{}{}}
	s.durable.Store(Empty)
	e.nss[name] = s
	return s
}

func (e *Engine) lookup(name string) *namespace {
	e.nsMu.RLock()
	defer e.nsMu.RUnlock()
	return e.nss[name]
}

// Namespaces lists the namespaces that hold data, sorted.
func (e *Engine) Namespaces() []string {
	e.nsMu.RLock()
	defer e.nsMu.RUnlock()
	var out []string
	for name, s := range e.nss {
		if !s.durable.Load().IsEmpty() {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Root is the namespace's durable tree.
func (e *Engine) Root(ns string) *Node {
	if s := e.lookup(ns); s != nil {
		return s.durable.Load()
	}
	return Empty
}

// roots is every namespace's latest tree; the caller has the engine to
// itself (Open).
func (e *Engine) roots() map[string]*Node {
	e.nsMu.RLock()
	defer e.nsMu.RUnlock()
	out := make(map[string]*Node, len(e.nss))
	for name, s := range e.nss {
		out[name] = s.latest
	}
	return out
}

// Get reads the data at p (narrowed by q) once the caller may read it.
func (e *Engine) Get(ctx context.Context, ns string, p Path, q Query, caller identity.Principal) (*Node, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	root := e.Root(ns)
	if err := e.authorizeRead(ctx, ReadAccess{NS: ns, Path: p, Query: q, Root: root, Caller: caller, Method: "get"}); err != nil {
		return nil, err
	}
	return q.Apply(root.At(p)), nil
}

func (e *Engine) authorizeRead(ctx context.Context, a ReadAccess) error {
	if a.Caller.Owner {
		return nil
	}
	az := e.authorizer()
	if az == nil {
		return nil
	}
	a.Time = e.opts.Now()
	return az.Read(ctx, a)
}

// Op is the kind of a write.
type Op uint8

// The writes.
const (
	OpSet    Op = iota // replace the data at Path with Value
	OpUpdate           // set each of Value's child paths below Path
)

// Write is one write request.
type Write struct {
	NS   string
	Path Path
	Op   Op
	// Value is decoded JSON (json.Number or float64 numbers); for OpUpdate
	// a map of child paths (which may hold slashes) to values.
	Value any
	// IfHash, when set, makes the write conditional: it applies only if
	// the data at Path has this hash now ("" for no data).
	IfHash *string
	Caller identity.Principal
	// Import marks a bulk load that fires no triggers.
	Import bool
}

// StaleError is the answer to a conditional write whose location changed:
// Hash is the hash of the data there now.
type StaleError struct {
	Hash string
	Data *Node
}

func (e *StaleError) Error() string { return "datastale" }

// Write applies w and returns once it is durable and published, with the
// commit. A conditional write whose location changed fails with a
// FailedPrecondition error whose cause is a *StaleError, after the data
// that changed it has been published (so a listener of the caller's has
// seen it).
func (e *Engine) Write(ctx context.Context, w Write) (*Commit, error) { return e.Submit(ctx, w)() }

// Submit applies w in memory now, in the order of the calls, and returns a
// func that waits until it is durable and published (Write's answer).
// Callers that pipeline several writes submit them in order and wait in
// order.
func (e *Engine) Submit(ctx context.Context, w Write) (wait func() (*Commit, error)) {
	c, seq, err := e.submit(ctx, w)
	if err != nil {
		return func() (*Commit, error) {
			if seq > 0 {
				e.waitPublished(seq)
			}
			return nil, err
		}
	}
	return func() (*Commit, error) {
		if err := <-c.done; err != nil {
			return nil, err
		}
		return c.c, nil
	}
}

// Check judges w as Write would (data, condition, rules) without applying
// it: for writes queued to run later, such as onDisconnect's.
func (e *Engine) Check(ctx context.Context, w Write) error {
	if err := e.MayWrite(ctx, w.NS, w.Path, w.Op, w.Caller); err != nil {
		return err
	}
	d, err := decode(w)
	if err != nil {
		return err
	}
	s := e.namespace(w.NS)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = e.prepare(ctx, w, d, s)
	return err
}

// submit applies w and queues its commit; on a stale condition it returns
// the sequence number to wait for before answering. What can be done
// without the write lock is done first: the rules judge whether any data
// could be written there (MayWrite), the data is decoded and the paths of
// an update are checked.
func (e *Engine) submit(ctx context.Context, w Write) (*pending, uint64, error) {
	if err := CheckNamespace(w.NS); err != nil {
		return nil, 0, err
	}
	if err := e.MayWrite(ctx, w.NS, w.Path, w.Op, w.Caller); err != nil {
		return nil, 0, err
	}
	d, err := decode(w)
	if err != nil {
		return nil, 0, err
	}
	if err := e.mayWriteEach(ctx, w, d); err != nil {
		return nil, 0, err
	}
	s := e.namespace(w.NS)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := e.prepare(ctx, w, d, s)
	if err != nil {
		var stale *StaleError
		if errors.As(err, &stale) {
			return nil, s.queued, err
		}
		return nil, 0, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, 0, errs.New(errs.Unavailable, "the database is shutting down")
	}
	e.seq++
	c.Seq = e.seq
	s.latest, s.queued = c.After, c.Seq
	p := &pending{c: c, done: make(chan error, 1)}
	e.queue = append(e.queue, p)
	e.mu.Unlock()
	e.signal()
	return p, 0, nil
}

// MayWrite refuses a write to p that the rules deny whatever its data (an
// installed WriteGate decides), before its data is read or decoded: a
// denied write costs no more than its path. Nil means the write may go on
// to be judged with its data.
func (e *Engine) MayWrite(ctx context.Context, ns string, p Path, op Op, caller identity.Principal) error {
	if caller.Owner {
		return nil
	}
	g, ok := e.authorizer().(WriteGate)
	if !ok {
		return nil
	}
	return g.MayWrite(ctx, WriteIntent{NS: ns, Path: p, Method: op.method(), Below: op == OpUpdate, Root: e.Root(ns), Caller: caller, Time: e.opts.Now()})
}

// mayWriteEach judges each location an update sets as MayWrite does, now
// that its keys are known: one the rules deny whatever its data refuses
// the update before the write lock.
func (e *Engine) mayWriteEach(ctx context.Context, w Write, d *decoded) error {
	g, ok := e.authorizer().(WriteGate)
	if !ok || w.Caller.Owner || w.Op != OpUpdate {
		return nil
	}
	root, now := e.Root(w.NS), e.opts.Now()
	for _, p := range d.paths {
		if err := g.MayWrite(ctx, WriteIntent{NS: w.NS, Path: p, Method: "update", Root: root, Caller: w.Caller, Time: now}); err != nil {
			return err
		}
	}
	return nil
}

// WriteGate is an Authorizer that can judge a write before its data is
// known: MayWrite fails only when no data could be written at the
// location.
type WriteGate interface {
	MayWrite(ctx context.Context, a WriteIntent) error
}

// WriteIntent is a write to judge before its data is decoded: where, how,
// who, and the tree now.
type WriteIntent struct {
	NS     string
	Path   Path
	Method string // "set" or "update"
	// Below is whether the write may set locations below Path (an update
	// whose keys are not known yet).
	Below  bool
	Root   *Node
	Caller identity.Principal
	Time   time.Time
}

func (op Op) method() string {
	if op == OpUpdate {
		return "update"
	}
	return "set"
}

// prepare computes and judges w's commit over the latest data of s; s.mu
// is held.
func (e *Engine) prepare(ctx context.Context, w Write, d *decoded, s *namespace) (*Commit, error) {
	before := s.latest
	if w.IfHash != nil {
		if cur := before.At(w.Path); cur.Hash() != *w.IfHash {
			return nil, &errs.Error{Kind: errs.FailedPrecondition, Message: "datastale", Cause: &StaleError{Hash: cur.Hash(), Data: cur}}
		}
	}
	now := e.opts.Now()
	c, err := d.apply(w, before, &ServerValues{Now: now.UnixMilli()})
	if err != nil {
		return nil, err
	}
	c.Time = now
	if !w.Caller.Owner {
		if az := e.authorizer(); az != nil {
			if err := az.Write(ctx, WriteAccess{NS: w.NS, Path: w.Path, Method: w.Op.method(), Before: c.Before, After: c.After,
				Changes: c.Changes, Caller: w.Caller, Time: now, Value: w.Value}); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// decoded is a write's data as decoded before the write lock: the
// locations it sets, in path order, none inside another, and their nodes
// (nil where the value holds a server value, which is resolved against the
// data there under the lock).
type decoded struct {
	paths  []Path
	values []any
	nodes  []*Node
}

// decode reads w's data and checks the locations it sets.
func decode(w Write) (*decoded, error) {
	d := &decoded{}
	switch w.Op {
	case OpSet:
		d.paths, d.values = []Path{w.Path}, []any{w.Value}
	case OpUpdate:
		m, ok := w.Value.(map[string]any)
		if !ok {
			return nil, errs.New(errs.InvalidArgument, "Invalid data; an update must be an object")
		}
		d.paths, d.values = make([]Path, 0, len(m)), make([]any, 0, len(m))
		for k, v := range m {
			rel, err := ParsePath(k)
			if err != nil {
				return nil, err
			}
			if len(rel) == 0 {
				return nil, errs.New(errs.InvalidArgument, "Invalid data; an update's key must name a child")
			}
			d.paths, d.values = append(d.paths, w.Path.Child(rel...)), append(d.values, v)
		}
		order := make([]int, len(d.paths))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return slices.Compare(d.paths[a], d.paths[b]) })
		paths, values := make([]Path, len(order)), make([]any, len(order))
		for i, j := range order {
			paths[i], values[i] = d.paths[j], d.values[j]
		}
		d.paths, d.values = paths, values
		// In path order a location is followed by those inside it, so an
		// overlap shows between neighbours.
		for i := 1; i < len(d.paths); i++ {
			if q, rel := d.paths[i-1], d.paths[i]; q.Related(rel) {
				return nil, errs.Errorf(errs.InvalidArgument, "Invalid data; the update's paths %s and %s overlap", q[len(w.Path):], rel[len(w.Path):])
			}
		}
	}
	d.nodes = make([]*Node, len(d.paths))
	for i, p := range d.paths {
		n, err := fromValueAt(d.values[i], p, Empty, nil)
		if errors.Is(err, errServerValueHere) {
			continue
		}
		if err != nil {
			return nil, err
		}
		d.nodes[i] = n
	}
	return d, nil
}

// apply computes the commit of w over root.
func (d *decoded) apply(w Write, root *Node, sv *ServerValues) (*Commit, error) {
	c := &Commit{NS: w.NS, Path: w.Path, Before: root, Import: w.Import, Caller: w.Caller, Merge: w.Op == OpUpdate}
	after := root
	c.Changes = make([]Change, len(d.paths))
	for i, p := range d.paths {
		n := d.nodes[i]
		if n == nil {
			var err error
			if n, err = fromValueAt(d.values[i], p, root.At(p), sv); err != nil {
				return nil, err
			}
		}
		if w.Op == OpSet && isPriorityPath(p) && !n.IsEmpty() && n.kind != Number && n.kind != String {
			return nil, errs.New(errs.InvalidArgument, "Invalid data; .priority must be a string, a number or null")
		}
		after = after.WithAt(p, n)
		c.Changes[i] = Change{Path: p, Before: root.At(p)}
	}
	for i := range c.Changes {
		c.Changes[i].After = after.At(c.Changes[i].Path)
	}
	c.After = after
	return c, nil
}

func isPriorityPath(p Path) bool { return len(p) > 0 && p[len(p)-1] == ".priority" }

func (e *Engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// run is the pipeline: it takes the queued commits, makes them durable
// with one sync, then publishes them in order and answers their writers.
func (e *Engine) run() {
	defer close(e.stopped)
	for {
		e.mu.Lock()
		batch := e.queue
		e.queue = nil
		closed := e.closed
		e.mu.Unlock()
		if len(batch) == 0 {
			if closed {
				return
			}
			<-e.wake
			continue
		}
		if err := e.persist(batch); err != nil {
			e.fail(batch, err)
			continue
		}
		e.publish(batch)
	}
}

// persist makes the batch durable: its records are appended to the log,
// or, once appending them would make the log due to be folded, the log is
// folded into the tree after the batch instead (so that the data folder
// stays within about twice the data however often it is overwritten, and
// the batch's writers are answered once it is; a crash before the new log
// is renamed into place leaves the old one, without the unanswered batch).
// A fold that fails before its rename is logged and the batch appended; one
// whose rename may not be durable fails the batch.
func (e *Engine) persist(batch []*pending) error {
	if e.log == nil {
		return nil
	}
	commits := make([]*Commit, len(batch))
	for i, p := range batch {
		commits[i] = p.c
	}
	payloads := records(commits)
	if e.log.due(framedSize(payloads)) {
		roots := map[string]*Node{}
		e.nsMu.RLock()
		for name, s := range e.nss {
			roots[name] = s.durable.Load()
		}
		e.nsMu.RUnlock()
		for _, c := range commits {
			roots[c.NS] = c.After
		}
		err := e.log.rewrite(roots)
		if err == nil || errors.Is(err, wal.ErrRenameNotDurable) {
			return err // the batch is in the new log only: not acknowledged unless durable
		}
		e.opts.Logger.Error("database: the write log could not be folded", "err", err)
	}
	return e.log.append(payloads)
}

// fail answers the batch and everything queued behind it (computed over the
// batch's data) with err, and rolls every namespace back to its durable
// tree. It holds every namespace's lock meanwhile (in name order, as no
// writer holds more than one), so that no write is computed over data
// rolled back.
func (e *Engine) fail(batch []*pending, err error) {
	e.nsMu.RLock()
	nss := make([]*namespace, 0, len(e.nss))
	for _, s := range e.nss {
		nss = append(nss, s)
	}
	e.nsMu.RUnlock()
	slices.SortFunc(nss, func(a, b *namespace) int { return strings.Compare(a.name, b.name) })
	for _, s := range nss {
		s.mu.Lock()
	}
	e.mu.Lock()
	batch = append(batch, e.queue...)
	e.queue = nil
	for _, s := range nss {
		s.latest = s.durable.Load()
	}
	e.mu.Unlock()
	for _, s := range nss {
		s.mu.Unlock()
	}
	werr := e.durabilityError(err)
	e.pubMu.Lock()
	for _, p := range batch {
		e.published = max(e.published, p.c.Seq)
		p.done <- werr
	}
	e.pubCond.Broadcast()
	e.pubMu.Unlock()
}

// durabilityError is what the writes a failed log append held are answered:
// UNAVAILABLE (the REST API's 503, "the request was not attempted"), with a
// message that names no file of the server. A full disk says so; any other
// failure is logged with its cause.
func (e *Engine) durabilityError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &errs.Error{Kind: errs.Unavailable, Message: "The disk of loupe's data dir is full; the write was not made.", Cause: err}
	}
	e.opts.Logger.Error("database write could not be made durable", "err", err)
	return &errs.Error{Kind: errs.Unavailable, Message: "The write could not be saved to loupe's data dir; see loupe's log.", Cause: err}
}

// publish makes a batch durable for readers and sends it to the listeners,
// watchers and subscribers, in commit order. What each listener is sent is
// worked out under the publishing lock and sent after it, so that encoding
// the updates (once per distinct update: Update.Encoded) holds up no other
// publishing; the batch counts as published (waitPublished) and its writers
// are answered once every listener was sent it.
func (e *Engine) publish(batch []*pending) {
	var out []delivery
	e.pubMu.Lock()
	for _, p := range batch {
		c := p.c
		s := e.lookup(c.NS)
		s.durable.Store(c.After)
		shared := map[string]*encodings{}
		for l := range s.listeners {
			if !l.live {
				l.pending = append(l.pending, c)
				continue
			}
			if u, ok := l.update(c, shared); ok {
				out = append(out, delivery{l, u})
			}
		}
		if len(s.watchers) > 0 {
			if paths := changedPaths(c); len(paths) > 0 {
				for w := range s.watchers {
					w.fn(paths)
				}
			}
		}
		for _, id := range e.subIDs() {
			e.subs[id](c)
		}
	}
	e.pubMu.Unlock()
	for _, d := range out {
		d.l.send(d.u)
	}
	e.pubMu.Lock()
	e.published = batch[len(batch)-1].c.Seq
	e.pubCond.Broadcast()
	e.pubMu.Unlock()
	for _, p := range batch {
		p.done <- nil
	}
}

func (e *Engine) subIDs() []int {
	ids := make([]int, 0, len(e.subs))
	for id := range e.subs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// waitPublished returns once every commit up to seq is published (or has
// failed).
func (e *Engine) waitPublished(seq uint64) {
	e.pubMu.Lock()
	for e.published < seq {
		e.pubCond.Wait()
	}
	e.pubMu.Unlock()
}

// Subscribe calls fn with every commit once it is durable, in commit
// order, until cancel is called. fn runs on the pipeline and must not
// block or call back into the engine's writes.
func (e *Engine) Subscribe(fn func(*Commit)) (cancel func()) {
	e.pubMu.Lock()
	id := e.nextSub
	e.nextSub++
	e.subs[id] = fn
	e.pubMu.Unlock()
	return func() {
		e.pubMu.Lock()
		delete(e.subs, id)
		e.pubMu.Unlock()
	}
}

// WatchPaths calls fn with the locations each commit to ns changed, once
// it is durable and in commit order, until cancel is called: a set's path,
// or the children of an update that changed, below the namespace's root.
// It is for a viewer that reloads what a path touches: no data is built or
// kept for it. fn shares its slice with other watchers, runs on the
// pipeline and must not block.
func (e *Engine) WatchPaths(ns string, fn func(paths []Path)) (cancel func(), err error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	s := e.namespace(ns)
	w := &pathWatcher{fn: fn}
	e.pubMu.Lock()
	s.watchers[w] = struct{}{}
	e.pubMu.Unlock()
	return func() {
		e.pubMu.Lock()
		delete(s.watchers, w)
		e.pubMu.Unlock()
	}, nil
}

// changedPaths lists the locations c set whose data changed.
func changedPaths(c *Commit) []Path {
	var out []Path
	for _, ch := range c.Changes {
		if ch.Before != ch.After {
			out = append(out, ch.Path)
		}
	}
	return out
}

// Clear deletes every namespace's data (ns == "") or one namespace's.
func (e *Engine) Clear(ctx context.Context, ns string) error {
	names := []string{ns}
	if ns == "" {
		names = e.Namespaces()
	}
	for _, name := range names {
		if _, err := e.Write(ctx, Write{NS: name, Op: OpSet, Caller: identity.Owner, Import: true}); err != nil {
			return fmt.Errorf("clear %s: %w", name, err)
		}
	}
	return nil
}

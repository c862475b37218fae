package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/database"
	dbrules "github.com/loupe-dev/loupe/internal/database/rules"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/requestlog"
)

// DatabaseSet is the Realtime Database rules of one namespace ("" for every
// namespace that has none of its own: firebase.json's object form).
type DatabaseSet struct {
	Namespace string
	Origin    string
	Ruleset   *dbrules.Ruleset
	Loaded    time.Time
}

type dbKey struct{ ns, origin string }

// loadDatabaseConfig loads firebase.json's "database" rules files and keeps
// them current, as LoadConfig does Firestore's and Storage's.
func (r *Rules) loadDatabaseConfig(ctx context.Context, cfg *config.Firebase, strict bool) error {
	for _, c := range cfg.DatabaseConfigs {
		if c.Rules == "" {
			continue
		}
		if c.Instance == "" && c.Target != "" {
			r.logger.Warn("database: a deploy target in firebase.json is not resolved to instances; name the instance with \"instance\"", "target", c.Target)
			continue
		}
		if err := r.watchDatabase(ctx, c.Instance, cfg.Path(c.Rules), strict); err != nil {
			return err
		}
	}
	return nil
}

func (r *Rules) watchDatabase(ctx context.Context, ns, path string, strict bool) error {
	what := "Realtime Database"
	if ns != "" {
		what += " instance " + ns
	}
	w, err := NewWatcher(path, func(src []byte, path string) (*dbrules.Ruleset, error) {
		rs, err := dbrules.Compile(string(src), path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return rs, nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if strict {
			return fmt.Errorf("%s rules file %s, %w", what, path, ErrMissingFile)
		}
		r.logger.Warn(fmt.Sprintf("%s rules file %s named in firebase.json does not exist: %s runs open until the file appears (--strict makes this an error)", what, path, what), "file", path)
		r.setMissing("database", path, true)
	case err != nil:
		return err
	default:
		r.installDatabase(ns, OriginFile, w.Ruleset())
	}
	go w.Run(ctx, rulesReloadInterval, func(err error) {
		if err != nil {
			r.logger.Error("rules not reloaded; the last good rules stay in force", "file", path, "err", err)
			return
		}
		r.installDatabase(ns, OriginFile, w.Ruleset())
		r.setMissing("database", path, false)
		r.logger.Info("rules reloaded", "file", path)
	})
	return nil
}

func (r *Rules) installDatabase(ns, origin string, rs *dbrules.Ruleset) {
	r.mu.Lock()
	r.database[dbKey{ns, origin}] = &DatabaseSet{Namespace: ns, Origin: origin, Ruleset: rs, Loaded: time.Now().UTC()}
	changed := r.databaseChanged
	r.mu.Unlock()
	for _, fn := range changed {
		fn()
	}
}

// OnDatabaseRules has fn called each time Realtime Database rules are put in
// force (loaded, reloaded or set through the API): the database judges its
// open listens again then.
func (r *Rules) OnDatabaseRules(fn func()) {
	r.mu.Lock()
	r.databaseChanged = append(r.databaseChanged, fn)
	r.mu.Unlock()
}

// SetDatabaseRules compiles source and puts it in force for namespace ns
// (PUT /.settings/rules.json), ahead of firebase.json's files; a mistake
// leaves the rules in force and names its line and column.
func (r *Rules) SetDatabaseRules(ns, source string) error {
	rs, err := dbrules.Compile(source, ns+".rules.json")
	if err != nil {
		return fmt.Errorf("Error saving rules - %w", err)
	}
	r.installDatabase(ns, OriginAPI, rs)
	return nil
}

// LookupDatabase is the rule set in force for namespace ns, nil when none
// (the namespace then runs open): rules loaded for it through the API, then
// its file, then those for every namespace.
func (r *Rules) LookupDatabase(ns string) *DatabaseSet {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, k := range []dbKey{{ns, OriginAPI}, {ns, OriginFile}, {"", OriginAPI}, {"", OriginFile}} {
		if s := r.database[k]; s != nil {
			return s
		}
	}
	return nil
}

// openRules is what GET /.settings/rules.json answers for a namespace
// without rules: the official emulator's default, which allows everything.
const openRules = "{\n  \"rules\": {\n    \".read\": true,\n    \".write\": true\n  }\n}\n"

// DatabaseRules is ns's rules source, and whether rules are in force.
func (r *Rules) DatabaseRules(ns string) (string, bool) {
	if s := r.LookupDatabase(ns); s != nil {
		return s.Ruleset.Source, true
	}
	return openRules, false
}

// DatabaseCoverage is how the rules in force for ns have been evaluated.
func (r *Rules) DatabaseCoverage(ns string) ([]dbrules.RuleCoverage, bool) {
	s := r.LookupDatabase(ns)
	if s == nil {
		return nil, false
	}
	return s.Ruleset.Coverage(), true
}

// DatabaseSets lists the Realtime Database rule sets in force.
func (r *Rules) DatabaseSets() []*DatabaseSet {
	r.mu.RLock()
	out := make([]*DatabaseSet, 0, len(r.database))
	for _, s := range r.database {
		out = append(out, s)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"\x00"+out[i].Origin < out[j].Namespace+"\x00"+out[j].Origin
	})
	return out
}

// Database is the rules authorizer of the Realtime Database engine; it also
// tells the engine which queries the rules index.
type Database struct{ Rules *Rules }

// DatabaseAuthorizer returns the authorizer to install in the database
// engine.
func (r *Rules) DatabaseAuthorizer() *Database { return &Database{Rules: r} }

// authVar is the rules' auth variable for a caller: nil when signed out.
func authVar(p identity.Principal) map[string]any {
	if !p.Authenticated() {
		return nil
	}
	provider := "custom"
	if fb, ok := p.Claims["firebase"].(map[string]any); ok {
		if sp, ok := fb["sign_in_provider"].(string); ok && sp != "" {
			provider = sp
		}
	}
	token := p.Claims
	if token == nil {
		token = map[string]any{}
	}
	return map[string]any{"uid": p.UID, "provider": provider, "token": token}
}

// queryVar is the rules' query variable for a read.
func queryVar(q database.Query) map[string]any {
	out := map[string]any{"orderByKey": q.Index.Kind == database.ByKey, "orderByValue": q.Index.Kind == database.ByValue,
		"orderByPriority": q.Index.Kind == database.ByPriority && q.Filtered(), "orderByChild": nil,
		"startAt": nil, "endAt": nil, "equalTo": nil, "limitToFirst": nil, "limitToLast": nil}
	if q.Index.Kind == database.ByChild {
		out["orderByChild"] = q.Index.String()
	}
	bound := func(b *database.Bound) any {
		if b == nil || b.Value == nil {
			return nil
		}
		return b.Value.Value()
	}
	if q.Start != nil && q.End != nil && q.Start.Inclusive && q.End.Inclusive && database.Equal(q.Start.Value, q.End.Value) && q.Start.Key == q.End.Key {
		out["equalTo"] = bound(q.Start)
	} else {
		out["startAt"], out["endAt"] = bound(q.Start), bound(q.End)
	}
	if q.HasLimit {
		if q.FromRight {
			out["limitToLast"] = float64(q.Limit)
		} else {
			out["limitToFirst"] = float64(q.Limit)
		}
	}
	return out
}

// Read implements database.Authorizer.
func (g *Database) Read(_ context.Context, a database.ReadAccess) error {
	e := requestlog.Entry{Service: "database", Method: a.Method, Path: a.Path.String(), Database: a.NS, Resource: logNode(a.Root.At(a.Path))}
	return g.decide(a.NS, a.Caller, e, func(rs *dbrules.Ruleset) dbrules.Decision {
		return rs.Read(a.Root, a.Path, dbrules.Request{Auth: authVar(a.Caller), Now: a.Time.UnixMilli(), Query: queryVar(a.Query)})
	})
}

// Write implements database.Authorizer.
func (g *Database) Write(_ context.Context, a database.WriteAccess) error {
	paths := make([]database.Path, len(a.Changes))
	for i, ch := range a.Changes {
		paths[i] = ch.Path
	}
	e := requestlog.Entry{Service: "database", Method: a.Method, Path: a.Path.String(), Database: a.NS,
		Request: logNode(a.After.At(a.Path)), Resource: logNode(a.Before.At(a.Path))}
	return g.decide(a.NS, a.Caller, e, func(rs *dbrules.Ruleset) dbrules.Decision {
		return rs.Write(a.Before, a.After, paths, dbrules.Request{Auth: authVar(a.Caller), Now: a.Time.UnixMilli()})
	})
}

// MayWrite implements database.WriteGate: a write the rules deny whatever
// its data is refused (and logged) before its data is read.
func (g *Database) MayWrite(_ context.Context, a database.WriteIntent) error {
	s := g.Rules.LookupDatabase(a.NS)
	if s == nil {
		return nil
	}
	d := s.Ruleset.MayWrite(a.Root, a.Path, a.Below, dbrules.Request{Auth: authVar(a.Caller), Now: a.Time.UnixMilli()})
	if d.Allow {
		return nil
	}
	e := requestlog.Entry{Service: "database", Method: a.Method, Path: a.Path.String(), Database: a.NS, Resource: logNode(a.Root.At(a.Path))}
	return g.record(s, d, a.Caller, e)
}

// Indexed implements database.Indexes: a namespace without rules indexes
// nothing.
func (g *Database) Indexed(ns string, p database.Path, ix database.Index) bool {
	s := g.Rules.LookupDatabase(ns)
	return s != nil && s.Ruleset.Indexed(p, ix)
}

// decide judges with ns's rules (allowing when there are none) and records
// the decision in the request log.
func (g *Database) decide(ns string, caller identity.Principal, e requestlog.Entry, judge func(*dbrules.Ruleset) dbrules.Decision) error {
	s := g.Rules.LookupDatabase(ns)
	d := dbrules.Decision{Allow: true}
	if s != nil {
		d = judge(s.Ruleset)
	}
	return g.record(s, d, caller, e)
}

// record logs decision d of rule set s (nil: none in force) and returns
// the caller's error when it denies.
func (g *Database) record(s *DatabaseSet, d dbrules.Decision, caller identity.Principal, e requestlog.Entry) error {
	e.Caller = Caller(caller)
	e.Outcome, e.Status = requestlog.Allowed, http.StatusOK
	if !d.Allow {
		e.Outcome, e.Status, e.Message = requestlog.Denied, http.StatusUnauthorized, d.Message
		errored := len(d.Tried) > 0
		for _, t := range d.Tried {
			errored = errored && t.Outcome == "error"
		}
		if errored {
			e.Outcome = requestlog.Error
		}
	}
	if s != nil {
		e.Rules = &requestlog.Rules{File: s.Ruleset.File, Line: d.Line, Trace: dbTrace(d.Tried), Source: s.Ruleset.Source}
	}
	g.Rules.log.Add(e)
	if d.Allow {
		return nil
	}
	return errs.New(errs.PermissionDenied, d.Message)
}

// dbTrace is the rules tried, as the request log shows a trace: {"allows":
// [{path, kind, line, outcome, message}], "expressions": []}.
type dbTrace []dbrules.Tried

// MarshalJSON implements json.Marshaler.
func (t dbTrace) MarshalJSON() ([]byte, error) {
	tried := []dbrules.Tried(t)
	if tried == nil {
		tried = []dbrules.Tried{}
	}
	return json.Marshal(map[string]any{"allows": tried, "expressions": []any{}})
}

// maxLoggedData is the largest data an entry keeps: a bigger value would
// hold an old version of the tree in memory for as long as the log keeps
// the entry.
const maxLoggedData = 64 << 10

// logNode is n for an entry: nil when it is larger than maxLoggedData.
func logNode(n *database.Node) any {
	if !n.SizeAtMost(maxLoggedData) {
		return nil
	}
	return nodeJSON{n}
}

// nodeJSON is data in the log, rendered when the log is read.
type nodeJSON struct{ n *database.Node }

// MarshalJSON implements json.Marshaler.
func (x nodeJSON) MarshalJSON() ([]byte, error) { return x.n.JSON(), nil }

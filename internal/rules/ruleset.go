// Package rules implements Firebase Security Rules (rules_version 1 and 2) for Cloud Firestore and Cloud
// Storage: a ruleset is parsed, checked and compiled once, then evaluated per request. It has no I/O
// of its own (guard reads and watches the files) and knows nothing of transports or of the storage
// engines; document reads for get()/exists() go through Documents.
//
// Compile runs three phases, as a compiler does: parse (syntax, into an AST), check (check.go: every
// name resolved against the scopes that declare it, reported at its line and column with production's
// wording: errors stop the file, warnings are kept in Ruleset.Issues) and the recursion check of the
// call graph.
//
// An evaluation can be traced (EvaluateTrace, Explain): every allow statement tried with its outcome
// and every expression evaluated with its source range and value. EvaluateTrace also counts those
// values into the ruleset's coverage, which Coverage reports in the Firestore emulator's ruleCoverage
// shape; a ruleset's coverage lives as long as the ruleset (a reload starts over).
package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Service is the rules service a ruleset or request belongs to.
type Service string

// The services rules can be written for.
const (
	Firestore Service = "firestore"
	Storage   Service = "storage"
)

// Method is a granular rules method; "read" and "write" in rules files expand to these.
type Method string

// The granular methods of a request.
const (
	Get    Method = "get"
	List   Method = "list"
	Create Method = "create"
	Update Method = "update"
	Delete Method = "delete"
)

// Auth is the authenticated caller: request.auth.uid and request.auth.token.
type Auth struct {
	UID   string
	Token map[string]any
}

// Documents reads Firestore documents for get()/exists() (state before the request) and
// getAfter()/existsAfter() (state after the request or whole batch). Paths are full document paths,
// "/databases/(default)/documents/users/alice". A missing document returns (nil, false, nil).
type Documents interface {
	Get(path string) (map[string]any, bool, error)
	GetAfter(path string) (map[string]any, bool, error)
}

// Filter is one query constraint of a list request: Op is a Firestore operator
// ("==", "!=", "<", "<=", ">", ">=", "in", "not-in", "array-contains", "array-contains-any").
// Field is a dotted field path.
type Filter struct {
	Field string
	Op    string
	Value any
}

// Order is one orderBy clause of a list request.
type Order struct {
	Field      string
	Descending bool
}

// Query describes a list request so that "rules are not filters" can be judged.
type Query struct {
	Limit, Offset   *int64
	OrderBy         []Order
	Filters         []Filter
	CollectionGroup string // non-empty for a collection-group query; Request.Path is then its parent path
}

// Request is what a rule is evaluated against.
//
// Path is the full path: Firestore "/databases/(default)/documents/c/d" (for list: the collection path,
// or the parent path of a collection-group query); Storage "/b/<bucket>/o/<object name>" (for list: the
// prefix, without the trailing "/"). Resource is the existing document's fields (Firestore) or object
// metadata (Storage), nil when absent; RequestResource is the document or metadata as it would be after
// a create/update. Values are Go kinds: nil, bool, int64 (int accepted), float64, string, []byte,
// time.Time, LatLng, Path (references), []any, map[string]any.
type Request struct {
	Service         Service
	Method          Method
	Path            string
	Auth            *Auth
	Resource        map[string]any
	RequestResource map[string]any
	Query           *Query
	Time            time.Time
	Documents       Documents
	// Batch raises the distinct-document read limit from 10 to 20 (batched writes, transactions).
	Batch bool
}

// Decision is the outcome of evaluating a request. Message, on denial, has the emulator's shape:
// "No matching allow statements" or "\nfalse for 'update' @ L12, Null value error. for 'update' @ L30".
type Decision struct {
	Allow   bool
	Message string
	// Line is the line of the allow statement that granted the request.
	Line int
}

// Ruleset is a compiled rules file, safe for concurrent evaluation.
type Ruleset struct {
	Service Service
	Version string
	root    *block
	scope   *scope
	scopes  map[*block]*scope
	// File and Source are the compiled file's name and text.
	File, Source string
	// Issues are the warnings the check phase found, in source order.
	Issues   []Issue
	spans    map[node]span
	coverage coverage
}

// Compile parses and checks a rules file. Errors are *ParseError values:
// "file:line:col: message", for a syntax error, the first error the check
// phase found, or a recursive call. The warnings of the check phase, with
// which the file compiles as it does in production, are in the Ruleset's
// Issues.
func Compile(source, filename string) (*Ruleset, error) {
	f, err := parse(source, filename)
	if err != nil {
		return nil, err
	}
	rs := &Ruleset{Service: f.service, Version: f.version, root: f.root, scopes: map[*block]*scope{},
		File: filename, Source: source, spans: f.spans}
	p := &parser{src: source, file: filename}
	var all []*funcDecl
	var build func(b *block, parent *scope)
	build = func(b *block, parent *scope) {
		s := &scope{funcs: map[string]*funcDecl{}, parent: parent}
		for _, fd := range b.funcs {
			fd.scope = s
			s.funcs[fd.name] = fd
			all = append(all, fd)
		}
		rs.scopes[b] = s
		for _, c := range b.children {
			build(c, s)
		}
	}
	build(f.root, nil)
	rs.scope = rs.scopes[f.root]
	for _, issue := range check(p, f, rs.scopes) {
		if issue.Severity == Error {
			return nil, &ParseError{File: filename, Line: issue.Line, Col: issue.Col, Msg: issue.Msg, src: source}
		}
		rs.Issues = append(rs.Issues, issue)
	}
	if err := checkRecursion(all, p); err != nil {
		return nil, err
	}
	return rs, nil
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	l, c := p.lineCol(pos)
	return &ParseError{File: p.file, Line: l, Col: c, Msg: fmt.Sprintf(format, args...), src: p.src}
}

// checkRecursion rejects recursive or cyclic calls in the static, lexically resolved call graph.
func checkRecursion(all []*funcDecl, p *parser) error {
	state := map[*funcDecl]int{}
	var visit func(f *funcDecl) error
	visit = func(f *funcDecl) error {
		switch state[f] {
		case 1:
			return p.errAt(f.pos, "recursive or cyclic call of function '%s'", f.name)
		case 2:
			return nil
		}
		state[f] = 1
		var err error
		walkCalls := func(n node) {
			walk(n, func(c *callNode) {
				if err == nil && c.recv == nil {
					if g := f.scope.lookup(c.name); g != nil {
						err = visit(g)
					}
				}
			})
		}
		for _, l := range f.lets {
			walkCalls(l.x)
		}
		walkCalls(f.body)
		state[f] = 2
		return err
	}
	for _, f := range all {
		if err := visit(f); err != nil {
			return err
		}
	}
	return nil
}

// walk visits every call in an expression tree.
func walk(n node, fn func(*callNode)) {
	if c, ok := n.(*callNode); ok {
		fn(c)
	}
	for _, k := range children(n) {
		walk(k, fn)
	}
}

// children are an expression's direct subexpressions, in source order.
func children(n node) []node {
	var kids []node
	switch n := n.(type) {
	case *listNode:
		kids = n.elems
	case *mapNode:
		for i := range n.keys {
			kids = append(kids, n.keys[i], n.vals[i])
		}
	case *pathNode:
		for _, s := range n.segs {
			kids = append(kids, s...)
		}
	case *unNode:
		kids = []node{n.x}
	case *binNode:
		kids = []node{n.l, n.r}
	case *isNode:
		kids = []node{n.x}
	case *condNode:
		kids = []node{n.c, n.a, n.b}
	case *memberNode:
		kids = []node{n.x}
	case *indexNode:
		kids = []node{n.x, n.i}
	case *sliceNode:
		kids = []node{n.x, n.lo, n.hi}
	case *callNode:
		kids = append([]node{n.recv}, n.args...)
	}
	return slices.DeleteFunc(kids, func(k node) bool { return k == nil })
}

// Markers for the unknown segments of list and collection-group requests.
const (
	anySegs = "\x00any" // zero or more unknown segments: only a recursive wildcard absorbs it
	docSeg  = "\x00doc" // one unknown document id: a {var} (bound to null) or recursive wildcard absorbs it
)

type candidate struct {
	allow    *allowStmt
	bindings map[string]any
	scope    *scope
}

func (rs *Ruleset) candidates(segs []string, m Method) []candidate {
	var out []candidate
	var collect func(b *block, rest []string, bind map[string]any)
	collect = func(b *block, rest []string, bind map[string]any) {
		for _, c := range b.children {
			matchPattern(c.pattern, rest, bind, rs.Version == "2", func(remaining []string, b2 map[string]any) {
				if len(remaining) == 0 {
					for _, a := range c.allows {
						for _, am := range a.methods {
							if am == m {
								out = append(out, candidate{a, b2, rs.scopes[c]})
								break
							}
						}
					}
				}
				collect(c, remaining, b2)
			})
		}
	}
	collect(rs.root, segs, nil)
	return out
}

func matchPattern(pat []patSeg, segs []string, bind map[string]any, v2 bool, yield func([]string, map[string]any)) {
	if len(pat) == 0 {
		yield(segs, bind)
		return
	}
	s := pat[0]
	if s.rec {
		min := 0
		if !v2 {
			min = 1
		}
		for k := min; k <= len(segs); k++ {
			var v any = Path(append([]string(nil), segs[:k]...))
			for _, seg := range segs[:k] {
				if seg == anySegs || seg == docSeg {
					v = errUnknownVar
				}
			}
			matchPattern(pat[1:], segs[k:], with(bind, s.name, v), v2, yield)
		}
		return
	}
	if len(segs) == 0 || segs[0] == anySegs {
		return
	}
	if s.name != "" {
		var v any = segs[0]
		if segs[0] == docSeg {
			v = nil
		}
		matchPattern(pat[1:], segs[1:], with(bind, s.name, v), v2, yield)
		return
	}
	if s.lit == segs[0] {
		matchPattern(pat[1:], segs[1:], bind, v2, yield)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// Evaluate judges one request against the ruleset.
func (rs *Ruleset) Evaluate(req *Request) Decision { return rs.evaluate(req, nil) }

// evaluate judges req, recording into t when it is not nil.
func (rs *Ruleset) evaluate(req *Request, t *tracer) Decision {
	if req.Service != rs.Service {
		return Decision{Message: fmt.Sprintf("ruleset is for %s, request is for %s", rs.Service, req.Service)}
	}
	if req.Service == Storage && req.Method == List && rs.Version != "2" {
		return Decision{Message: "List operations are only allowed for rules_version='2'"}
	}
	segs := parsePath(req.Path)
	if req.Method == List {
		if req.Query != nil && req.Query.CollectionGroup != "" {
			segs = append(segs, anySegs, req.Query.CollectionGroup)
		}
		segs = append(segs, docSeg)
	}
	cands := rs.candidates(segs, req.Method)
	if len(cands) == 0 {
		return Decision{Message: "No matching allow statements"}
	}
	variants := []map[string]any{nil}
	if req.Service == Firestore && req.Method == List {
		variants = queryVariants(req.Query)
	}
	var d Decision
	for _, pinned := range variants {
		if d = rs.evalCandidates(req, cands, pinned, t); !d.Allow {
			return d
		}
	}
	return d
}

func (rs *Ruleset) evalCandidates(req *Request, cands []candidate, pinned map[string]any, t *tracer) Decision {
	ev := newEvaluator(req, pinned)
	ev.trace = t
	var entries []string
	for _, c := range cands {
		if c.allow.cond == nil {
			t.allow(c.allow.line, "allow", "")
			return Decision{Allow: true, Line: c.allow.line}
		}
		e := &env{ev: ev, bindings: c.bindings, scope: c.scope}
		v, err := e.eval(c.allow.cond)
		reason := "false"
		if err != nil {
			reason = err.Error()
			t.allow(c.allow.line, "error", reason)
		} else if v == true {
			t.allow(c.allow.line, "allow", "")
			return Decision{Allow: true, Line: c.allow.line}
		} else {
			t.allow(c.allow.line, "deny", "")
		}
		entries = append(entries, fmt.Sprintf("%s for '%s' @ L%d", reason, req.Method, c.allow.line))
	}
	return Decision{Message: "\n" + strings.Join(entries, ", ")}
}

func newEvaluator(req *Request, pinned map[string]any) *evaluator {
	ev := &evaluator{req: req, limit: 10}
	if req.Batch {
		ev.limit = 20
	}
	path := parsePath(req.Path)
	r := map[string]any{"method": string(req.Method), "time": req.Time, "path": path, "params": map[string]any{}}
	if req.Auth != nil {
		tok := req.Auth.Token
		if tok == nil {
			tok = map[string]any{}
		}
		r["auth"] = map[string]any{"uid": req.Auth.UID, "token": tok}
	} else {
		r["auth"] = nil
	}
	switch req.Service {
	case Firestore:
		if req.Method == List {
			r["query"] = queryMap(req.Query)
			r["path"] = errf("request.path is not known for a list request.")
			ev.resource = map[string]any{"data": pinned, "id": nil, "__name__": errUnknownVar}
		} else if req.Resource != nil {
			ev.resource = docResource(path, req.Resource)
		}
		if (req.Method == Create || req.Method == Update) && req.RequestResource != nil {
			r["resource"] = docResource(path, req.RequestResource)
		}
	case Storage:
		if req.Resource != nil {
			ev.resource = req.Resource
		}
		if req.RequestResource != nil {
			r["resource"] = req.RequestResource
		} else {
			r["resource"] = nil
		}
	}
	ev.request = r
	return ev
}

func docResource(path Path, data map[string]any) map[string]any {
	id := ""
	if len(path) > 0 {
		id = path[len(path)-1]
	}
	return map[string]any{"data": data, "id": id, "__name__": path}
}

func queryMap(q *Query) map[string]any {
	m := map[string]any{}
	if q == nil {
		return m
	}
	if q.Limit != nil {
		m["limit"] = *q.Limit
	}
	if q.Offset != nil {
		m["offset"] = *q.Offset
	}
	if len(q.OrderBy) > 0 {
		ob := map[string]any{}
		for _, o := range q.OrderBy {
			dir := "ASC"
			if o.Descending {
				dir = "DESC"
			}
			ob[o.Field] = dir
		}
		m["orderBy"] = ob
	}
	return m
}

// queryVariants builds, for each disjunct of the query, the document data the query pins: equality
// filters fix a field, in/array-contains-any split into one variant per value, array-contains marks a
// list known to contain a value, range and exclusion filters bound a field. The rule must hold for every variant.
func queryVariants(q *Query) []map[string]any {
	variants := []map[string]any{{}}
	if q == nil {
		return variants
	}
	bounds := map[string]*constraint{}
	for _, f := range q.Filters {
		switch f.Op {
		case "<", "<=", ">", ">=", "!=", "not-in":
			c := bounds[f.Field]
			if c == nil {
				c = &constraint{}
				bounds[f.Field] = c
			}
			c.add(f.Op, norm(f.Value))
		}
	}
	for field, c := range bounds {
		for i, v := range variants {
			variants[i] = setField(v, strings.Split(field, "."), c)
		}
	}
	for _, f := range q.Filters {
		var values []any
		switch f.Op {
		case "==":
			values = []any{norm(f.Value)}
		case "array-contains":
			values = []any{&containsList{v: []any{norm(f.Value)}}}
		case "in", "array-contains-any":
			l, _ := asList(f.Value)
			for _, v := range l {
				if f.Op == "in" {
					values = append(values, norm(v))
				} else {
					values = append(values, &containsList{v: []any{norm(v)}})
				}
			}
		default:
			continue
		}
		var next []map[string]any
		for _, base := range variants {
			for _, v := range values {
				next = append(next, setField(base, strings.Split(f.Field, "."), v))
			}
		}
		variants = next
	}
	return variants
}

func setField(m map[string]any, path []string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, vv := range m {
		out[k] = vv
	}
	if len(path) == 1 {
		out[path[0]] = v
		return out
	}
	child, _ := out[path[0]].(map[string]any)
	out[path[0]] = setField(child, path[1:], v)
	return out
}

// document serves get/exists/getAfter/existsAfter with the distinct-document budget.
func (ev *evaluator) document(fn string, arg any) (any, error) {
	p, ok := arg.(Path)
	if !ok {
		if arg == nil {
			return nil, errNull
		}
		return nil, errf("Unsupported operation error. Received: %s(%s). Expected: %s(path).", fn, typeName(arg), fn)
	}
	if len(p) < 5 || p[0] != "databases" || p[2] != "documents" || (len(p)-3)%2 != 0 {
		return nil, errf("Service call error. Function: [%s], Argument: [%s].", fn, p)
	}
	key := p.String()
	if _, seen := ev.reads[key]; !seen {
		if len(ev.reads) >= ev.limit {
			return nil, errBudget
		}
		if ev.reads == nil {
			ev.reads = map[string]struct{}{}
		}
		ev.reads[key] = struct{}{}
	}
	if ev.req.Documents == nil {
		return nil, errf("Service call error. Function: [%s], Argument: [%s].", fn, p)
	}
	read := ev.req.Documents.Get
	if fn == "getAfter" || fn == "existsAfter" {
		read = ev.req.Documents.GetAfter
	}
	data, found, err := read(key)
	if err != nil {
		return nil, errf("Service call error. Function: [%s], Argument: [%s].", fn, p)
	}
	if fn == "exists" || fn == "existsAfter" {
		return found, nil
	}
	if !found {
		return nil, nil
	}
	return docResource(p, data), nil
}

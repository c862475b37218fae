// Package rules is the Realtime Database's security rules language: a JSON
// tree (comments allowed) whose keys follow the data's paths, $wildcards
// catching the keys no named sibling takes, and whose ".read", ".write" and
// ".validate" values are booleans or JavaScript-like expressions over
// auth, root, data, newData, now, query and the wildcards' values;
// ".indexOn" names the children queries order by.
//
// Compile parses a file once; Read and Write judge a request. A read is
// allowed when a ".read" on the way from the root to the location holds
// (a grant cannot be revoked below it); a write when a ".write" on the way
// to each location written holds and every ".validate" of the new data
// (above, at and below those locations, where data remains) holds. An
// expression that fails (a missing value, a wrong type) counts as false.
package rules

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/loupe-dev/loupe/internal/database"
)

// Ruleset is a compiled rules file.
type Ruleset struct {
	File   string
	Source string
	root   *node

	mu   sync.Mutex
	hits map[*rule]*Hits
}

// node is the rules of one level of the tree.
type node struct {
	read, write, validate *rule
	indexOn               []string
	children              map[string]*node
	wildName              string // "$name" of the wildcard child, or ""
	wild                  *node
}

// rule is one .read, .write or .validate.
type rule struct {
	kind      string // ".read", ".write", ".validate"
	text      string
	constant  *bool
	expr      expr
	line, col int
	// readsNewData is whether the rule reads newData: until the data is
	// known it cannot be judged.
	readsNewData bool
}

// Hits counts how often a rule held, failed and errored: rules coverage.
type Hits struct {
	True   int `json:"true"`
	False  int `json:"false"`
	Errors int `json:"errors"`
}

// Compile parses a rules file; a mistake is an error naming the line and
// column (of the file) where it is.
func Compile(src, file string) (*Ruleset, error) {
	top, err := parseJSONC(src)
	if err != nil {
		return nil, err
	}
	obj, ok := top.v.(*jobject)
	if !ok {
		return nil, &SyntaxError{top.line, top.col, "the rules file must be an object"}
	}
	rulesVal, ok := obj.vals["rules"]
	if !ok {
		return nil, &SyntaxError{top.line, top.col, `the rules file has no "rules" key`}
	}
	for _, k := range obj.keys {
		if k != "rules" {
			v := obj.vals[k]
			return nil, &SyntaxError{v.line, v.col, fmt.Sprintf("unknown key %q beside \"rules\"", k)}
		}
	}
	root, err := compileNode(rulesVal, src, map[string]bool{})
	if err != nil {
		return nil, err
	}
	return &Ruleset{File: file, Source: src, root: root, hits: map[*rule]*Hits{}}, nil
}

func compileNode(v jvalue, src string, wild map[string]bool) (*node, error) {
	obj, ok := v.v.(*jobject)
	if !ok {
		return nil, &SyntaxError{v.line, v.col, "expected an object of rules"}
	}
	n := &node{children: map[string]*node{}}
	for _, k := range obj.keys {
		val := obj.vals[k]
		switch {
		case k == ".read" || k == ".write" || k == ".validate":
			r, err := compileRule(k, val, src, wild)
			if err != nil {
				return nil, err
			}
			switch k {
			case ".read":
				n.read = r
			case ".write":
				n.write = r
			default:
				n.validate = r
			}
		case k == ".indexOn":
			idx, err := indexOn(val)
			if err != nil {
				return nil, err
			}
			n.indexOn = idx
		case strings.HasPrefix(k, "."):
			return nil, &SyntaxError{val.line, val.col, fmt.Sprintf("Invalid key: %s", k)}
		case strings.HasPrefix(k, "$"):
			if n.wild != nil {
				return nil, &SyntaxError{val.line, val.col, fmt.Sprintf("Only one $ location allowed beside %s", n.wildName)}
			}
			if wild[k] {
				return nil, &SyntaxError{val.line, val.col, fmt.Sprintf("%s is already a wildcard above", k)}
			}
			inner := maps.Clone(wild)
			inner[k] = true
			child, err := compileNode(val, src, inner)
			if err != nil {
				return nil, err
			}
			n.wildName, n.wild = k, child
		default:
			child, err := compileNode(val, src, wild)
			if err != nil {
				return nil, err
			}
			n.children[k] = child
		}
	}
	return n, nil
}

func indexOn(v jvalue) ([]string, error) {
	switch x := v.v.(type) {
	case string:
		return []string{x}, nil
	case []jvalue:
		out := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := it.v.(string)
			if !ok {
				return nil, &SyntaxError{it.line, it.col, ".indexOn must list strings"}
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, &SyntaxError{v.line, v.col, ".indexOn must be a string or a list of strings"}
}

func compileRule(kind string, v jvalue, src string, wild map[string]bool) (*rule, error) {
	r := &rule{kind: kind, line: v.line, col: v.col}
	switch x := v.v.(type) {
	case bool:
		r.constant, r.text = &x, fmt.Sprint(x)
		return r, nil
	case string:
		r.text = x
		e, err := parseExpr(x)
		if err == nil {
			scope := map[string]bool{"auth": true, "root": true, "data": true, "now": true}
			if kind == ".read" {
				scope["query"] = true
			} else {
				scope["newData"] = true
			}
			for k := range wild {
				scope[k] = true
			}
			err = checkVars(e, scope)
			if err == nil && scope["newData"] {
				delete(scope, "newData")
				r.readsNewData = checkVars(e, scope) != nil
			}
		}
		if err != nil {
			line, col := v.line, v.col+1 // past the opening quote
			if ee, ok := err.(*exprError); ok {
				col += ee.at
			}
			return nil, &SyntaxError{line, col, err.Error()}
		}
		r.expr = e
		return r, nil
	}
	return nil, &SyntaxError{v.line, v.col, kind + " must be a boolean or an expression string"}
}

// Request is who asks, and when.
type Request struct {
	// Auth is the auth variable: nil when signed out, else {"uid",
	// "provider", "token"}.
	Auth map[string]any
	// Now is the time in milliseconds since the epoch.
	Now int64
	// Query is the query variable of a read.
	Query map[string]any
}

// Decision is a judgement: whether it is allowed, the line of the rule that
// decided (0 when none held, or when a .validate failed, its line), and
// every rule tried.
type Decision struct {
	Allow   bool
	Line    int
	Message string
	Tried   []Tried
}

// Tried is one rule evaluated: at which location, its line, and "allow",
// "deny" or "error" (with the message).
type Tried struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Line    int    `json:"line"`
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
}

// level is one location on the way down the rules: its node (nil when the
// rules say nothing there) and the wildcards bound so far.
type level struct {
	n    *node
	path database.Path
	wild map[string]any
}

// descend follows path from the root, calling fn at each level (the root
// first) until it returns false.
func (rs *Ruleset) descend(path database.Path, fn func(level) bool) {
	l := level{n: rs.root, wild: map[string]any{}}
	for i := 0; ; i++ {
		l.path = path[:i]
		if !fn(l) || i == len(path) {
			return
		}
		l = l.child(path[i])
	}
}

func (l level) child(key string) level {
	next := level{wild: l.wild}
	if l.n == nil {
		return next
	}
	if c, ok := l.n.children[key]; ok {
		next.n = c
	} else if l.n.wild != nil {
		next.n = l.n.wild
		next.wild = maps.Clone(l.wild)
		next.wild[l.n.wildName] = key
	}
	return next
}

// eval runs r with env and records the outcome.
func (rs *Ruleset) eval(r *rule, at database.Path, env vars, d *Decision) bool {
	ok, t := judge(r, at, env)
	rs.record(r, t)
	d.Tried = append(d.Tried, t)
	return ok
}

// judge runs r with env: whether it held, and how it went.
func judge(r *rule, at database.Path, env vars) (bool, Tried) {
	var ok bool
	var err error
	if r.constant != nil {
		ok = *r.constant
	} else {
		var v any
		v, err = eval(r.expr, env)
		if err == nil {
			b, isBool := v.(bool)
			if !isBool {
				err = errNotBool
			}
			ok = b
		}
	}
	t := Tried{Path: at.String(), Kind: r.kind, Line: r.line, Outcome: "deny"}
	switch {
	case err != nil:
		t.Outcome, t.Message = "error", err.Error()
	case ok:
		t.Outcome = "allow"
	}
	return ok && err == nil, t
}

// record counts an outcome of r for coverage.
func (rs *Ruleset) record(r *rule, t Tried) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	h := rs.hits[r]
	if h == nil {
		h = &Hits{}
		rs.hits[r] = h
	}
	switch t.Outcome {
	case "error":
		h.Errors++
	case "allow":
		h.True++
	default:
		h.False++
	}
}

func (req Request) vars(l level) vars {
	env := vars{"now": float64(req.Now), "auth": nil}
	if req.Auth != nil {
		env["auth"] = req.Auth
	}
	for k, v := range l.wild {
		env[k] = v
	}
	return env
}

// Read judges a read of path (with req.Query) over root.
func (rs *Ruleset) Read(root *database.Node, path database.Path, req Request) Decision {
	var d Decision
	rs.descend(path, func(l level) bool {
		if l.n == nil || l.n.read == nil {
			return l.n != nil
		}
		env := req.vars(l)
		env["root"] = snapshot{root, nil}
		env["data"] = snapshot{root, l.path}
		q := req.Query
		if q == nil {
			q = map[string]any{}
		}
		env["query"] = q
		if rs.eval(l.n.read, l.path, env, &d) {
			d.Allow, d.Line = true, l.n.read.line
			return false
		}
		return true
	})
	if !d.Allow {
		d.Message = "Permission denied"
	}
	return d
}

// Write judges a write that takes the tree from before to after, setting
// each of paths.
func (rs *Ruleset) Write(before, after *database.Node, paths []database.Path, req Request) Decision {
	var d Decision
	writeEnv := func(l level) vars {
		env := req.vars(l)
		env["root"] = snapshot{before, nil}
		env["data"] = snapshot{before, l.path}
		env["newData"] = snapshot{after, l.path}
		return env
	}
	for _, p := range paths {
		granted := false
		rs.descend(p, func(l level) bool {
			if l.n == nil || l.n.write == nil {
				return l.n != nil
			}
			if rs.eval(l.n.write, l.path, writeEnv(l), &d) {
				granted, d.Line = true, l.n.write.line
				return false
			}
			return true
		})
		if !granted {
			d.Line, d.Message = 0, "Permission denied"
			return d
		}
	}
	// .validate: the locations above and at each write, then the new data
	// below it, each once.
	seen := map[string]bool{}
	validate := func(l level) bool {
		key := l.path.String()
		if seen[key] || l.n == nil || l.n.validate == nil || after.At(l.path).IsEmpty() {
			return true
		}
		seen[key] = true
		if !rs.eval(l.n.validate, l.path, writeEnv(l), &d) {
			d.Line, d.Message = l.n.validate.line, "Permission denied: a .validate rule failed at "+key
			return false
		}
		return true
	}
	sorted := slices.Clone(paths)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	ok := true
	for _, p := range sorted {
		var at level
		rs.descend(p, func(l level) bool {
			at = l
			if ok = validate(l); !ok {
				return false
			}
			return true
		})
		if !ok || !rs.validateBelow(at, after, validate) {
			return d
		}
	}
	d.Allow = true
	return d
}

// MayWrite judges a write at path before its data is known: it is denied
// when every ".write" on the way to path is false whatever the data, and
// (when the write may set locations below path: an update whose keys are
// not known yet) no ".write" below path could grant it. A rule that reads newData could hold, so it allows. Nothing is
// counted for coverage unless it denies (the write is judged again, with
// its data, when it is allowed).
func (rs *Ruleset) MayWrite(root *database.Node, path database.Path, below bool, req Request) Decision {
	var d Decision
	var tried []*rule
	var end level
	rs.descend(path, func(l level) bool {
		end = l
		if l.n == nil || l.n.write == nil {
			return l.n != nil
		}
		if l.n.write.readsNewData {
			d.Allow = true
			return false
		}
		env := req.vars(l)
		env["root"] = snapshot{root, nil}
		env["data"] = snapshot{root, l.path}
		ok, t := judge(l.n.write, l.path, env)
		if ok {
			d.Allow = true
			return false
		}
		tried = append(tried, l.n.write)
		d.Tried = append(d.Tried, t)
		return true
	})
	if d.Allow || (below && len(end.path) == len(path) && end.n.writesBelow()) {
		return Decision{Allow: true}
	}
	for i, r := range tried {
		rs.record(r, d.Tried[i])
	}
	d.Message = "Permission denied"
	return d
}

// writesBelow reports whether a ".write" sits below n.
func (n *node) writesBelow() bool {
	if n == nil {
		return false
	}
	for _, c := range n.children {
		if c.write != nil || c.writesBelow() {
			return true
		}
	}
	return n.wild != nil && (n.wild.write != nil || n.wild.writesBelow())
}

// validateBelow runs validate over the new data below l, where rules exist.
func (rs *Ruleset) validateBelow(l level, after *database.Node, validate func(level) bool) bool {
	if l.n == nil || (len(l.n.children) == 0 && l.n.wild == nil) {
		return true
	}
	ok := true
	after.At(l.path).Each(func(k string, _ *database.Node) bool {
		c := l.child(k)
		c.path = l.path.Child(k)
		ok = validate(c) && rs.validateBelow(c, after, validate)
		return ok
	})
	return ok
}

// Indexed reports whether the rules at path index ix (".indexOn" naming
// the child path, or ".value").
func (rs *Ruleset) Indexed(path database.Path, ix database.Index) bool {
	var at *node
	rs.descend(path, func(l level) bool {
		at = l.n
		return l.n != nil
	})
	if at == nil {
		return false
	}
	want := ix.String()
	return slices.Contains(at.indexOn, want)
}

// Coverage lists every rule with its text, line and hit counts, in file
// order.
func (rs *Ruleset) Coverage() []RuleCoverage {
	var out []RuleCoverage
	var walkNode func(n *node, path string)
	walkNode = func(n *node, path string) {
		for _, r := range []*rule{n.read, n.write, n.validate} {
			if r == nil {
				continue
			}
			rc := RuleCoverage{Path: path, Kind: r.kind, Line: r.line, Column: r.col, Text: r.text}
			rs.mu.Lock()
			if h := rs.hits[r]; h != nil {
				rc.Hits = *h
			}
			rs.mu.Unlock()
			out = append(out, rc)
		}
		for k, c := range n.children {
			walkNode(c, path+"/"+k)
		}
		if n.wild != nil {
			walkNode(n.wild, path+"/"+n.wildName)
		}
	}
	walkNode(rs.root, "")
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

// RuleCoverage is one rule and how its evaluations went.
type RuleCoverage struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text"`
	Hits   Hits   `json:"hits"`
}

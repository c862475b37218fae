package rules

import (
	"fmt"
	"maps"
)

// The check phase runs between parsing and evaluation, as a compiler's
// semantic pass does: it resolves every name of a parsed file against the
// scopes that declare it and reports what production's rules compiler
// reports, at the position it reports it. Like production, it finds two
// kinds of issue: errors, which stop the file from compiling, and warnings,
// with which the file compiles and runs (a call of an undefined function
// then fails when it is evaluated, denying the request).

// Severity tells whether an issue stops a rules file from compiling.
type Severity string

// The severities, as firebase-tools prints them ("[W] 3:14 - …").
const (
	Warning Severity = "W"
	Error   Severity = "E"
)

// Issue is a problem the check phase found, at its line and column (1-based,
// in characters), worded as production words it where that is known.
type Issue struct {
	Severity  Severity
	Line, Col int
	Msg       string
}

// String renders the issue as firebase-tools prints the rules compiler's
// issues: "[W] 13:14 - Invalid function name: exists.".
func (i Issue) String() string {
	return fmt.Sprintf("[%s] %d:%d - %s", i.Severity, i.Line, i.Col, i.Msg)
}

// globalFuncs are the functions callable without a receiver in every
// service; firestoreFuncs only in cloud.firestore.
var (
	globalFuncs    = map[string]int{"int": 1, "float": 1, "string": 1, "bool": 1, "path": 1, "debug": 1}
	firestoreFuncs = map[string]int{"get": 1, "exists": 1, "getAfter": 1, "existsAfter": 1}
	// globalVars are the variables every rule and function sees.
	globalVars = map[string]bool{"request": true, "resource": true}
)

// checker walks a parsed file once, collecting issues.
type checker struct {
	p      *parser
	f      *fileNode
	scopes map[*block]*scope
	issues []Issue
	called map[*funcDecl]bool
	funcs  []*funcDecl
}

// fnLocals are a function's parameters and let bindings, and which of them
// its body reads.
type fnLocals struct {
	pos  map[string]int
	used map[string]bool
}

// check reports the file's issues, errors first in source order, then
// warnings in source order.
func check(p *parser, f *fileNode, scopes map[*block]*scope) []Issue {
	c := &checker{p: p, f: f, scopes: scopes, called: map[*funcDecl]bool{}}
	c.block(f.root, map[string]bool{})
	for _, fd := range c.funcs {
		if !c.called[fd] {
			c.warn(fd.pos, "Unused function: %s.", fd.name)
		}
	}
	var errors, warnings []Issue
	for _, i := range c.issues {
		if i.Severity == Error {
			errors = append(errors, i)
		} else {
			warnings = append(warnings, i)
		}
	}
	return append(errors, warnings...)
}

func (c *checker) add(sev Severity, pos int, format string, args ...any) {
	l, col := c.p.lineCol(pos)
	c.issues = append(c.issues, Issue{Severity: sev, Line: l, Col: col, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) warn(pos int, format string, args ...any) { c.add(Warning, pos, format, args...) }

// block checks a match block, whose path variables (its own and its
// enclosing blocks') are vars.
func (c *checker) block(b *block, outer map[string]bool) {
	vars := maps.Clone(outer)
	for i, seg := range b.pattern {
		if seg.name == "" {
			continue
		}
		if vars[seg.name] {
			c.add(Error, seg.pos, "Duplicate path variable '%s': a match path cannot reuse a variable of its own or of an enclosing match.", seg.name)
		}
		if seg.rec && c.f.version != "2" && i != len(b.pattern)-1 {
			c.add(Error, seg.pos, "Recursive wildcard {%s=**} must be the last segment of the path in rules_version 1.", seg.name)
		}
		vars[seg.name] = true
	}
	s := c.scopes[b]
	for _, fd := range b.funcs {
		c.funcs = append(c.funcs, fd)
		c.function(fd, s, vars)
	}
	for _, a := range b.allows {
		if a.cond != nil {
			c.expr(a.cond, s, vars, nil)
		}
	}
	for _, k := range b.children {
		c.block(k, vars)
	}
}

// function checks a function's let bindings and body: each sees the path
// variables of the function's block, its parameters and the lets before it.
func (c *checker) function(fd *funcDecl, s *scope, vars map[string]bool) {
	local := &fnLocals{pos: map[string]int{}, used: map[string]bool{}}
	for i, name := range fd.params {
		local.pos[name] = fd.paramPos[i]
	}
	var order []string
	order = append(order, fd.params...)
	for _, l := range fd.lets {
		c.expr(l.x, s, vars, local)
		local.pos[l.name] = l.pos
		order = append(order, l.name)
	}
	c.expr(fd.body, s, vars, local)
	for _, name := range order {
		if !local.used[name] {
			c.warn(local.pos[name], "Unused variable: %s.", name)
		}
	}
}

// expr checks the names an expression reads and the functions it calls.
func (c *checker) expr(n node, s *scope, vars map[string]bool, local *fnLocals) {
	switch n := n.(type) {
	case nil:
		return
	case *identNode:
		c.variable(n, vars, local)
		return
	case *callNode:
		c.call(n, s, vars, local)
		return
	}
	for _, k := range children(n) {
		c.expr(k, s, vars, local)
	}
}

// variable checks that a name read is declared: a function's parameter or
// let binding, a path variable, or a global.
func (c *checker) variable(n *identNode, vars map[string]bool, local *fnLocals) {
	if local != nil {
		if _, ok := local.pos[n.name]; ok {
			local.used[n.name] = true
			return
		}
	}
	if vars[n.name] || globalVars[n.name] {
		return
	}
	c.warn(n.pos, "Invalid variable name: %s.", n.name)
}

// call checks a call: of a function declared in scope with as many
// parameters as arguments, of a global function, or of a namespace's
// function (math.abs, timestamp.date, …); a method call checks its receiver.
func (c *checker) call(n *callNode, s *scope, vars map[string]bool, local *fnLocals) {
	for _, a := range n.args {
		c.expr(a, s, vars, local)
	}
	if n.recv != nil {
		if id, ok := n.recv.(*identNode); ok && namespaces[id.name] && !c.shadowed(id.name, vars, local) {
			return
		}
		c.expr(n.recv, s, vars, local)
		return
	}
	if fd := s.lookup(n.name); fd != nil {
		c.called[fd] = true
		if len(fd.params) != len(n.args) {
			c.warn(n.pos, "Invalid number of arguments for function %s: it takes %d, and the call passes %d.", n.name, len(fd.params), len(n.args))
		}
		return
	}
	want, ok := globalFuncs[n.name]
	if !ok && c.f.service == Firestore {
		want, ok = firestoreFuncs[n.name]
	}
	switch {
	case !ok:
		c.warn(n.pos, "Invalid function name: %s.", n.name)
	case want != len(n.args):
		c.warn(n.pos, "Invalid number of arguments for function %s: it takes %d, and the call passes %d.", n.name, want, len(n.args))
	}
}

// shadowed reports whether name is a variable in scope, which then hides
// the namespace of the same name.
func (c *checker) shadowed(name string, vars map[string]bool, local *fnLocals) bool {
	if local != nil {
		if _, ok := local.pos[name]; ok {
			return true
		}
	}
	return vars[name]
}

package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseError is a syntax or static error at a position of the rules source.
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
	src       string
}

// Error renders "file:line:col: message" followed by the source line and a caret.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ":")
	}
	fmt.Fprintf(&b, "%d:%d: %s", e.Line, e.Col, e.Msg)
	lines := strings.Split(e.src, "\n")
	if e.Line >= 1 && e.Line <= len(lines) {
		fmt.Fprintf(&b, "\n | %s\n | %s^", lines[e.Line-1], strings.Repeat(".", e.Col-1))
	}
	return b.String()
}

type parser struct {
	src  string
	pos  int
	file string
	// spans holds each expression's source range, for coverage and traces.
	spans map[node]span
	// gapStart..gapEnd is the last run of whitespace and comments skipped.
	gapStart, gapEnd int
}

// span is an expression's source range: byte offsets, end exclusive.
type span struct{ start, end int }

// tokEnd is where the last token consumed ends (before any skipped gap).
func (p *parser) tokEnd() int {
	if p.pos == p.gapEnd {
		return p.gapStart
	}
	return p.pos
}

// mark records n's range, from start to the last token consumed; a node
// already marked (a parenthesised expression) keeps its range.
func (p *parser) mark(n node, start int) node {
	if _, ok := p.spans[n]; !ok {
		p.spans[n] = span{start, p.tokEnd()}
	}
	return n
}

type bailout struct{ err *ParseError }

func (p *parser) lineCol(pos int) (int, int) {
	line, col := 1, 1
	for _, r := range p.src[:pos] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (p *parser) failAt(pos int, format string, args ...any) {
	l, c := p.lineCol(pos)
	panic(bailout{&ParseError{File: p.file, Line: l, Col: c, Msg: fmt.Sprintf(format, args...), src: p.src}})
}

// skip passes over whitespace and comments.
func (p *parser) skip() {
	start := p.pos
	defer func() {
		if p.pos > start {
			p.gapStart, p.gapEnd = start, p.pos
		}
	}()
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				p.failAt(p.pos, "unterminated comment")
			}
			p.pos += end + 4
		default:
			return
		}
	}
}

func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isPChar(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("-.~%@:+*", c) >= 0
}

// peekWord returns the identifier at the cursor (after skipping), without consuming it.
func (p *parser) peekWord() string {
	p.skip()
	i := p.pos
	if i < len(p.src) && isLetter(p.src[i]) {
		for i < len(p.src) && (isLetter(p.src[i]) || isDigit(p.src[i])) {
			i++
		}
	}
	return p.src[p.pos:i]
}

// wordAt is where the next word starts, past whitespace and comments.
func (p *parser) wordAt() int {
	p.skip()
	return p.pos
}

func (p *parser) ident() string {
	w := p.peekWord()
	if w == "" {
		p.failAt(p.pos, "expected identifier, found %s", p.found())
	}
	p.pos += len(w)
	return w
}

func (p *parser) found() string {
	p.skip()
	if p.pos >= len(p.src) {
		return "end of input"
	}
	if w := p.peekWord(); w != "" {
		return "'" + w + "'"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return "'" + string(r) + "'"
}

// accept consumes op (punctuation or keyword) if present.
func (p *parser) accept(op string) bool {
	p.skip()
	if !strings.HasPrefix(p.src[p.pos:], op) {
		return false
	}
	if isLetter(op[0]) {
		if p.peekWord() != op {
			return false
		}
	}
	p.pos += len(op)
	return true
}

func (p *parser) expect(op string) {
	if !p.accept(op) {
		p.failAt(p.pos, "expected '%s', found %s", op, p.found())
	}
}

// parse turns source into a file AST.
func parse(src, file string) (f *fileNode, err error) {
	p := &parser{src: src, file: file, spans: map[node]span{}}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			f, err = nil, b.err
		}
	}()
	f = &fileNode{version: "1"}
	if p.peekWord() == "rules_version" {
		p.pos += len("rules_version")
		p.expect("=")
		p.skip()
		at := p.pos
		v, ok := p.stringLit()
		if !ok || (v != "1" && v != "2") {
			p.failAt(at, "rules_version must be '1' or '2'")
		}
		f.version = v
		p.accept(";") // optional, as the official compiler takes it
	}
	root := &block{}
	for {
		switch w := p.peekWord(); w {
		case "function":
			root.funcs = append(root.funcs, p.function(f))
			continue
		case "service":
			if f.service != "" {
				p.failAt(p.pos, "only one service per file")
			}
			p.pos += len(w)
			p.skip()
			nameAt := p.pos
			name := p.ident()
			for p.accept(".") {
				name += "." + p.ident()
			}
			switch name {
			case "cloud.firestore":
				f.service = Firestore
			case "firebase.storage", "cloud.storage":
				f.service = Storage
			default:
				p.failAt(nameAt, "unknown service '%s'", name)
			}
			p.expect("{")
			p.blockBody(f, root, 0)
			continue
		case "":
			p.skip()
			if p.pos >= len(p.src) {
				if f.service == "" {
					p.failAt(p.pos, "missing service declaration")
				}
				f.root, f.spans = root, p.spans
				return f, nil
			}
		}
		p.failAt(p.pos, "Unexpected %s.", p.found())
	}
}

func (p *parser) blockBody(f *fileNode, b *block, depth int) {
	for !p.accept("}") {
		at := p.pos
		switch p.peekWord() {
		case "function":
			b.funcs = append(b.funcs, p.function(f))
		case "match":
			p.pos += 5
			if depth >= 10 {
				p.failAt(at, "match nesting deeper than 10")
			}
			child := &block{pattern: p.matchPath(f)}
			p.expect("{")
			p.blockBody(f, child, depth+1)
			b.children = append(b.children, child)
		case "allow":
			if depth == 0 {
				p.failAt(at, "allow outside of a match block")
			}
			p.pos += 5
			b.allows = append(b.allows, p.allow())
		default:
			p.failAt(p.pos, "Unexpected %s.", p.found())
		}
	}
}

var methodGroups = map[string][]Method{
	"read": {Get, List}, "write": {Create, Update, Delete},
	"get": {Get}, "list": {List}, "create": {Create}, "update": {Update}, "delete": {Delete},
}

func (p *parser) allow() *allowStmt {
	p.skip()
	a := &allowStmt{}
	a.line, _ = p.lineCol(p.pos)
	for {
		at := p.pos
		m := p.ident()
		ms, ok := methodGroups[m]
		if !ok {
			p.failAt(at, "unknown method '%s'", m)
		}
		a.methods = append(a.methods, ms...)
		if !p.accept(",") {
			break
		}
	}
	if p.accept(":") {
		p.expect("if")
		a.cond = p.expr()
	}
	p.accept(";")
	return a
}

func (p *parser) function(f *fileNode) *funcDecl {
	p.pos += len("function")
	p.skip()
	fd := &funcDecl{pos: p.pos}
	fd.name = p.ident()
	p.expect("(")
	if !p.accept(")") {
		for {
			fd.paramPos = append(fd.paramPos, p.wordAt())
			fd.params = append(fd.params, p.ident())
			if p.accept(")") {
				break
			}
			p.expect(",")
		}
	}
	if len(fd.params) > 7 {
		p.failAt(fd.pos, "function %s has more than 7 parameters", fd.name)
	}
	p.expect("{")
	for p.peekWord() == "let" {
		at := p.pos
		if f.version != "2" {
			p.failAt(at, "let requires rules_version = '2'")
		}
		p.pos += 3
		namePos := p.wordAt()
		name := p.ident()
		p.expect("=")
		fd.lets = append(fd.lets, letStmt{pos: namePos, name: name, x: p.expr()})
		p.expect(";")
		if len(fd.lets) > 10 {
			p.failAt(at, "function %s has more than 10 let bindings", fd.name)
		}
	}
	if p.peekWord() != "return" {
		p.failAt(p.pos, "expected 'return', found %s", p.found())
	}
	p.pos += 6
	fd.body = p.expr()
	p.accept(";")
	p.expect("}")
	return fd
}

func (p *parser) matchPath(f *fileNode) []patSeg {
	var segs []patSeg
	p.skip()
	if p.pos >= len(p.src) || p.src[p.pos] != '/' {
		p.failAt(p.pos, "expected '/' to start a match path, found %s", p.found())
	}
	for p.pos < len(p.src) && p.src[p.pos] == '/' {
		p.pos++
		at := p.pos
		if p.pos < len(p.src) && p.src[p.pos] == '{' {
			p.pos++
			s := patSeg{pos: p.wordAt()}
			s.name = p.ident()
			if p.accept("=") {
				p.expect("**")
				s.rec = true
			}
			p.expect("}")
			segs = append(segs, s)
			continue
		}
		for p.pos < len(p.src) && (isPChar(p.src[p.pos]) || p.src[p.pos] == '(' || p.src[p.pos] == ')') {
			p.pos++
		}
		if at == p.pos {
			p.failAt(at, "expected a path segment, found %s", p.found())
		}
		segs = append(segs, patSeg{lit: p.src[at:p.pos]})
	}
	return segs
}

// stringLit scans a quoted string at the cursor; ok is false when there is none.
func (p *parser) stringLit() (string, bool) {
	if p.pos >= len(p.src) || (p.src[p.pos] != '\'' && p.src[p.pos] != '"') {
		return "", false
	}
	q := p.src[p.pos]
	start := p.pos
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.src) || p.src[p.pos] == '\n' {
			p.failAt(start, "unterminated string literal")
		}
		c := p.src[p.pos]
		if c == q {
			p.pos++
			return b.String(), true
		}
		if c != '\\' {
			b.WriteByte(c)
			p.pos++
			continue
		}
		at := p.pos
		p.pos++
		if p.pos >= len(p.src) {
			p.failAt(at, "unterminated string literal")
		}
		e := p.src[p.pos]
		p.pos++
		switch e {
		case '\\', '\'', '"', '/':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'x', 'u':
			n := 2
			if e == 'u' {
				n = 4
			}
			if p.pos+n > len(p.src) {
				p.failAt(at, "invalid escape sequence")
			}
			v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
			if err != nil {
				p.failAt(at, "invalid escape sequence")
			}
			p.pos += n
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		default:
			if e >= '0' && e <= '7' && p.pos+2 <= len(p.src) {
				v, err := strconv.ParseUint(p.src[p.pos-1:p.pos+2], 8, 8)
				if err == nil {
					p.pos += 2
					b.WriteByte(byte(v))
					continue
				}
			}
			p.failAt(at, "invalid escape sequence '\\%c'", e)
		}
	}
}

// Expressions, lowest precedence first.

func (p *parser) expr() node {
	p.skip()
	start := p.pos
	c := p.binary(0)
	p.skip()
	at := p.pos
	if p.accept("?") {
		a := p.expr()
		p.expect(":")
		return p.mark(&condNode{pos: at, c: c, a: a, b: p.expr()}, start)
	}
	return c
}

var levels = [][]string{{"||"}, {"&&"}, {"==", "!="}, {"is"}, {"in"}, {"<=", ">=", "<", ">"}, {"+", "-"}, {"*", "/", "%"}}

func (p *parser) binary(level int) node {
	if level == len(levels) {
		return p.unary()
	}
	p.skip()
	start := p.pos
	l := p.binary(level + 1)
	for {
		p.skip()
		at := p.pos
		op := ""
		for _, o := range levels[level] {
			if p.accept(o) {
				op = o
				break
			}
		}
		if op == "" {
			return l
		}
		if op == "is" {
			l = p.mark(&isNode{pos: at, x: l, typ: p.ident()}, start)
			if !validTypes[l.(*isNode).typ] {
				p.failAt(at+3, "unknown type '%s'", l.(*isNode).typ)
			}
			continue
		}
		l = p.mark(&binNode{pos: at, op: op, l: l, r: p.binary(level + 1)}, start)
	}
}

var validTypes = map[string]bool{"bool": true, "bytes": true, "constraint": true, "duration": true, "float": true,
	"int": true, "latlng": true, "list": true, "map": true, "map_diff": true, "null": true, "number": true,
	"path": true, "set": true, "string": true, "timestamp": true}

func (p *parser) unary() node {
	p.skip()
	at := p.pos
	if p.accept("!") {
		return p.mark(&unNode{pos: at, op: "!", x: p.unary()}, at)
	}
	if p.accept("-") {
		return p.mark(&unNode{pos: at, op: "-", x: p.unary()}, at)
	}
	return p.postfix(p.primary())
}

func (p *parser) args() []node {
	var as []node
	if p.accept(")") {
		return as
	}
	for {
		as = append(as, p.expr())
		if p.accept(")") {
			return as
		}
		p.expect(",")
	}
}

func (p *parser) postfix(x node) node {
	start := p.spans[x].start
	for {
		p.skip()
		at := p.pos
		switch {
		case p.accept("."):
			name := p.ident()
			if p.accept("(") {
				x = p.mark(&callNode{pos: at, recv: x, name: name, args: p.args()}, start)
			} else {
				x = p.mark(&memberNode{pos: at, x: x, name: name}, start)
			}
		case p.accept("["):
			var lo, hi node
			if !p.accept(":") {
				lo = p.expr()
				if p.accept("]") {
					x = p.mark(&indexNode{pos: at, x: x, i: lo}, start)
					continue
				}
				p.expect(":")
			}
			if !p.accept("]") {
				hi = p.expr()
				p.expect("]")
			}
			if lo == nil && hi == nil {
				p.failAt(at, "a range needs at least one bound")
			}
			x = p.mark(&sliceNode{pos: at, x: x, lo: lo, hi: hi}, start)
		default:
			return x
		}
	}
}

func (p *parser) primary() node {
	p.skip()
	start := p.pos
	return p.mark(p.primaryNode(), start)
}

func (p *parser) primaryNode() node {
	at := p.pos
	if p.pos >= len(p.src) {
		p.failAt(at, "unexpected end of input, expected an expression")
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		x := p.expr()
		p.expect(")")
		return x
	case c == '[':
		p.pos++
		l := &listNode{pos: at}
		for !p.accept("]") {
			l.elems = append(l.elems, p.expr())
			if !p.accept(",") {
				p.expect("]")
				break
			}
		}
		return l
	case c == '{':
		p.pos++
		m := &mapNode{pos: at}
		for !p.accept("}") {
			m.keys = append(m.keys, p.expr())
			p.expect(":")
			m.vals = append(m.vals, p.expr())
			if !p.accept(",") {
				p.expect("}")
				break
			}
		}
		return m
	case c == '/':
		return p.pathLit()
	case c == '\'' || c == '"':
		s, _ := p.stringLit()
		return &litNode{pos: at, v: s}
	case (c == 'b' || c == 'B') && p.pos+1 < len(p.src) && (p.src[p.pos+1] == '\'' || p.src[p.pos+1] == '"'):
		p.pos++
		s, _ := p.stringLit()
		return &litNode{pos: at, v: []byte(s)}
	case isDigit(c):
		return p.number()
	case isLetter(c):
		w := p.ident()
		switch w {
		case "true", "false":
			return &litNode{pos: at, v: w == "true"}
		case "null":
			return &litNode{pos: at, v: nil}
		case "in", "is", "if", "let", "return", "function", "match", "allow", "service", "rules_version":
			p.failAt(at, "Unexpected '%s'.", w)
		}
		if p.accept("(") {
			return &callNode{pos: at, name: w, args: p.args()}
		}
		return &identNode{pos: at, name: w}
	}
	p.failAt(at, "Unexpected %s.", p.found())
	return nil
}

func (p *parser) number() node {
	at := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	float := false
	if p.pos+1 < len(p.src) && p.src[p.pos] == '.' && isDigit(p.src[p.pos+1]) {
		float = true
		p.pos++
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		j := p.pos + 1
		if j < len(p.src) && (p.src[j] == '+' || p.src[j] == '-') {
			j++
		}
		if j < len(p.src) && isDigit(p.src[j]) {
			float = true
			for p.pos = j; p.pos < len(p.src) && isDigit(p.src[p.pos]); p.pos++ {
			}
		}
	}
	text := p.src[at:p.pos]
	if float {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			p.failAt(at, "invalid float literal %s", text)
		}
		return &litNode{pos: at, v: v}
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		p.failAt(at, "integer literal %s out of range", text)
	}
	return &litNode{pos: at, v: v}
}

func (p *parser) pathLit() node {
	pl := &pathNode{pos: p.pos}
	for p.pos < len(p.src) && p.src[p.pos] == '/' {
		p.pos++
		var parts []node
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if strings.HasPrefix(p.src[p.pos:], "$(") {
				p.pos += 2
				parts = append(parts, p.expr())
				p.expect(")")
				continue
			}
			start := p.pos
			if c == '(' {
				end := strings.IndexByte(p.src[p.pos:], ')')
				if end < 0 {
					p.failAt(p.pos, "unbalanced '(' in path")
				}
				p.pos += end + 1
			} else if isPChar(c) {
				for p.pos < len(p.src) && isPChar(p.src[p.pos]) {
					p.pos++
				}
			} else {
				break
			}
			parts = append(parts, &litNode{pos: start, v: p.src[start:p.pos]})
		}
		if len(parts) == 0 {
			p.failAt(p.pos, "empty path segment")
		}
		pl.segs = append(pl.segs, parts)
	}
	return pl
}

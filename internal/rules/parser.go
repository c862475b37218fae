package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// SyntaxError is a parse error at a position.
type SyntaxError struct {
	File string
	Pos  Pos
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tFloat
	tString
	tBytes
	tPunct
)

type token struct {
	kind tokKind
	text string // identifier, punctuation, or decoded string
	pos  Pos
	off  int // byte offset of the token start
	end  int
}

type parser struct {
	file string
	src  string
	off  int // scan offset
	tok  token
}

// Parse parses a rules file; file names the source in errors.
func Parse(file, src string) (rs *Ruleset, err error) {
	p := &parser{file: file, src: src}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*SyntaxError)
			if !ok {
				panic(r)
			}
			rs, err = nil, se
		}
	}()
	p.next()
	return p.ruleset(), nil
}

func (p *parser) posAt(off int) Pos {
	line := 1 + strings.Count(p.src[:off], "\n")
	col := off - strings.LastIndex(p.src[:off], "\n")
	return Pos{line, col}
}

func (p *parser) failAt(pos Pos, format string, args ...any) {
	panic(&SyntaxError{File: p.file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) fail(format string, args ...any) { p.failAt(p.tok.pos, format, args...) }

// skipSpace skips white space and comments from p.off.
func (p *parser) skipSpace() {
	for p.off < len(p.src) {
		switch {
		case strings.HasPrefix(p.src[p.off:], "//"):
			if i := strings.IndexByte(p.src[p.off:], '\n'); i >= 0 {
				p.off += i
			} else {
				p.off = len(p.src)
			}
		case strings.HasPrefix(p.src[p.off:], "/*"):
			i := strings.Index(p.src[p.off+2:], "*/")
			if i < 0 {
				p.failAt(p.posAt(p.off), "unterminated comment")
			}
			p.off += i + 4
		case strings.ContainsRune(" \t\r\n", rune(p.src[p.off])):
			p.off++
		default:
			return
		}
	}
}

var puncts = []string{"&&", "||", "==", "!=", "<=", ">=", "{", "}", "(", ")", "[", "]", ";", ",", ".", ":", "?", "!", "<", ">", "+", "-", "*", "/", "%", "="}

// next scans the next token into p.tok.
func (p *parser) next() {
	p.skipSpace()
	start := p.off
	pos := p.posAt(start)
	if p.off >= len(p.src) {
		p.tok = token{kind: tEOF, pos: pos, off: start, end: start}
		return
	}
	c := p.src[p.off]
	switch {
	case c == '_' || unicode.IsLetter(rune(c)):
		if (c == 'b' || c == 'B') && p.off+1 < len(p.src) && (p.src[p.off+1] == '\'' || p.src[p.off+1] == '"') {
			p.off++
			s := p.scanString()
			p.tok = token{kind: tBytes, text: s, pos: pos, off: start, end: p.off}
			return
		}
		for p.off < len(p.src) && (p.src[p.off] == '_' || unicode.IsLetter(rune(p.src[p.off])) || unicode.IsDigit(rune(p.src[p.off]))) {
			p.off++
		}
		p.tok = token{kind: tIdent, text: p.src[start:p.off], pos: pos, off: start, end: p.off}
	case unicode.IsDigit(rune(c)):
		for p.off < len(p.src) && unicode.IsDigit(rune(p.src[p.off])) {
			p.off++
		}
		kind := tInt
		if p.off+1 < len(p.src) && p.src[p.off] == '.' && unicode.IsDigit(rune(p.src[p.off+1])) {
			kind = tFloat
			p.off++
			for p.off < len(p.src) && unicode.IsDigit(rune(p.src[p.off])) {
				p.off++
			}
		}
		if p.off < len(p.src) && (p.src[p.off] == 'e' || p.src[p.off] == 'E') {
			kind = tFloat
			p.off++
			if p.off < len(p.src) && (p.src[p.off] == '+' || p.src[p.off] == '-') {
				p.off++
			}
			for p.off < len(p.src) && unicode.IsDigit(rune(p.src[p.off])) {
				p.off++
			}
		}
		p.tok = token{kind: kind, text: p.src[start:p.off], pos: pos, off: start, end: p.off}
	case c == '\'' || c == '"':
		s := p.scanString()
		p.tok = token{kind: tString, text: s, pos: pos, off: start, end: p.off}
	default:
		for _, pu := range puncts {
			if strings.HasPrefix(p.src[p.off:], pu) {
				p.off += len(pu)
				p.tok = token{kind: tPunct, text: pu, pos: pos, off: start, end: p.off}
				return
			}
		}
		p.failAt(pos, "unexpected character %q", c)
	}
}

// scanString reads a quoted string at p.off, decoding escapes.
func (p *parser) scanString() string {
	quote := p.src[p.off]
	start := p.off
	p.off++
	var b strings.Builder
	for {
		if p.off >= len(p.src) || p.src[p.off] == '\n' {
			p.failAt(p.posAt(start), "unterminated string")
		}
		c := p.src[p.off]
		if c == quote {
			p.off++
			return b.String()
		}
		if c != '\\' {
			b.WriteByte(c)
			p.off++
			continue
		}
		if p.off+1 >= len(p.src) {
			p.failAt(p.posAt(p.off), "unterminated string")
		}
		e := p.src[p.off+1]
		p.off += 2
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
			if p.off+n > len(p.src) {
				p.failAt(p.posAt(p.off), "bad escape")
			}
			v, err := strconv.ParseUint(p.src[p.off:p.off+n], 16, 32)
			if err != nil {
				p.failAt(p.posAt(p.off), "bad escape \\%c%s", e, p.src[p.off:p.off+n])
			}
			b.WriteRune(rune(v))
			p.off += n
		default:
			p.failAt(p.posAt(p.off-2), "bad escape \\%c", e)
		}
	}
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tIdent) && p.tok.text == text
}

func (p *parser) expect(text string) token {
	if !p.is(text) {
		p.fail("expected %q, found %s", text, p.describe())
	}
	t := p.tok
	p.next()
	return t
}

func (p *parser) describe() string {
	if p.tok.kind == tEOF {
		return "end of file"
	}
	return strconv.Quote(p.src[p.tok.off:p.tok.end])
}

func (p *parser) ident() token {
	if p.tok.kind != tIdent {
		p.fail("expected a name, found %s", p.describe())
	}
	t := p.tok
	p.next()
	return t
}

func (p *parser) ruleset() *Ruleset {
	rs := &Ruleset{Version: "1"}
	if p.is("rules_version") {
		p.next()
		p.expect("=")
		if p.tok.kind != tString {
			p.fail("rules_version must be a string")
		}
		rs.Version = p.tok.text
		if rs.Version != "1" && rs.Version != "2" {
			p.fail("unsupported rules_version %q", rs.Version)
		}
		p.next()
		p.expect(";")
	}
	for p.tok.kind != tEOF {
		switch {
		case p.is("function"):
			rs.Funcs = append(rs.Funcs, p.function())
		case p.is("service"):
			rs.Services = append(rs.Services, p.service())
		default:
			p.fail("expected service or function, found %s", p.describe())
		}
	}
	if len(rs.Services) == 0 {
		p.fail("a rules file needs a service block")
	}
	return rs
}

func (p *parser) service() *Service {
	p.expect("service")
	at := p.tok.pos
	name := p.ident().text
	for p.is(".") {
		p.next()
		name += "." + p.ident().text
	}
	if name != "cloud.firestore" && name != "firebase.storage" {
		p.failAt(at, "unknown service %q (cloud.firestore or firebase.storage)", name)
	}
	s := &Service{Name: name}
	p.expect("{")
	for !p.is("}") {
		switch {
		case p.is("match"):
			s.Matches = append(s.Matches, p.match())
		case p.is("function"):
			s.Funcs = append(s.Funcs, p.function())
		default:
			p.fail("expected match or function, found %s", p.describe())
		}
	}
	p.next()
	return s
}

func isPathChar(c byte) bool {
	return c == '-' || c == '.' || c == '~' || c == '%' || c == '@' || c == ':' || c == '+' || c == '_' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// match parses a match block; its path is scanned raw from the source.
func (p *parser) match() *Match {
	m := &Match{Pos: p.tok.pos}
	p.off = p.tok.end // raw scan right after "match"
	p.skipSpace()
	for p.off < len(p.src) && p.src[p.off] == '/' {
		p.off++
		start := p.off
		if p.off < len(p.src) && p.src[p.off] == '{' {
			end := strings.IndexByte(p.src[p.off:], '}')
			if end < 0 {
				p.failAt(p.posAt(start), "unterminated {")
			}
			inner := p.src[p.off+1 : p.off+end]
			seg := Segment{Var: inner}
			if name, rec, ok := strings.Cut(inner, "="); ok {
				if rec != "**" {
					p.failAt(p.posAt(start), "expected {name=**}")
				}
				seg = Segment{Var: name, Recursive: true}
			}
			if seg.Var == "" {
				p.failAt(p.posAt(start), "empty wildcard name")
			}
			m.Path = append(m.Path, seg)
			p.off += end + 1
			continue
		}
		for p.off < len(p.src) && (isPathChar(p.src[p.off]) || p.src[p.off] == '(' || p.src[p.off] == ')') {
			p.off++
		}
		if p.off == start {
			p.failAt(p.posAt(start), "empty path segment")
		}
		m.Path = append(m.Path, Segment{Literal: p.src[start:p.off]})
	}
	if len(m.Path) == 0 {
		p.failAt(p.posAt(p.off), "expected a path starting with /")
	}
	for i, s := range m.Path {
		if s.Recursive && i != len(m.Path)-1 {
			p.failAt(m.Pos, "a {name=**} wildcard must be the last segment")
		}
	}
	p.next()
	p.expect("{")
	for !p.is("}") {
		switch {
		case p.is("match"):
			m.Matches = append(m.Matches, p.match())
		case p.is("allow"):
			m.Allows = append(m.Allows, p.allow())
		case p.is("function"):
			m.Funcs = append(m.Funcs, p.function())
		default:
			p.fail("expected match, allow or function, found %s", p.describe())
		}
	}
	p.next()
	return m
}

var methods = map[string]bool{"read": true, "write": true, "get": true, "list": true, "create": true, "update": true, "delete": true}

func (p *parser) allow() *Allow {
	a := &Allow{Pos: p.tok.pos}
	p.next()
	for {
		t := p.ident()
		if !methods[t.text] {
			p.failAt(t.pos, "unknown method %q", t.text)
		}
		a.Methods = append(a.Methods, t.text)
		if !p.is(",") {
			break
		}
		p.next()
	}
	if p.is(":") {
		p.next()
		p.expect("if")
		a.Cond = p.expr()
	}
	if p.is(";") {
		p.next()
	}
	return a
}

func (p *parser) function() *Func {
	f := &Func{Pos: p.tok.pos}
	p.expect("function")
	f.Name = p.ident().text
	p.expect("(")
	for !p.is(")") {
		f.Params = append(f.Params, p.ident().text)
		if !p.is(",") {
			break
		}
		p.next()
	}
	p.expect(")")
	p.expect("{")
	for p.is("let") {
		p.next()
		name := p.ident().text
		p.expect("=")
		f.Lets = append(f.Lets, Let{name, p.expr()})
		p.expect(";")
	}
	p.expect("return")
	f.Return = p.expr()
	if p.is(";") {
		p.next()
	}
	p.expect("}")
	return f
}

// Expressions, lowest precedence first.

func (p *parser) expr() Expr {
	c := p.binary(0)
	if p.is("?") {
		pos := p.tok.pos
		p.next()
		then := p.expr()
		p.expect(":")
		return &Cond{P: pos, C: c, Then: then, E: p.expr()}
	}
	return c
}

var levels = [][]string{{"||"}, {"&&"}, {"==", "!="}, {"is"}, {"in"}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}}

func (p *parser) binary(level int) Expr {
	if level == len(levels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for {
		op := ""
		for _, o := range levels[level] {
			if p.is(o) {
				op = o
			}
		}
		if op == "" {
			return x
		}
		pos := p.tok.pos
		p.next()
		if op == "is" {
			x = &Is{P: pos, X: x, Type: p.ident().text}
			continue
		}
		x = &Binary{P: pos, Op: op, X: x, Y: p.binary(level + 1)}
	}
}

func (p *parser) unary() Expr {
	if p.is("!") || p.is("-") {
		pos, op := p.tok.pos, p.tok.text
		p.next()
		return &Unary{P: pos, Op: op, X: p.unary()}
	}
	return p.postfix(p.primary())
}

func (p *parser) args() []Expr {
	p.expect("(")
	var args []Expr
	for !p.is(")") {
		args = append(args, p.expr())
		if !p.is(",") {
			break
		}
		p.next()
	}
	p.expect(")")
	return args
}

func (p *parser) postfix(x Expr) Expr {
	for {
		switch {
		case p.is("."):
			p.next()
			t := p.tok
			if t.kind != tIdent {
				p.fail("expected a field or method name, found %s", p.describe())
			}
			p.next()
			x = &Member{P: t.pos, X: x, Name: t.text}
			if p.is("(") {
				x = &Call{P: t.pos, Fn: x, Args: p.args()}
			}
		case p.is("["):
			pos := p.tok.pos
			p.next()
			var lo Expr
			if !p.is(":") {
				lo = p.expr()
			}
			if p.is(":") {
				p.next()
				var hi Expr
				if !p.is("]") {
					hi = p.expr()
				}
				p.expect("]")
				x = &Slice{P: pos, X: x, Lo: lo, Hi: hi}
				continue
			}
			p.expect("]")
			x = &Index{P: pos, X: x, I: lo}
		default:
			return x
		}
	}
}

func (p *parser) primary() Expr {
	t := p.tok
	switch t.kind {
	case tInt:
		p.next()
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.failAt(t.pos, "integer %s out of range", t.text)
		}
		return &Lit{P: t.pos, V: v}
	case tFloat:
		p.next()
		v, _ := strconv.ParseFloat(t.text, 64)
		return &Lit{P: t.pos, V: v}
	case tString:
		p.next()
		return &Lit{P: t.pos, V: t.text}
	case tBytes:
		p.next()
		return &Lit{P: t.pos, V: []byte(t.text)}
	case tIdent:
		switch t.text {
		case "true", "false":
			p.next()
			return &Lit{P: t.pos, V: t.text == "true"}
		case "null":
			p.next()
			return &Lit{P: t.pos, V: nil}
		}
		p.next()
		id := &Ident{P: t.pos, Name: t.text}
		if p.is("(") {
			return &Call{P: t.pos, Fn: id, Args: p.args()}
		}
		return id
	}
	switch t.text {
	case "(":
		p.next()
		x := p.expr()
		p.expect(")")
		return x
	case "[":
		p.next()
		l := &ListLit{P: t.pos}
		for !p.is("]") {
			l.Elems = append(l.Elems, p.expr())
			if !p.is(",") {
				break
			}
			p.next()
		}
		p.expect("]")
		return l
	case "{":
		p.next()
		m := &MapLit{P: t.pos}
		for !p.is("}") {
			m.Keys = append(m.Keys, p.expr())
			p.expect(":")
			m.Values = append(m.Values, p.expr())
			if !p.is(",") {
				break
			}
			p.next()
		}
		p.expect("}")
		return m
	case "/":
		return p.pathLit()
	}
	p.fail("expected an expression, found %s", p.describe())
	return nil
}

// pathLit scans /seg/$(expr)/seg raw from the source.
func (p *parser) pathLit() Expr {
	lit := &PathLit{P: p.tok.pos}
	p.off = p.tok.off
	for p.off < len(p.src) && p.src[p.off] == '/' {
		p.off++
		if strings.HasPrefix(p.src[p.off:], "$(") {
			p.off += 2
			p.next()
			lit.Parts = append(lit.Parts, p.expr())
			if !p.is(")") {
				p.fail("expected \")\" closing $(, found %s", p.describe())
			}
			p.off = p.tok.end
			continue
		}
		start := p.off
		depth := 0
		for p.off < len(p.src) {
			c := p.src[p.off]
			if c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if !isPathChar(c) {
				break
			}
			p.off++
		}
		if p.off == start {
			p.failAt(p.posAt(start), "empty path segment")
		}
		lit.Parts = append(lit.Parts, p.src[start:p.off])
	}
	p.next()
	return lit
}

package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The rule expressions are a small JavaScript-like language: literals
// (numbers, strings in either quote, true, false, null, /regex/ flags),
// variables (auth, root, data, newData, now, query, $wildcards), member
// access and calls, ! and unary -, * / %, + -, comparisons, == === != !==,
// && || and ?:.

// expr is a parsed expression.
type expr interface{ pos() int }

type (
	litExpr struct {
		at int
		v  any
	}
	varExpr struct {
		at   int
		name string
	}
	memberExpr struct {
		at   int
		x    expr
		name string
	}
	indexExpr struct {
		at     int
		x, idx expr
	}
	callExpr struct {
		at   int
		fn   expr
		args []expr
	}
	unaryExpr struct {
		at int
		op string
		x  expr
	}
	binaryExpr struct {
		at   int
		op   string
		l, r expr
	}
	condExpr struct {
		at            int
		cond, yes, no expr
	}
	listExpr struct {
		at    int
		items []expr
	}
)

func (e litExpr) pos() int    { return e.at }
func (e varExpr) pos() int    { return e.at }
func (e memberExpr) pos() int { return e.at }
func (e indexExpr) pos() int  { return e.at }
func (e callExpr) pos() int   { return e.at }
func (e unaryExpr) pos() int  { return e.at }
func (e binaryExpr) pos() int { return e.at }
func (e condExpr) pos() int   { return e.at }
func (e listExpr) pos() int   { return e.at }

// token is one lexeme: kind "num", "str", "ident", "regex", "op" or "eof".
type token struct {
	kind string
	text string
	val  any
	at   int
}

// exprError is a mistake at an offset of the expression.
type exprError struct {
	at  int
	msg string
}

func (e *exprError) Error() string { return e.msg }

type lexer struct {
	src  string
	pos  int
	prev token
}

var ops = []string{"===", "!==", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "(", ")", "[", "]", ".", ",", "?", ":"}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && strings.ContainsRune(" \t\r\n", rune(l.src[l.pos])) {
		l.pos++
	}
	if l.pos >= len(l.src) {
		return token{kind: "eof", at: l.pos}, nil
	}
	start := l.pos
	c := l.src[l.pos]
	switch {
	case c >= '0' && c <= '9':
		end := l.pos
		for end < len(l.src) && (l.src[end] >= '0' && l.src[end] <= '9' || l.src[end] == '.' || l.src[end] == 'e' || l.src[end] == 'E' ||
			((l.src[end] == '+' || l.src[end] == '-') && (l.src[end-1] == 'e' || l.src[end-1] == 'E'))) {
			end++
		}
		f, err := strconv.ParseFloat(l.src[l.pos:end], 64)
		if err != nil {
			return token{}, &exprError{start, fmt.Sprintf("invalid number %q", l.src[l.pos:end])}
		}
		l.pos = end
		return l.emit(token{kind: "num", val: f, at: start}), nil
	case c == '"' || c == '\'':
		var sb strings.Builder
		i := l.pos + 1
		for ; i < len(l.src) && l.src[i] != c; i++ {
			if l.src[i] == '\\' && i+1 < len(l.src) {
				i++
				switch l.src[i] {
				case 'n':
					sb.WriteByte('\n')
				case 't':
					sb.WriteByte('\t')
				case 'r':
					sb.WriteByte('\r')
				default:
					sb.WriteByte(l.src[i])
				}
				continue
			}
			sb.WriteByte(l.src[i])
		}
		if i >= len(l.src) {
			return token{}, &exprError{start, "unterminated string"}
		}
		l.pos = i + 1
		return l.emit(token{kind: "str", val: sb.String(), at: start}), nil
	case c == '$' || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z'):
		end := l.pos + 1
		for end < len(l.src) && (l.src[end] == '_' || l.src[end] == '$' || (l.src[end]|0x20 >= 'a' && l.src[end]|0x20 <= 'z') || (l.src[end] >= '0' && l.src[end] <= '9')) {
			end++
		}
		l.pos = end
		return l.emit(token{kind: "ident", text: l.src[start:end], at: start}), nil
	case c == '/' && l.regexAllowed():
		i := l.pos + 1
		for ; i < len(l.src) && l.src[i] != '/'; i++ {
			if l.src[i] == '\\' {
				i++
			}
		}
		if i >= len(l.src) {
			return token{}, &exprError{start, "unterminated regular expression"}
		}
		pattern := l.src[l.pos+1 : i]
		i++
		flags := ""
		for i < len(l.src) && l.src[i]|0x20 >= 'a' && l.src[i]|0x20 <= 'z' {
			flags += string(l.src[i])
			i++
		}
		if flags != "" && flags != "i" {
			return token{}, &exprError{start, fmt.Sprintf("unsupported regular expression flags %q", flags)}
		}
		if flags == "i" {
			pattern = "(?i)" + pattern
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return token{}, &exprError{start, fmt.Sprintf("invalid regular expression: %v", err)}
		}
		l.pos = i
		return l.emit(token{kind: "regex", val: re, at: start}), nil
	}
	for _, op := range ops {
		if strings.HasPrefix(l.src[l.pos:], op) {
			l.pos += len(op)
			return l.emit(token{kind: "op", text: op, at: start}), nil
		}
	}
	return token{}, &exprError{start, fmt.Sprintf("unexpected character %q", c)}
}

func (l *lexer) emit(t token) token {
	l.prev = t
	return t
}

// regexAllowed reports whether a / here starts a regular expression (after
// an operator or an opening bracket) rather than dividing.
func (l *lexer) regexAllowed() bool {
	switch l.prev.kind {
	case "", "op":
		return l.prev.text != ")" && l.prev.text != "]"
	}
	return false
}

// parser is a precedence-climbing parser over the lexer.
type parser struct {
	lex *lexer
	tok token
}

func parseExpr(src string) (expr, error) {
	p := &parser{lex: &lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	e, err := p.cond()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != "eof" {
		return nil, &exprError{p.tok.at, fmt.Sprintf("unexpected %q", p.tok.text+fmt.Sprint(p.tokVal()))}
	}
	return e, nil
}

func (p *parser) tokVal() string {
	if p.tok.val == nil {
		return ""
	}
	return fmt.Sprint(p.tok.val)
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) isOp(op string) bool { return p.tok.kind == "op" && p.tok.text == op }

func (p *parser) expect(op string) error {
	if !p.isOp(op) {
		return &exprError{p.tok.at, fmt.Sprintf("expected %q", op)}
	}
	return p.advance()
}

func (p *parser) cond() (expr, error) {
	c, err := p.binary(0)
	if err != nil || !p.isOp("?") {
		return c, err
	}
	at := p.tok.at
	if err := p.advance(); err != nil {
		return nil, err
	}
	yes, err := p.cond()
	if err != nil {
		return nil, err
	}
	if err := p.expect(":"); err != nil {
		return nil, err
	}
	no, err := p.cond()
	if err != nil {
		return nil, err
	}
	return condExpr{at, c, yes, no}, nil
}

var precedence = map[string]int{
	"||": 1, "&&": 2,
	"==": 3, "===": 3, "!=": 3, "!==": 3,
	"<": 4, "<=": 4, ">": 4, ">=": 4,
	"+": 5, "-": 5,
	"*": 6, "/": 6, "%": 6,
}

func (p *parser) binary(min int) (expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == "op" {
		prec, ok := precedence[p.tok.text]
		if !ok || prec <= min {
			break
		}
		op, at := p.tok.text, p.tok.at
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.binary(prec)
		if err != nil {
			return nil, err
		}
		l = binaryExpr{at, op, l, r}
	}
	return l, nil
}

func (p *parser) unary() (expr, error) {
	if p.isOp("!") || p.isOp("-") {
		op, at := p.tok.text, p.tok.at
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unaryExpr{at, op, x}, nil
	}
	return p.postfix()
}

func (p *parser) postfix() (expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			if err := p.advance(); err != nil {
				return nil, err
			}
			if p.tok.kind != "ident" {
				return nil, &exprError{p.tok.at, "expected a name after ."}
			}
			x = memberExpr{p.tok.at, x, p.tok.text}
			if err := p.advance(); err != nil {
				return nil, err
			}
		case p.isOp("["):
			at := p.tok.at
			if err := p.advance(); err != nil {
				return nil, err
			}
			idx, err := p.cond()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			x = indexExpr{at, x, idx}
		case p.isOp("("):
			at := p.tok.at
			args, err := p.list(")")
			if err != nil {
				return nil, err
			}
			x = callExpr{at, x, args}
		default:
			return x, nil
		}
	}
}

// list reads comma-separated expressions up to close (the opening bracket
// is the current token).
func (p *parser) list(close string) ([]expr, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	var items []expr
	for !p.isOp(close) {
		if len(items) > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		e, err := p.cond()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	return items, p.advance()
}

func (p *parser) primary() (expr, error) {
	t := p.tok
	switch t.kind {
	case "num", "str", "regex":
		return litExpr{t.at, t.val}, p.advance()
	case "ident":
		if err := p.advance(); err != nil {
			return nil, err
		}
		switch t.text {
		case "true":
			return litExpr{t.at, true}, nil
		case "false":
			return litExpr{t.at, false}, nil
		case "null":
			return litExpr{t.at, nil}, nil
		}
		return varExpr{t.at, t.text}, nil
	case "op":
		switch t.text {
		case "(":
			if err := p.advance(); err != nil {
				return nil, err
			}
			e, err := p.cond()
			if err != nil {
				return nil, err
			}
			return e, p.expect(")")
		case "[":
			items, err := p.list("]")
			return listExpr{t.at, items}, err
		}
	case "eof":
		return nil, &exprError{t.at, "unexpected end of the expression"}
	}
	return nil, &exprError{t.at, fmt.Sprintf("unexpected %q", t.text)}
}

// checkVars reports the first variable an expression uses that is not in
// scope.
func checkVars(e expr, scope map[string]bool) error {
	var err error
	walk(e, func(x expr) {
		if v, ok := x.(varExpr); ok && err == nil && !scope[v.name] {
			err = &exprError{v.at, fmt.Sprintf("Unknown variable '%s'.", v.name)}
		}
	})
	return err
}

func walk(e expr, fn func(expr)) {
	fn(e)
	switch x := e.(type) {
	case memberExpr:
		walk(x.x, fn)
	case indexExpr:
		walk(x.x, fn)
		walk(x.idx, fn)
	case callExpr:
		walk(x.fn, fn)
		for _, a := range x.args {
			walk(a, fn)
		}
	case unaryExpr:
		walk(x.x, fn)
	case binaryExpr:
		walk(x.l, fn)
		walk(x.r, fn)
	case condExpr:
		walk(x.cond, fn)
		walk(x.yes, fn)
		walk(x.no, fn)
	case listExpr:
		for _, a := range x.items {
			walk(a, fn)
		}
	}
}

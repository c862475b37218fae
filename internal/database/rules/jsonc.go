package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The rules file is JSON with comments (// and /* */), as the Realtime
// Database accepts it. This reader keeps each value's position so that an
// error in a rule names its line and column.

// jvalue is a JSON value with its position: a string, float64, bool, nil,
// or an object.
type jvalue struct {
	v         any
	line, col int
}

// jobject keeps its keys in file order.
type jobject struct {
	keys []string
	vals map[string]jvalue
}

// SyntaxError is a rules file mistake at a line and column.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

type jreader struct {
	src       string
	pos       int
	line, col int
}

// parseJSONC reads src, after a UTF-8 byte-order mark if it starts with one.
func parseJSONC(src string) (jvalue, error) {
	r := &jreader{src: strings.TrimPrefix(src, "\uFEFF"), line: 1, col: 1}
	v, err := r.value()
	if err != nil {
		return jvalue{}, err
	}
	if err := r.space(); err != nil {
		return jvalue{}, err
	}
	if r.pos < len(r.src) {
		return jvalue{}, r.errorf("unexpected %q after the rules object", r.src[r.pos])
	}
	return v, nil
}

func (r *jreader) errorf(format string, args ...any) error {
	return &SyntaxError{Line: r.line, Col: r.col, Msg: fmt.Sprintf(format, args...)}
}

func (r *jreader) advance(n int) {
	for i := 0; i < n && r.pos < len(r.src); i++ {
		if r.src[r.pos] == '\n' {
			r.line++
			r.col = 1
		} else if r.src[r.pos]&0xc0 != 0x80 {
			r.col++
		}
		r.pos++
	}
}

// space skips white space and comments.
func (r *jreader) space() error {
	for r.pos < len(r.src) {
		switch c := r.src[r.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.advance(1)
		case strings.HasPrefix(r.src[r.pos:], "//"):
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.advance(1)
			}
		case strings.HasPrefix(r.src[r.pos:], "/*"):
			end := strings.Index(r.src[r.pos+2:], "*/")
			if end < 0 {
				return r.errorf("unterminated comment")
			}
			r.advance(end + 4)
		default:
			return nil
		}
	}
	return nil
}

func (r *jreader) value() (jvalue, error) {
	if err := r.space(); err != nil {
		return jvalue{}, err
	}
	at := jvalue{line: r.line, col: r.col}
	if r.pos >= len(r.src) {
		return at, r.errorf("unexpected end of the file")
	}
	switch c := r.src[r.pos]; {
	case c == '{':
		obj, err := r.object()
		at.v = obj
		return at, err
	case c == '[':
		list, err := r.array()
		at.v = list
		return at, err
	case c == '"':
		s, err := r.str()
		at.v = s
		return at, err
	case strings.HasPrefix(r.src[r.pos:], "true"):
		r.advance(4)
		at.v = true
	case strings.HasPrefix(r.src[r.pos:], "false"):
		r.advance(5)
		at.v = false
	case strings.HasPrefix(r.src[r.pos:], "null"):
		r.advance(4)
	case c == '-' || (c >= '0' && c <= '9'):
		end := r.pos + 1
		for end < len(r.src) && strings.ContainsRune("0123456789.eE+-", rune(r.src[end])) {
			end++
		}
		f, err := strconv.ParseFloat(r.src[r.pos:end], 64)
		if err != nil {
			return at, r.errorf("invalid number %q", r.src[r.pos:end])
		}
		r.advance(end - r.pos)
		at.v = f
	default:
		return at, r.errorf("unexpected %q", c)
	}
	return at, nil
}

func (r *jreader) object() (*jobject, error) {
	obj := &jobject{vals: map[string]jvalue{}}
	r.advance(1)
	for {
		if err := r.space(); err != nil {
			return nil, err
		}
		if r.pos < len(r.src) && r.src[r.pos] == '}' {
			r.advance(1)
			return obj, nil
		}
		if len(obj.keys) > 0 {
			if r.pos >= len(r.src) || r.src[r.pos] != ',' {
				return nil, r.errorf("expected , or }")
			}
			r.advance(1)
			if err := r.space(); err != nil {
				return nil, err
			}
			if r.pos < len(r.src) && r.src[r.pos] == '}' { // a trailing comma
				r.advance(1)
				return obj, nil
			}
		}
		if r.pos >= len(r.src) || r.src[r.pos] != '"' {
			return nil, r.errorf("expected a key in double quotes")
		}
		keyLine, keyCol := r.line, r.col
		key, err := r.str()
		if err != nil {
			return nil, err
		}
		if _, dup := obj.vals[key]; dup {
			return nil, &SyntaxError{keyLine, keyCol, fmt.Sprintf("key %q appears twice", key)}
		}
		if err := r.space(); err != nil {
			return nil, err
		}
		if r.pos >= len(r.src) || r.src[r.pos] != ':' {
			return nil, r.errorf("expected :")
		}
		r.advance(1)
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		obj.keys = append(obj.keys, key)
		obj.vals[key] = v
	}
}

func (r *jreader) array() ([]jvalue, error) {
	var out []jvalue
	r.advance(1)
	for {
		if err := r.space(); err != nil {
			return nil, err
		}
		if r.pos < len(r.src) && r.src[r.pos] == ']' {
			r.advance(1)
			return out, nil
		}
		if len(out) > 0 {
			if r.pos >= len(r.src) || r.src[r.pos] != ',' {
				return nil, r.errorf("expected , or ]")
			}
			r.advance(1)
		}
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

// str reads a JSON string.
func (r *jreader) str() (string, error) {
	start := r.pos
	i := r.pos + 1
	for i < len(r.src) {
		switch r.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			var s string
			if err := jsonUnquote(r.src[start:i+1], &s); err != nil {
				return "", r.errorf("invalid string")
			}
			r.advance(i + 1 - start)
			return s, nil
		case '\n':
			return "", r.errorf("unterminated string")
		}
		i++
	}
	return "", r.errorf("unterminated string")
}

// jsonUnquote decodes a double-quoted JSON string.
func jsonUnquote(q string, out *string) error {
	if !utf8.ValidString(q) {
		return fmt.Errorf("not UTF-8")
	}
	s, err := strconv.Unquote(strings.ReplaceAll(q, `\/`, `/`))
	if err != nil {
		return err
	}
	*out = s
	return nil
}

package triggers

import (
	"fmt"
	"strings"
)

// pattern is a compiled resource path pattern.
type pattern struct{ segments []string }

func compilePattern(p string) (pattern, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return pattern{}, fmt.Errorf("empty path pattern")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasSuffix(s, "=**}") && i != len(segs)-1 {
			return pattern{}, fmt.Errorf("path pattern %q: {x=**} must be the last segment", p)
		}
		if s == "" {
			return pattern{}, fmt.Errorf("path pattern %q has an empty segment", p)
		}
	}
	return pattern{segs}, nil
}

// match reports whether a path fits the pattern: {x} (or *) matches one
// segment, {x=**} (or **) the rest of the path (at least one segment).
func (p pattern) match(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, ps := range p.segments {
		if strings.HasSuffix(ps, "=**}") || ps == "**" {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		wild := ps == "*" || strings.HasPrefix(ps, "{") && strings.HasSuffix(ps, "}")
		if !wild && ps != segs[i] {
			return false
		}
	}
	return len(segs) == len(p.segments)
}

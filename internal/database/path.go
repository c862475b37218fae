package database

import (
	"strings"
	"unicode/utf8"

	"github.com/loupe-dev/loupe/internal/errs"
)

// Limits the Realtime Database enforces on paths and keys.
const (
	maxKeyBytes  = 768
	maxPathDepth = 32
	maxLeafBytes = 10 << 20
)

// Path is a location in a namespace's tree: its keys from the root.
type Path []string

// ParsePath splits a slash-separated path, dropping empty segments, and
// checks each key. ".priority" may only end a path (it names the priority
// of the location above it).
func ParsePath(s string) (Path, error) {
	var p Path
	for seg := range strings.SplitSeq(s, "/") {
		if seg == "" {
			continue
		}
		p = append(p, seg)
	}
	for i, k := range p {
		if k == ".priority" && i == len(p)-1 {
			continue
		}
		if err := checkKey(k); err != nil {
			return nil, errs.Errorf(errs.InvalidArgument, "Invalid path %q: %v", s, err)
		}
	}
	if len(p) > maxPathDepth {
		return nil, errs.Errorf(errs.InvalidArgument, "Invalid path %q: more than %d levels deep", s, maxPathDepth)
	}
	return p, nil
}

// checkKey reports why a key is not allowed: empty, longer than 768 bytes,
// not UTF-8, or holding . $ # [ ] / or a control character.
func checkKey(k string) error {
	if k == "" {
		return errs.New(errs.InvalidArgument, "empty key")
	}
	if len(k) > maxKeyBytes {
		return errs.Errorf(errs.InvalidArgument, "key longer than %d bytes", maxKeyBytes)
	}
	if !utf8.ValidString(k) {
		return errs.New(errs.InvalidArgument, "key is not valid UTF-8")
	}
	for _, r := range k {
		if strings.ContainsRune(".$#[]/", r) || r < 0x20 || r == 0x7f {
			return errs.Errorf(errs.InvalidArgument, "key %q contains one of . $ # [ ] / or a control character", k)
		}
	}
	return nil
}

// String is the path with a leading slash ("/" for the root).
func (p Path) String() string { return "/" + strings.Join(p, "/") }

// Child is p with key appended (a new slice).
func (p Path) Child(keys ...string) Path {
	out := make(Path, 0, len(p)+len(keys))
	return append(append(out, p...), keys...)
}

// Parent is p without its last key.
func (p Path) Parent() Path {
	if len(p) == 0 {
		return p
	}
	return p[:len(p)-1]
}

// HasPrefix reports whether q is p or an ancestor of p.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Related reports whether one of p and q contains the other.
func (p Path) Related(q Path) bool { return p.HasPrefix(q) || q.HasPrefix(p) }

// Equal reports whether p and q name the same location.
func (p Path) Equal(q Path) bool { return len(p) == len(q) && p.HasPrefix(q) }

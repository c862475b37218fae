package firestore

import (
	"strconv"
	"strings"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
)

// maxNameBytes is Firestore's limit on a document name's size.
const maxNameBytes = 6 * 1024

// Name is a parsed resource name: a database and a path under its documents.
type Name struct {
	// Database is "projects/{p}/databases/{d}".
	Database string
	// Path is the segments under documents/, e.g. ["users", "u1"].
	Path []string
}

// String is the full resource name.
func (n Name) String() string {
	if len(n.Path) == 0 {
		return n.Database + "/documents"
	}
	return n.Database + "/documents/" + strings.Join(n.Path, "/")
}

// IsDocument reports whether the path names a document (even segment count).
func (n Name) IsDocument() bool { return len(n.Path) > 0 && len(n.Path)%2 == 0 }

// Parent is the collection holding the document: its path joined.
func (n Name) Parent() string { return strings.Join(n.Path[:len(n.Path)-1], "/") }

// ID is the last segment.
func (n Name) ID() string { return n.Path[len(n.Path)-1] }

// DatabaseName is a database resource name, "projects/{Project}/databases/{ID}",
// in its parts.
type DatabaseName struct{ Project, ID string }

// SplitDatabase splits a database resource name that is known to be well
// formed (ParseDatabase checks one from a client); a name that names no
// database is its project's (default) database.
func SplitDatabase(name string) DatabaseName {
	rest := strings.TrimPrefix(name, "projects/")
	project, id, ok := strings.Cut(rest, "/databases/")
	if !ok {
		return DatabaseName{Project: project, ID: "(default)"}
	}
	return DatabaseName{Project: project, ID: id}
}

// String is the resource name.
func (d DatabaseName) String() string { return "projects/" + d.Project + "/databases/" + d.ID }

// ParseDatabase parses "projects/{p}/databases/{d}".
func ParseDatabase(s string) (string, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[2] != "databases" || parts[1] == "" || parts[3] == "" {
		return "", errorf(errs.InvalidArgument, "Invalid database name: %q", s)
	}
	return s, nil
}

// ParseName parses a document or collection resource name
// "projects/{p}/databases/{d}/documents[/…]"; the root documents path has no segments.
func ParseName(s string) (Name, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 5 || parts[0] != "projects" || parts[2] != "databases" || parts[4] != "documents" || parts[1] == "" || parts[3] == "" {
		return Name{}, errorf(errs.InvalidArgument, "Invalid resource name: %q", s)
	}
	if len(s) > maxNameBytes {
		return Name{}, errorf(errs.InvalidArgument, "Document name %q is too long.", s[:64]+"…")
	}
	n := Name{Database: strings.Join(parts[:4], "/"), Path: parts[5:]}
	for i, seg := range n.Path {
		if i%2 == 1 && isNumericID(seg) {
			continue
		}
		if err := validSegment(seg); err != nil {
			return Name{}, err
		}
	}
	return n, nil
}

// isNumericID reports whether a document id is a numeric id,
// "__id<int64>__", the one reserved form Firestore accepts (documents
// written through Datastore mode have them); such ids sort before string
// ids, by number.
func isNumericID(seg string) bool {
	_, ok := numericID(seg)
	return ok
}

// numericID returns the number of a numeric id.
func numericID(seg string) (int64, bool) {
	digits, ok := strings.CutPrefix(seg, "__id")
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, "__"); !ok || digits == "" || digits[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// ParseDocumentName parses a name that must point at a document.
func ParseDocumentName(s string) (Name, error) {
	if !strings.HasPrefix(s, "projects") {
		// Production's words for a name that is not a resource name at all
		// (a URL, a path relative to the database).
		return Name{}, errorf(errs.InvalidArgument, "Document name \"%s\" lacks \"projects\" at index 0", s)
	}
	n, err := ParseName(s)
	if err != nil {
		return Name{}, err
	}
	if !n.IsDocument() {
		return Name{}, errorf(errs.InvalidArgument, "Document name %q has odd number of segments", s)
	}
	return n, nil
}

func validSegment(seg string) error {
	switch {
	case seg == "":
		return errorf(errs.InvalidArgument, "Resource name segments must not be empty.")
	case seg == "." || seg == "..":
		return errorf(errs.InvalidArgument, "Resource id %q is invalid: it must not be . or ..", seg)
	case strings.HasPrefix(seg, "__") && strings.HasSuffix(seg, "__") && len(seg) >= 4:
		return errorf(errs.InvalidArgument, "Resource id %q is invalid because it is reserved.", seg)
	case len(seg) > 1500:
		return errorf(errs.InvalidArgument, "Resource id is longer than 1500 bytes.")
	case !utf8.ValidString(seg):
		return errorf(errs.InvalidArgument, "Resource id is not valid UTF-8.")
	}
	return nil
}

// FieldPath is a parsed field path: its segments, unquoted.
type FieldPath []string

// String renders the path with backticks where a segment needs them.
func (f FieldPath) String() string {
	parts := make([]string, len(f))
	for i, s := range f {
		if isSimpleSegment(s) {
			parts[i] = s
		} else {
			parts[i] = "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s) + "`"
		}
	}
	return strings.Join(parts, ".")
}

func isSimpleSegment(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// invalidPath is production's answer to a field path that does not parse
// (a segment that is not an identifier and not quoted, an empty segment, a
// stray backtick).
const invalidPath = "Invalid property path \"%s\"."

// ParseFieldPath parses a dotted field path where segments that are not
// simple identifiers are quoted with backticks (a backslash escapes ` and \).
func ParseFieldPath(s string) (FieldPath, error) {
	if s == "" {
		return nil, errorf(errs.InvalidArgument, "Invalid field path: the path is empty.")
	}
	if len(s) > 1500 {
		return nil, errorf(errs.InvalidArgument, "Field path is longer than 1500 bytes.")
	}
	var out FieldPath
	var cur strings.Builder
	quoted, inQuote, escaped := false, false, false
	flush := func() error {
		seg := cur.String()
		if seg == "" && !quoted {
			return errorf(errs.InvalidArgument, invalidPath, s)
		}
		if !quoted && !isSimpleSegment(seg) {
			return errorf(errs.InvalidArgument, invalidPath, s)
		}
		out = append(out, seg)
		cur.Reset()
		quoted = false
		return nil
	}
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case inQuote && r == '\\':
			escaped = true
		case r == '`':
			if !inQuote && cur.Len() > 0 {
				return nil, errorf(errs.InvalidArgument, invalidPath, s)
			}
			inQuote = !inQuote
			quoted = true
		case r == '.' && !inQuote:
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			if quoted && !inQuote {
				return nil, errorf(errs.InvalidArgument, invalidPath, s)
			}
			cur.WriteRune(r)
		}
	}
	if inQuote || escaped {
		return nil, errorf(errs.InvalidArgument, invalidPath, s)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// GetField reads a field from document fields; ok is false when absent.
func GetField(fields map[string]*pb.Value, path FieldPath) (*pb.Value, bool) {
	var v *pb.Value
	m := fields
	for i, seg := range path {
		var ok bool
		v, ok = m[seg]
		if !ok {
			return nil, false
		}
		if i < len(path)-1 {
			mv, isMap := v.GetValueType().(*pb.Value_MapValue)
			if !isMap {
				return nil, false
			}
			m = mv.MapValue.GetFields()
		}
	}
	return v, true
}

// setField writes a field, creating (or replacing non-map values with) maps on the way.
func setField(fields map[string]*pb.Value, path FieldPath, v *pb.Value) {
	m := fields
	for _, seg := range path[:len(path)-1] {
		next, ok := m[seg].GetValueType().(*pb.Value_MapValue)
		if !ok {
			next = &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{}}}
			m[seg] = &pb.Value{ValueType: next}
		}
		if next.MapValue.Fields == nil {
			next.MapValue.Fields = map[string]*pb.Value{}
		}
		m = next.MapValue.Fields
	}
	m[path[len(path)-1]] = v
}

// deleteField removes a field if present.
func deleteField(fields map[string]*pb.Value, path FieldPath) {
	m := fields
	for _, seg := range path[:len(path)-1] {
		next, ok := m[seg].GetValueType().(*pb.Value_MapValue)
		if !ok {
			return
		}
		m = next.MapValue.GetFields()
	}
	delete(m, path[len(path)-1])
}

// ProjectOf is the project a resource name ("projects/P/databases/…")
// names, or "" when it names none.
func ProjectOf(name string) string {
	rest, ok := strings.CutPrefix(name, "projects/")
	if !ok {
		return ""
	}
	project, _, _ := strings.Cut(rest, "/")
	return project
}

package httpjson

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/loupe-dev/loupe/internal/errs"
)

// The request decoding of the Google JSON APIs loupe serves: as Google's
// front end does, a body field or query parameter with a name the request
// message does not have is an INVALID_ARGUMENT error naming it, never
// silently dropped.

// UnknownField is the front end's error for a body field the request
// message lacks; at is the path of the object that holds it in proto field
// names ("writes[0]", "structured_query.where"), "" at the top.
func UnknownField(name, at string) error {
	if at == "" {
		return errs.Errorf(errs.InvalidArgument, "Invalid JSON payload received. Unknown name %q: Cannot find field.", name)
	}
	return errs.Errorf(errs.InvalidArgument, "Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, at)
}

// NotRepeating is the front end's error for a list given as the value of
// the field name (as the body spells it), which is not repeated, of the
// object at the path at ("" at the top).
func NotRepeating(name, at string) error {
	if at == "" {
		return errs.Errorf(errs.InvalidArgument, "Invalid JSON payload received. Unknown name %q: Proto field is not repeating, cannot start list.", name)
	}
	return errs.Errorf(errs.InvalidArgument, "Invalid JSON payload received. Unknown name %q at '%s': Proto field is not repeating, cannot start list.", name, at)
}

// ObjectOnScalar is the front end's error for an object given as the value
// of the scalar field (its proto name) of the object at the path at.
func ObjectOnScalar(field, at string) error {
	return errs.Errorf(errs.InvalidArgument, "Invalid value at '%s' (%s), Starting an object on a scalar field", at, field)
}

// InvalidValue is the front end's error for the value v (a JSON scalar)
// given for the field at the path at, of the type typ: the kind of a
// scalar field ("TYPE_BOOL"), the type URL of a message field.
func InvalidValue(at, typ string, v any) error {
	text, _ := json.Marshal(v)
	return errs.Errorf(errs.InvalidArgument, "Invalid value at '%s' (%s), %s", at, typ, text)
}

// UnknownParameter is the front end's error for a query parameter the
// request message lacks.
func UnknownParameter(name string) error {
	return errs.Errorf(errs.InvalidArgument, "Invalid JSON payload received. Unknown name %q: Cannot bind query parameter. Field '%s' could not be found in request message.", name, name)
}

// ProtoDecoder decodes JSON request bodies into proto messages.
type ProtoDecoder struct {
	// Extra are fields the SDKs send that the generated messages lack, by
	// message and JSON name ("google.firestore.v1.Write.verify"): they are
	// accepted, and left to the caller to read.
	Extra []string
}

// Decode fills m from body (an empty body leaves m as it is). A syntax or
// type error and an unknown field are INVALID_ARGUMENT errors worded as
// Google's front end words them.
func (d ProtoDecoder) Decode(body []byte, m proto.Message) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, m); err != nil {
		return errs.New(errs.InvalidArgument, "Invalid JSON payload received. "+err.Error())
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return errs.New(errs.InvalidArgument, "Invalid JSON payload received. "+err.Error())
	}
	if name, at, ok := d.unknown(v, m.ProtoReflect().Descriptor(), ""); ok {
		return UnknownField(name, at)
	}
	return nil
}

// unknown finds the first field of the JSON object v (keys in order) that
// md lacks, walking into message fields, and returns its name and the path
// of the object holding it.
func (d ProtoDecoder) unknown(v any, md protoreflect.MessageDescriptor, at string) (string, string, bool) {
	obj, ok := v.(map[string]any)
	if !ok || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return "", "", false
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fd := md.Fields().ByJSONName(k)
		if fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(k))
		}
		if fd == nil {
			if slices.Contains(d.Extra, string(md.FullName())+"."+k) {
				continue
			}
			return k, at, true
		}
		path := string(fd.Name())
		if at != "" {
			path = at + "." + path
		}
		switch {
		case fd.IsMap():
			if vd := fd.MapValue(); vd.Message() != nil {
				m, _ := obj[k].(map[string]any)
				for _, mk := range sortedKeys(m) {
					if n, p, ok := d.unknown(m[mk], vd.Message(), fmt.Sprintf("%s[%s]", path, mk)); ok {
						return n, p, true
					}
				}
			}
		case fd.Message() == nil:
		case fd.IsList():
			list, _ := obj[k].([]any)
			for i, e := range list {
				if n, p, ok := d.unknown(e, fd.Message(), fmt.Sprintf("%s[%d]", path, i)); ok {
					return n, p, true
				}
			}
		default:
			if n, p, ok := d.unknown(obj[k], fd.Message(), path); ok {
				return n, p, true
			}
		}
	}
	return "", "", false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CheckFields refuses a field of the JSON object obj (at the path at, ""
// at the top) that is not one of known, given in camelCase (Google's JSON
// APIs take the snake_case spelling too), as the front end refuses it for
// messages the server has no proto for.
func CheckFields[V any](obj map[string]V, at string, known ...string) error {
	for _, name := range sortedKeys(obj) {
		if !slices.Contains(known, name) && !slices.Contains(known, Camel(name)) {
			return UnknownField(name, at)
		}
	}
	return nil
}

// Camel turns snake_case into camelCase, a proto field's name into its
// JSON name.
func Camel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckParameters refuses a query parameter that is neither one of known
// (the request message's fields the handler reads, as "mask.fieldPaths")
// nor one of the system parameters every Google API takes (key, alt,
// fields, prettyPrint, …).
func CheckParameters(query map[string][]string, known ...string) error {
	names := make([]string, 0, len(query))
	for k := range query {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if SystemParameter(name) || slices.Contains(known, name) {
			continue
		}
		return UnknownParameter(name)
	}
	return nil
}

// SystemParameter reports whether name is one of the query parameters
// every Google API takes (key, alt, fields, prettyPrint…).
func SystemParameter(name string) bool { return slices.Contains(systemParameters, name) }

// systemParameters are the query parameters of every Google API.
var systemParameters = []string{"key", "alt", "$alt", "fields", "prettyPrint", "quotaUser", "access_token",
	"oauth_token", "callback", "upload_protocol", "uploadType", "$.xgafv", "$callback", "$fields", "$prettyPrint"}

package firestore

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// applyWrite computes one write's effect on the document's current state.
// current returns the state after the commit's earlier writes, and whether
// one of them wrote the document.
func applyWrite(w *pb.Write, database string, bson bool, current func(Name) (doc *pb.Document, written bool), commitTime *timestamppb.Timestamp) (Name, *pb.Document, WriteResult, Access, error) {
	name := writeName(w)
	if name == "" {
		return Name{}, nil, WriteResult{}, Access{}, errorf(errs.InvalidArgument, "A write must have an operation (update, delete or transform).")
	}
	n, err := ParseDocumentName(name)
	if err != nil {
		return Name{}, nil, WriteResult{}, Access{}, err
	}
	if n.Database != database {
		return Name{}, nil, WriteResult{}, Access{}, errorf(errs.InvalidArgument, "Document %q is not in database %q.", name, database)
	}
	old, written := current(n)
	if err := checkPrecondition(w.GetCurrentDocument(), old, name, written); err != nil {
		return Name{}, nil, WriteResult{}, Access{}, err
	}
	if _, ok := verifyOf(w); ok {
		return n, old, WriteResult{}, Access{}, nil // the precondition alone
	}
	var doc *pb.Document
	transforms := w.GetUpdateTransforms()
	switch op := w.GetOperation().(type) {
	case *pb.Write_Delete:
		if len(transforms) > 0 || w.GetUpdateMask() != nil {
			return Name{}, nil, WriteResult{}, Access{}, errorf(errs.InvalidArgument, "A delete cannot have an update mask or transforms.")
		}
		access := Access{Method: MethodDelete, Name: n, Existing: old}
		return n, nil, WriteResult{}, access, nil
	case *pb.Write_Update:
		if err := validateFields(op.Update.GetFields(), name, bson); err != nil {
			return Name{}, nil, WriteResult{}, Access{}, err
		}
		fields := map[string]*pb.Value{}
		if mask := w.GetUpdateMask(); mask != nil {
			if old != nil {
				fields = cloneFields(old.Fields)
			}
			for _, fp := range mask.GetFieldPaths() {
				path, err := ParseFieldPath(fp)
				if err != nil {
					return Name{}, nil, WriteResult{}, Access{}, err
				}
				if v, ok := GetField(op.Update.GetFields(), path); ok {
					setField(fields, path, proto.Clone(v).(*pb.Value))
				} else {
					deleteField(fields, path)
				}
			}
		} else {
			fields = cloneFields(op.Update.GetFields())
		}
		truncateFields(fields)
		doc = &pb.Document{Name: name, Fields: fields}
	case *pb.Write_Transform:
		if len(op.Transform.GetFieldTransforms()) == 0 && len(transforms) == 0 {
			// A transform of nothing: the precondition alone, leaving the document as it is.
			return n, old, WriteResult{}, Access{}, nil
		}
		transforms = append(transforms, op.Transform.GetFieldTransforms()...)
		doc = &pb.Document{Name: name, Fields: map[string]*pb.Value{}}
		if old != nil {
			doc.Fields = cloneFields(old.Fields)
		}
	}
	res := WriteResult{}
	for _, t := range transforms {
		v, err := applyTransform(doc.Fields, t, commitTime)
		if err != nil {
			return Name{}, nil, WriteResult{}, Access{}, err
		}
		res.TransformResults = append(res.TransformResults, v)
	}
	if err := checkLimits(doc); err != nil {
		return Name{}, nil, WriteResult{}, Access{}, err
	}
	method := MethodCreate
	if old != nil {
		method = MethodUpdate
	}
	return n, doc, res, Access{Method: method, Name: n, Existing: old, Incoming: doc}, nil
}

// checkPrecondition checks a write's precondition against the document as
// the commit's earlier writes left it (written: one of them wrote it).
// Updating a document an earlier write of the same commit deleted is
// INVALID_ARGUMENT, as in production (which the JS SDK's transaction
// tests pin: delete then update), not NOT_FOUND.
func checkPrecondition(p *pb.Precondition, old *pb.Document, name string, written bool) error {
	switch c := p.GetConditionType().(type) {
	case *pb.Precondition_Exists:
		if c.Exists && old == nil && written {
			return errorf(errs.InvalidArgument, "Cannot update document %s: an earlier write of the same request deleted it.", name)
		}
		if c.Exists && old == nil {
			return errorf(errs.NotFound, "No document to update: %s", name)
		}
		if !c.Exists && old != nil {
			return errorf(errs.AlreadyExists, "Document already exists: %s", name)
		}
	case *pb.Precondition_UpdateTime:
		if old == nil || !proto.Equal(old.UpdateTime, c.UpdateTime) {
			return errorf(errs.FailedPrecondition, "The document %s was modified since the given update time.", name)
		}
	}
	return nil
}

// Production's limits on a document's fields.
const (
	maxFieldNameBytes = 1500
	maxFields         = 20000
)

// validateFields rejects empty, reserved and overlong field names,
// malformed vectors, geo points off the globe and references that do not
// name a document; a map marked as a vector is checked as one, and with
// bson (an Enterprise database) a BSON value (bson.go) as one.
func validateFields(fields map[string]*pb.Value, docName string, bson bool) error {
	return validateFieldsAt(fields, docName, "", bson)
}

func validateFieldsAt(fields map[string]*pb.Value, docName, prefix string, bson bool) error {
	for k, v := range fields {
		if k == "" {
			return errorf(errs.InvalidArgument, "Document %s has an empty field name.", docName)
		}
		if reservedName(k) {
			return errorf(errs.InvalidArgument, "Field name %q is reserved.", k)
		}
		if len(k) > maxFieldNameBytes {
			return errorf(errs.InvalidArgument, "Field name %q… of document %s is longer than %s bytes.", truncateUTF8(k, 64), docName, commas(maxFieldNameBytes))
		}
		if err := validateValue(v, docName, prefix+k, bson); err != nil {
			return err
		}
	}
	return nil
}

// validateValue checks one value of a document (field path path) and the
// values inside it.
func validateValue(v *pb.Value, docName, path string, bson bool) error {
	switch x := v.GetValueType().(type) {
	case *pb.Value_GeoPointValue:
		lat, lng := x.GeoPointValue.GetLatitude(), x.GeoPointValue.GetLongitude()
		if !(lat >= -90 && lat <= 90) || !(lng >= -180 && lng <= 180) {
			return errorf(errs.InvalidArgument, "Field %s of document %s is an invalid geo point: latitude must be in [-90, 90] and longitude in [-180, 180], not (%v, %v).", path, docName, lat, lng)
		}
	case *pb.Value_ReferenceValue:
		if _, err := ParseDocumentName(x.ReferenceValue); err != nil {
			return errorf(errs.InvalidArgument, "Field %s of document %s is an invalid reference: %v", path, docName, err)
		}
	case *pb.Value_ArrayValue:
		for i, e := range x.ArrayValue.GetValues() {
			if err := validateValue(e, docName, fmt.Sprintf("%s[%d]", path, i), bson); err != nil {
				return err
			}
		}
	case *pb.Value_MapValue:
		if IsVector(v) {
			return validateVector(v, path)
		}
		if bson && isBSON(v) {
			return validateBSON(v, path)
		}
		return validateFieldsAt(x.MapValue.GetFields(), docName, path+".", bson)
	}
	return nil
}

// truncateUTF8 cuts s to at most n bytes, at a character boundary.
func truncateUTF8(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// fieldCount counts the fields of a document's values, those of nested
// maps (in arrays too) included, as production's 20,000-field limit does;
// a vector is one field.
func fieldCount(fields map[string]*pb.Value) int {
	n := len(fields)
	for _, v := range fields {
		n += valueFieldCount(v)
	}
	return n
}

func valueFieldCount(v *pb.Value) int {
	switch x := v.GetValueType().(type) {
	case *pb.Value_MapValue:
		if IsVector(v) {
			return 0
		}
		return fieldCount(x.MapValue.GetFields())
	case *pb.Value_ArrayValue:
		n := 0
		for _, e := range x.ArrayValue.GetValues() {
			n += valueFieldCount(e)
		}
		return n
	}
	return 0
}

// maxFieldValueBytes is production's limit on one field's value, 1 MiB -
// 89 bytes: a longer value is refused even in a document under 1 MiB.
const maxFieldValueBytes = 1048487

// checkLimits checks the document a write leaves (transforms applied):
// nesting depth, arrays directly inside arrays, each top-level field's
// value size, the document's size and its number of fields, in that order.
func checkLimits(doc *pb.Document) error {
	for _, v := range doc.Fields {
		if depth(v) > MaxDepth {
			return errorf(errs.InvalidArgument, "Document %s has too many nested maps or arrays (the maximum depth is %d).", doc.Name, MaxDepth)
		}
	}
	names := make([]string, 0, len(doc.Fields))
	for k := range doc.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if nested, underArray := nestedArray(doc.Fields[k], false, false); nested {
			// Production names the top-level property, or "array" when the
			// offending array sits in a map inside an array.
			property := k
			if underArray {
				property = "array"
			}
			return errorf(errs.InvalidArgument, "Property %s contains an invalid nested entity.", property)
		}
	}
	size := documentNameSize(doc.Name) + 32
	for _, k := range names {
		v := doc.Fields[k]
		vs := ValueSize(v)
		if fieldValueBytes(v, vs) > maxFieldValueBytes {
			return errorf(errs.InvalidArgument, "The value of property %q is longer than %d bytes.", k, maxFieldValueBytes)
		}
		size += len(k) + 1 + vs
	}
	if size > MaxDocumentBytes {
		return errorf(errs.InvalidArgument, "Document '%s' cannot be written because its size (%s bytes) exceeds the maximum allowed size of 1,048,576 bytes.", doc.Name, commas(size))
	}
	if n := fieldCount(doc.Fields); n > maxFields {
		return errorf(errs.InvalidArgument, "Document '%s' cannot be written because it has %s fields, more than the maximum of %s.", doc.Name, commas(n), commas(maxFields))
	}
	return nil
}

// nestedArray reports whether v holds an array directly inside an array
// (inArray: v is an array's element), and whether the outer array of the
// first one found is itself inside an array (underArray: an array lies on
// the way to v).
func nestedArray(v *pb.Value, inArray, underArray bool) (found, outerUnderArray bool) {
	switch x := v.GetValueType().(type) {
	case *pb.Value_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			if _, ok := e.GetValueType().(*pb.Value_ArrayValue); ok {
				return true, underArray
			}
		}
		for _, e := range x.ArrayValue.GetValues() {
			if found, under := nestedArray(e, true, true); found {
				return true, under
			}
		}
	case *pb.Value_MapValue:
		for _, e := range x.MapValue.GetFields() {
			if found, under := nestedArray(e, false, underArray || inArray); found {
				return true, under
			}
		}
	}
	return false, false
}

// fieldValueBytes is the size production's field-value limit measures,
// from v's storage size: a string's length (its storage size counts one
// byte more), and any other value's storage size.
func fieldValueBytes(v *pb.Value, storageSize int) int {
	if _, ok := v.GetValueType().(*pb.Value_StringValue); ok {
		return storageSize - 1
	}
	return storageSize
}

// documentNameSize is a document name's storage size as production counts
// it: each collection and document id in the path after /documents/, plus
// one byte each, plus 16.
func documentNameSize(name string) int {
	rel := name
	if i := strings.Index(name, "/documents/"); i >= 0 {
		rel = name[i+len("/documents/"):]
	}
	n := 16
	for _, seg := range strings.Split(rel, "/") {
		n += len(seg) + 1
	}
	return n
}

func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func cloneFields(f map[string]*pb.Value) map[string]*pb.Value {
	out := make(map[string]*pb.Value, len(f))
	for k, v := range f {
		out[k] = proto.Clone(v).(*pb.Value)
	}
	return out
}

package firestore

import (
	"bytes"
	"fmt"
	"iter"
	"log/slog"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// storedDoc is a document as a database holds it: the bytes it is stored as
// (proto.Marshal's, read from the data folder or encoded when written),
// decoded on each read. Opening a large folder costs a read and a map insert
// per document rather than a decode; a written document costs its encoding
// (a small document's decoded maps and values take several times as much);
// and the bytes (no pointers) cost the collector nothing to scan. A document
// that does not encode (which validation rules out) is kept decoded.
type storedDoc struct {
	doc     *pb.Document
	encoded []byte
}

// docTable maps a document's path under documents/ to the document.
type docTable map[string]storedDoc

// get returns the document at path, or nil.
func (t docTable) get(path string) *pb.Document {
	s, ok := t[path]
	if !ok {
		return nil
	}
	return s.decode(path)
}

// decode returns the document, decoding it from its stored bytes when needed.
func (s storedDoc) decode(path string) *pb.Document {
	if s.doc != nil || s.encoded == nil {
		return s.doc
	}
	doc := &pb.Document{}
	if err := proto.Unmarshal(s.encoded, doc); err != nil {
		// The bytes passed their frame's checksum and were written by
		// proto.Marshal, so this is a bug rather than a damaged disk.
		slog.Error("firestore: a stored document does not decode", "path", path, "err", err)
		return nil
	}
	return doc
}

// decodeFields is decode keeping only the top-level fields in keep (all of
// them when keep is nil): a query whose results are projected reads no more.
func (s storedDoc) decodeFields(path string, keep map[string]bool) *pb.Document {
	if keep == nil || s.doc != nil || s.encoded == nil {
		return s.decode(path)
	}
	doc := &pb.Document{Fields: map[string]*pb.Value{}}
	var rest []byte // every field but the fields map, as encoded
	msg := s.encoded
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return s.decode(path)
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return s.decode(path)
		}
		if num != docFieldsField || typ != protowire.BytesType {
			rest = append(rest, msg[:n+m]...)
			msg = msg[n+m:]
			continue
		}
		entry, _ := protowire.ConsumeBytes(msg[n : n+m])
		msg = msg[n+m:]
		k, v, err := mapKeyValue(entry)
		if err != nil {
			return s.decode(path)
		}
		if !keep[string(k)] {
			continue
		}
		val := &pb.Value{}
		if err := proto.Unmarshal(v, val); err != nil {
			return s.decode(path)
		}
		doc.Fields[string(k)] = val
	}
	if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(rest, doc); err != nil {
		return s.decode(path)
	}
	return doc
}

// field returns the value at path in the document, reading an encoded one
// without decoding the rest of it (what building an index over a large data
// folder needs).
func (s storedDoc) field(path FieldPath) (*pb.Value, bool) {
	if s.doc != nil || s.encoded == nil {
		return GetField(s.doc.GetFields(), path)
	}
	raw, ok := mapEntry(s.encoded, docFieldsField, path[0])
	for _, seg := range path[1:] {
		if !ok {
			return nil, false
		}
		var fields []byte
		fields, ok = mapValueOf(raw)
		if ok {
			raw, ok = mapEntry(fields, mapValueFieldsField, seg)
		}
	}
	if !ok {
		return nil, false
	}
	v := &pb.Value{}
	if err := proto.Unmarshal(raw, v); err != nil {
		slog.Error("firestore: a stored document does not decode", "field", path.String(), "err", err)
		return nil, false
	}
	return v, true
}

// mapEntry returns the encoded value of key in the map field num of an
// encoded message. The bytes are proto.Marshal's, so each key appears once.
func mapEntry(msg []byte, num protowire.Number, key string) (value []byte, found bool) {
	_ = eachField(msg, func(n protowire.Number, typ protowire.Type, entry []byte) error {
		if n != num || typ != protowire.BytesType || found {
			return nil
		}
		k, v, err := mapKeyValue(entry)
		if err != nil {
			return err
		}
		if string(k) == key {
			value, found = v, true
		}
		return nil
	})
	return value, found
}

// mapKeyValue splits one encoded map entry into its key and value bytes.
func mapKeyValue(entry []byte) (k, v []byte, err error) {
	err = eachField(entry, func(n protowire.Number, typ protowire.Type, b []byte) error {
		switch {
		case n == mapKeyField && typ == protowire.BytesType:
			k = b
		case n == mapValueField && typ == protowire.BytesType:
			v = b
		}
		return nil
	})
	return k, v, err
}

// mapValueOf returns the encoded fields of a Value holding a map.
func mapValueOf(value []byte) (fields []byte, isMap bool) {
	_ = eachField(value, func(n protowire.Number, typ protowire.Type, b []byte) error {
		fields, isMap = b, n == valueMapField && typ == protowire.BytesType
		return nil
	})
	return fields, isMap
}

// set stores doc at path, encoded, and returns the encoding (nil when doc
// did not encode and is kept decoded).
func (t docTable) set(path string, doc *pb.Document) []byte {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(doc)
	if err != nil {
		t[path] = storedDoc{doc: doc}
		return nil
	}
	t[path] = storedDoc{encoded: raw}
	return raw
}

// all yields every path and decoded document, in no particular order.
func (t docTable) all() iter.Seq2[string, *pb.Document] {
	return func(yield func(string, *pb.Document) bool) {
		for path, s := range t {
			if doc := s.decode(path); doc != nil && !yield(path, doc) {
				return
			}
		}
	}
}

// updateTime returns the document's update time, reading only that field
// of an encoded one.
func (s storedDoc) updateTime() time.Time {
	if s.encoded == nil {
		return s.doc.GetUpdateTime().AsTime()
	}
	var t time.Time
	_ = eachField(s.encoded, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if num == docUpdateTimeField && typ == protowire.BytesType {
			t, _ = parseTimestamp(v) // the bytes are proto.Marshal's
		}
		return nil
	})
	return t
}

// bytes returns the document's stored bytes, encoding a decoded document
// deterministically.
func (s storedDoc) bytes() ([]byte, error) {
	if s.doc == nil {
		return s.encoded, nil
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(s.doc)
}

// encodedDoc is a document read from the data folder, still encoded, with
// the header fields that opening the folder needs.
type encodedDoc struct {
	path       string // under documents/
	updateTime time.Time
	raw        []byte
}

// Field numbers of google.firestore.v1.Document, Value and MapValue, of a
// map entry, and of google.protobuf.Timestamp.
const (
	docNameField        = 1
	docFieldsField      = 2
	docUpdateTimeField  = 4
	valueMapField       = 6
	mapValueFieldsField = 1
	mapKeyField         = 1
	mapValueField       = 2
	tsSecondsField      = 1
	tsNanosField        = 2
)

var documentsInfix = []byte("/documents/")

// parseEncodedDoc reads a stored document's name and update time without
// decoding its fields; raw is kept, not copied.
func parseEncodedDoc(raw []byte) (encodedDoc, error) {
	doc := encodedDoc{raw: raw}
	var name []byte
	err := eachField(raw, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == docNameField && typ == protowire.BytesType:
			name = v
		case num == docUpdateTimeField && typ == protowire.BytesType:
			t, err := parseTimestamp(v)
			doc.updateTime = t
			return err
		}
		return nil
	})
	if err != nil {
		return doc, err
	}
	i := bytes.Index(name, documentsInfix)
	if i < 0 || i+len(documentsInfix) == len(name) {
		return doc, fmt.Errorf("stored document has a bad name %q", name)
	}
	doc.path = string(name[i+len(documentsInfix):])
	return doc, nil
}

// parseTimestamp decodes an encoded google.protobuf.Timestamp.
func parseTimestamp(raw []byte) (time.Time, error) {
	var secs, nanos int64
	err := eachField(raw, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.VarintType {
			return nil
		}
		x, _ := protowire.ConsumeVarint(v)
		switch num {
		case tsSecondsField:
			secs = int64(x)
		case tsNanosField:
			nanos = int64(int32(x))
		}
		return nil
	})
	return time.Unix(secs, nanos).UTC(), err
}

// eachField calls f with every top-level field of an encoded message: its
// number, wire type and value bytes (a varint's own bytes, a length-delimited
// field's contents).
func eachField(msg []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		m := protowire.ConsumeFieldValue(num, typ, msg)
		if m < 0 {
			return protowire.ParseError(m)
		}
		v := msg[:m]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		if err := f(num, typ, v); err != nil {
			return err
		}
		msg = msg[m:]
	}
	return nil
}

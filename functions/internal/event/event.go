// Package event decodes the Firestore document events Eventarc delivers
// (google.cloud.firestore.document.v1.*, JSON DocumentEventData) into
// documents the functions can read.
package event

import (
	"encoding/json"
	"fmt"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"google.golang.org/protobuf/encoding/protojson"
)

// Document is one side of a change: its path under documents/ and fields
// as plain Go values. A nil *Document means the document did not exist.
type Document struct {
	Path   string
	Fields map[string]any
}

// String returns a string field, "" when absent.
func (d *Document) String(key string) string {
	if d == nil {
		return ""
	}
	s, _ := d.Fields[key].(string)
	return s
}

// Bool returns a boolean field, false when absent.
func (d *Document) Bool(key string) bool {
	if d == nil {
		return false
	}
	b, _ := d.Fields[key].(bool)
	return b
}

// Int returns an integer field, 0 when absent or not an integer.
func (d *Document) Int(key string) int64 {
	if d == nil {
		return 0
	}
	n, _ := d.Fields[key].(int64)
	return n
}

// Change is a decoded document event.
type Change struct {
	ID       string
	Project  string
	Database string
	Old, New *Document
}

// Decode reads a CloudEvent carrying JSON DocumentEventData.
func Decode(e cloudevent.Event) (*Change, error) {
	var raw struct {
		Value    json.RawMessage `json:"value"`
		OldValue json.RawMessage `json:"oldValue"`
	}
	if err := json.Unmarshal(e.Data(), &raw); err != nil {
		return nil, fmt.Errorf("event %s: data is not JSON DocumentEventData: %w", e.ID(), err)
	}
	c := &Change{ID: e.ID()}
	if v, ok := e.Extensions()["project"].(string); ok {
		c.Project = v
	}
	if v, ok := e.Extensions()["database"].(string); ok {
		c.Database = v
	}
	var err error
	if c.New, err = decodeDoc(raw.Value); err != nil {
		return nil, err
	}
	if c.Old, err = decodeDoc(raw.OldValue); err != nil {
		return nil, err
	}
	return c, nil
}

func decodeDoc(raw json.RawMessage) (*Document, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	doc := &pb.Document{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, doc); err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	_, path, _ := strings.Cut(doc.Name, "/documents/")
	fields := map[string]any{}
	for k, v := range doc.Fields {
		fields[k] = value(v)
	}
	return &Document{Path: path, Fields: fields}, nil
}

func value(v *pb.Value) any {
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		return x.StringValue
	case *pb.Value_BooleanValue:
		return x.BooleanValue
	case *pb.Value_IntegerValue:
		return x.IntegerValue
	case *pb.Value_DoubleValue:
		return x.DoubleValue
	case *pb.Value_TimestampValue:
		return x.TimestampValue.AsTime()
	case *pb.Value_MapValue:
		m := map[string]any{}
		for k, e := range x.MapValue.GetFields() {
			m[k] = value(e)
		}
		return m
	case *pb.Value_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

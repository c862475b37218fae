package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/loupe-dev/loupe/internal/storage"
)

// incoming is writable metadata as clients send it (an upload's metadata, a
// PATCH, a copy's or rewrite's body): each field absent, null (unset it) or
// a value. Unknown fields are ignored, as GCS ignores them.
type incoming struct {
	Name               string `json:"name"`
	ContentType        field  `json:"contentType"`
	CacheControl       field  `json:"cacheControl"`
	ContentDisposition field  `json:"contentDisposition"`
	ContentEncoding    field  `json:"contentEncoding"`
	ContentLanguage    field  `json:"contentLanguage"`
	Metadata           custom `json:"metadata"`
}

// field is one string field of incoming metadata.
type field struct {
	set, null bool
	value     string
}

// UnmarshalJSON implements json.Unmarshaler (null too).
func (f *field) UnmarshalJSON(b []byte) error {
	f.set = true
	if string(b) == "null" {
		f.null = true
		return nil
	}
	return json.Unmarshal(b, &f.value)
}

// custom is the custom metadata map as sent: null (clear it), or keys each
// null (remove it) or a value. A value that is not a string is kept as its
// JSON text (true as "true", -1 as "-1"), as GCS keeps it.
type custom struct {
	set, null bool
	values    map[string]*string
}

// UnmarshalJSON implements json.Unmarshaler (null too).
func (c *custom) UnmarshalJSON(b []byte) error {
	c.set = true
	if string(b) == "null" {
		c.null = true
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	c.values = make(map[string]*string, len(raw))
	for k, v := range raw {
		switch {
		case string(v) == "null":
			c.values[k] = nil
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			c.values[k] = &s
		default:
			var compact bytes.Buffer
			if err := json.Compact(&compact, v); err != nil {
				return err
			}
			s := compact.String()
			c.values[k] = &s
		}
	}
	return nil
}

// decodeIncoming reads a metadata body of at most 1 MiB; an empty body is
// no metadata.
func decodeIncoming(r io.Reader) (incoming, error) {
	var in incoming
	err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&in)
	if err != nil && !errors.Is(err, io.EOF) {
		return in, fmt.Errorf("invalid metadata: %w", err)
	}
	return in, nil
}

// fields pairs each incoming field with the object's.
func (in *incoming) fields(o *storage.Object) []struct {
	f   field
	dst *string
} {
	return []struct {
		f   field
		dst *string
	}{{in.ContentType, &o.ContentType}, {in.CacheControl, &o.CacheControl}, {in.ContentDisposition, &o.ContentDisposition},
		{in.ContentEncoding, &o.ContentEncoding}, {in.ContentLanguage, &o.ContentLanguage}}
}

// apply gives an object the metadata sent, as an upload and a PATCH do:
// fields sent replace the object's (null unsets them), custom keys sent are
// set or, when null, removed, and metadata null removes them all.
func (in *incoming) apply(o *storage.Object) {
	for _, p := range in.fields(o) {
		if p.f.set {
			*p.dst = p.f.value
		}
	}
	if !in.Metadata.set {
		return
	}
	if in.Metadata.null {
		o.Metadata = nil
		return
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	for k, v := range in.Metadata.values {
		if v == nil {
			delete(o.Metadata, k)
		} else {
			o.Metadata[k] = *v
		}
	}
	if len(o.Metadata) == 0 {
		o.Metadata = nil
	}
}

// copy gives a copy the metadata a copy or rewrite sends: fields sent
// replace the source's, and custom metadata sent replaces the source's
// whole (a null value kept as "", as GCS does).
func (in *incoming) copy(o *storage.Object) {
	for _, p := range in.fields(o) {
		if p.f.set {
			*p.dst = p.f.value
		}
	}
	if !in.Metadata.set {
		return
	}
	o.Metadata = nil
	for k, v := range in.Metadata.values {
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		if v == nil {
			o.Metadata[k] = ""
		} else {
			o.Metadata[k] = *v
		}
	}
}

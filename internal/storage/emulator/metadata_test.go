package emulator

import (
	"encoding/base64"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/storage"
)

func TestIncoming_Apply(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       map[string]string
		wantType   string
	}{
		{"absent fields keep the object's", `{}`, map[string]string{"a": "1", "b": "2"}, "text/plain"},
		{"null clears a field", `{"contentType":null}`, map[string]string{"a": "1", "b": "2"}, ""},
		{"a key set to null is removed", `{"metadata":{"a":null,"c":"3"}}`, map[string]string{"b": "2", "c": "3"}, "text/plain"},
		{"non-string values are kept as their JSON text", `{"metadata":{"t":true,"n":-1.50,"o":{"x": [1, 2]}}}`,
			map[string]string{"a": "1", "b": "2", "t": "true", "n": "-1.50", "o": `{"x":[1,2]}`}, "text/plain"},
		{"metadata null removes every key", `{"metadata":null}`, nil, "text/plain"},
		{"removing the last keys leaves none", `{"metadata":{"a":null,"b":null}}`, nil, "text/plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := decodeIncoming(strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			o := storage.Object{ContentType: "text/plain", Metadata: map[string]string{"a": "1", "b": "2"}}
			in.apply(&o)
			if !maps.Equal(o.Metadata, tc.want) || (o.Metadata == nil) != (tc.want == nil) || o.ContentType != tc.wantType {
				t.Errorf("after %s: metadata %v, type %q; want %v, %q", tc.body, o.Metadata, o.ContentType, tc.want, tc.wantType)
			}
		})
	}
	in, _ := decodeIncoming(strings.NewReader(`{"metadata":{"foo":"bar","gone":null},"cacheControl":"no-cache"}`))
	o := storage.Object{Metadata: map[string]string{"a": "1"}}
	in.copy(&o)
	if !maps.Equal(o.Metadata, map[string]string{"foo": "bar", "gone": ""}) || o.CacheControl != "no-cache" {
		t.Errorf("a copy's metadata: %v %q, want the request's whole, null as \"\"", o.Metadata, o.CacheControl)
	}
}

// FuzzDecodeIncoming checks that any metadata body either is refused or
// applies to an object leaving no empty custom map, and that a copy takes
// the custom keys sent, every one.
func FuzzDecodeIncoming(f *testing.F) {
	for _, s := range []string{`{}`, `{"metadata":null}`, `{"metadata":{"a":null,"b":1,"c":"x"}}`, `{"contentType":9}`, `[]`, `{"metadata":{"a":{"b":[true,null]}}}`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		in, err := decodeIncoming(strings.NewReader(body))
		if err != nil {
			return
		}
		o := storage.Object{Metadata: map[string]string{"k": "v"}}
		in.apply(&o)
		if o.Metadata != nil && len(o.Metadata) == 0 {
			t.Fatalf("an empty custom map after %q", body)
		}
		c := storage.Object{Metadata: map[string]string{"k": "v"}}
		in.copy(&c)
		if in.Metadata.set && len(c.Metadata) != len(in.Metadata.values) {
			t.Fatalf("a copy after %q has %v", body, c.Metadata)
		}
	})
}

func TestCheckPolicy(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	policy := func(doc string) string { return base64.StdEncoding.EncodeToString([]byte(doc)) }
	fields := map[string]string{"key": "uploads/a.txt", "content-type": "text/plain"}
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"met", `{"expiration":"2030-01-02T04:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key","uploads/"],["eq","$Content-Type","text/plain"],["content-length-range",0,10]]}`, true},
		{"expired", `{"expiration":"2030-01-02T03:00:00Z","conditions":[]}`, false},
		{"another key", `{"expiration":"2030-01-02T04:00:00Z","conditions":[{"key":"uploads/b.txt"}]}`, false},
		{"another bucket", `{"expiration":"2030-01-02T04:00:00Z","conditions":[{"bucket":"c"}]}`, false},
		{"a prefix not met", `{"expiration":"2030-01-02T04:00:00Z","conditions":[["starts-with","$key","other/"]]}`, false},
		{"an unknown condition", `{"expiration":"2030-01-02T04:00:00Z","conditions":[["frobnicate","$key","x"]]}`, false},
		{"not JSON", `expiration`, false},
	} {
		if err := checkPolicy(policy(tc.doc), "b", fields, now); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// FuzzCheckPolicy checks that no policy document makes checkPolicy panic,
// and that an exact condition on the key admits only that key.
func FuzzCheckPolicy(f *testing.F) {
	f.Add(`{"expiration":"2099-01-01T00:00:00Z","conditions":[{"key":"a"}]}`, "a")
	f.Add(`{"expiration":"2099-01-01T00:00:00Z","conditions":[["eq","$key","a"],["starts-with","$key",""]]}`, "b")
	f.Add(`{"conditions":[[1,2,3]]}`, "")
	f.Fuzz(func(t *testing.T, doc, key string) {
		err := checkPolicy(base64.StdEncoding.EncodeToString([]byte(doc)), "b", map[string]string{"key": key}, time.Now())
		if err == nil && strings.Contains(doc, `{"key":"zzz"}`) && key != "zzz" {
			t.Fatalf("key %q admitted by %s", key, doc)
		}
	})
}

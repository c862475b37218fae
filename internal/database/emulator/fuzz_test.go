package emulator

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
)

// FuzzWireMessage feeds a session arbitrary frames: it must answer or drop
// them, never panic, and the namespace's data must stay a valid tree.
func FuzzWireMessage(f *testing.F) {
	for _, seed := range []string{
		`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":{"x":1}}}}`,
		`{"t":"d","d":{"r":2,"a":"m","b":{"p":"/a","d":{"y/z":2}}}}`,
		`{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","q":{"sp":1,"sn":"k","ep":"z","l":2,"vf":"r","i":"x/y"},"t":1,"h":""}}}`,
		`{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a","d":5,"h":"abc"}}}`,
		`{"t":"d","d":{"r":5,"a":"o","b":{"p":"/a","d":null}}}`,
		`{"t":"d","d":{"r":6,"a":"auth","b":{"cred":"x.y.z"}}}`,
		`{"t":"c","d":{"t":"p","d":{}}}`,
		`2`, `0`, `{"t":"d","d":{"r":"x"}}`, `{"t":"d","d":{"r":7,"a":"g","b":{"p":"$"}}}`,
	} {
		f.Add(seed)
	}
	e, err := database.Open(database.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer e.Close()
	s := &Service{env: server.Env{ProjectID: "fuzz", Credentials: identity.Local}, Engine: e, conns: map[*conn]struct{}{}}
	f.Fuzz(func(t *testing.T, frame string) {
		c := newConn(s, "fuzz")
		_ = c.receive(frame)
		c.shutdown()
		if _, err := database.ParseJSON(e.Root("fuzz").ExportJSON(), nil, nil); err != nil {
			t.Fatalf("after %q the tree does not read back: %v", frame, err)
		}
	})
}

// FuzzRESTQuery checks that query parameters either fail as a bad request
// or make a query that runs.
func FuzzRESTQuery(f *testing.F) {
	for _, seed := range [][3]string{{`"$key"`, `"a"`, `"z"`}, {`"h"`, `1,"k"`, `true`}, {`"$value"`, `null`, `{"a":1}`}, {`"a/b"`, `"x",`, `1e999`}} {
		f.Add(seed[0], seed[1], seed[2])
	}
	data, _ := database.ParseJSON([]byte(`{"a":{"h":1},"b":{"h":"x"},"c":3,"1":{"h":true}}`), nil, nil)
	f.Fuzz(func(t *testing.T, orderBy, start, end string) {
		q, _, err := restQuery(map[string][]string{"orderBy": {orderBy}, "startAt": {start}, "endBefore": {end}, "limitToLast": {"2"}})
		if err != nil {
			return
		}
		_ = q.Apply(data)
	})
}

// FuzzLongPollSegments feeds a long-polling session arbitrary segments: it
// must take, hold or refuse them, never panic.
func FuzzLongPollSegments(f *testing.F) {
	whole := base64.URLEncoding.EncodeToString([]byte(`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}}}`))
	f.Add("0", "1", strings.ReplaceAll(whole, "=", "."), "1", "1", "")
	f.Add("0", "2", whole[:10], "1", "2", whole[10:])
	f.Add("1", "1", "eyJ0IjoiYyJ9", "0", "9999999", "%%")
	e, err := database.Open(database.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer e.Close()
	s := &Service{env: server.Env{ProjectID: "fuzz", Credentials: identity.Local}, Engine: e, conns: map[*conn]struct{}{}}
	f.Fuzz(func(t *testing.T, seg0, ts0, d0, seg1, ts1, d1 string) {
		sess := &lpSession{c: newConn(s, "fuzz"), segs: map[int]lpSegment{}}
		defer sess.c.shutdown()
		_ = sess.receive(map[string][]string{"seg0": {seg0}, "ts0": {ts0}, "d0": {d0}, "seg1": {seg1}, "ts1": {ts1}, "d1": {d1}})
	})
}

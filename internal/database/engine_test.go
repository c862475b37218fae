package database

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/wal"
)

func mustJSON(t testing.TB, s string) *Node {
	t.Helper()
	n, err := ParseJSON([]byte(s), nil, nil)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return n
}

// value decodes JSON as the adapters do.
func value(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func open(t testing.TB, dir string) *Engine {
	t.Helper()
	e, err := Open(Options{Dir: dir, Now: func() time.Time { return time.UnixMilli(1700000000000) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func set(t testing.TB, e *Engine, path, data string) {
	t.Helper()
	if _, err := e.Write(context.Background(), Write{NS: "ns", Path: mustPath(t, path), Op: OpSet, Value: value(t, data), Caller: identity.Owner}); err != nil {
		t.Fatalf("set %s: %v", path, err)
	}
}

func mustPath(t testing.TB, s string) Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func get(t testing.TB, e *Engine, path string) string {
	t.Helper()
	n, err := e.Get(context.Background(), "ns", mustPath(t, path), Query{}, identity.Owner)
	if err != nil {
		t.Fatal(err)
	}
	return string(n.ExportJSON())
}

func TestCompareKeys_IntegersFirstThenStrings(t *testing.T) {
	keys := []string{"b", "10", "a", "-5", "2", "01", "1", "2147483648", "-2147483648", "A", "0"}
	slices.SortFunc(keys, CompareKeys)
	want := []string{"-2147483648", "-5", "0", "1", "01", "2", "10", "2147483648", "A", "a", "b"}
	if !slices.Equal(keys, want) {
		t.Fatalf("got %v, want %v", keys, want)
	}
}

func TestCompare_ValuesInTypeOrder(t *testing.T) {
	vals := []string{`"b"`, `{"x":1}`, `true`, `2`, `null`, `false`, `"a"`, `-1.5`}
	nodes := make([]*Node, len(vals))
	for i, v := range vals {
		nodes[i] = mustJSON(t, v)
	}
	slices.SortStableFunc(nodes, Compare)
	var got []string
	for _, n := range nodes {
		got = append(got, string(n.JSON()))
	}
	want := []string{"null", "false", "true", "-1.5", "2", `"a"`, `"b"`, `{"x":1}`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestNode_JSONShapes(t *testing.T) {
	for _, tc := range []struct{ in, json, export string }{
		{`{"0":"a","1":"b","3":"d"}`, `["a","b",null,"d"]`, `{"0":"a","1":"b","3":"d"}`},
		{`{"0":"a","5":"b"}`, `{"0":"a","5":"b"}`, `{"0":"a","5":"b"}`},
		{`{"a":{".value":1,".priority":"p"}}`, `{"a":1}`, `{"a":{".value":1,".priority":"p"}}`},
		{`{"a":null,"b":{}}`, `null`, `null`},
		{`[1,null,3]`, `[1,null,3]`, `{"0":1,"2":3}`},
		{`1e21`, `1e+21`, `1e+21`},
		{`0.0000001`, `1e-7`, `1e-7`},
		{`0.000001`, `0.000001`, `0.000001`},
		{`"<&>\u2028"`, "\"<&>\u2028\"", "\"<&>\u2028\""},
	} {
		n := mustJSON(t, tc.in)
		if got := string(n.JSON()); got != tc.json {
			t.Errorf("%s JSON = %s, want %s", tc.in, got, tc.json)
		}
		if got := string(n.ExportJSON()); got != tc.export {
			t.Errorf("%s ExportJSON = %s, want %s", tc.in, got, tc.export)
		}
	}
}

func TestParseJSON_RefusesWhatProductionRefuses(t *testing.T) {
	for _, in := range []string{`{"a.b":1}`, `{"a/b":1}`, `{"$x":1}`, `{"":1}`, `{".value":1,"b":2}`, `{".priority":true,"a":1}`, `{"a":1} x`, `{`, `{".sv":"nope"}`} {
		if _, err := ParseJSON([]byte(in), nil, &ServerValues{}); errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("%s: err = %v, want InvalidArgument", in, err)
		}
	}
}

func TestNode_HashAsTheSDKsCompute(t *testing.T) {
	// Leaves hash their type and value (numbers as IEEE 754 hex).
	for _, tc := range []struct{ in, text string }{
		{`1`, "number:3ff0000000000000"},
		{`"a"`, "string:a"},
		{`true`, "boolean:true"},
	} {
		if got := hashText(mustJSON(t, tc.in)); got != tc.text {
			t.Errorf("hashText(%s) = %s, want %s", tc.in, got, tc.text)
		}
	}
	if mustJSON(t, `null`).Hash() != "" {
		t.Error("the empty node's hash is not empty")
	}
	// Children hash in priority order, so equal data hashes equal whatever
	// order it was built in.
	if a, b := mustJSON(t, `{"x":1,"y":{"z":"q"}}`), mustJSON(t, `{"y":{"z":"q"},"x":1}`); a.Hash() != b.Hash() || a.Hash() == "" {
		t.Errorf("hashes differ: %s %s", a.Hash(), b.Hash())
	}
	if mustJSON(t, `{"x":1}`).Hash() == mustJSON(t, `{"x":{".value":1,".priority":1}}`).Hash() {
		t.Error("a priority does not change the hash")
	}
}

func TestQuery_OrdersRangesAndLimits(t *testing.T) {
	data := mustJSON(t, `{
		"a": {"h": 3, ".priority": 2},
		"b": {"h": 1},
		"c": {"h": 3},
		"d": {"x": 1, ".priority": "z"},
		"e": {"h": "tall", ".priority": 1},
		"1": {"h": 2}
	}`)
	byChild := Index{Kind: ByChild, Path: Path{"h"}}
	num := func(f float64) *Node { return NewNumber(f) }
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"by child: missing first, then numbers, then strings", Query{Index: byChild, HasLimit: true, Limit: 10}, "d,b,1,a,c,e"},
		{"startAt 2", Query{Index: byChild, Start: &Bound{Value: num(2), Inclusive: true}}, "1,a,c,e"},
		{"startAt 3 with key c", Query{Index: byChild, Start: &Bound{Value: num(3), Key: "c", HasKey: true, Inclusive: true}}, "c,e"},
		{"startAfter 2", Query{Index: byChild, Start: &Bound{Value: num(2), Key: maxName, HasKey: true}}, "a,c,e"},
		{"endBefore 3", Query{Index: byChild, End: &Bound{Value: num(3), Key: minName, HasKey: true}}, "d,b,1"},
		{"equalTo 3", Query{Index: byChild, Start: &Bound{Value: num(3), Inclusive: true}, End: &Bound{Value: num(3), Inclusive: true}}, "a,c"},
		{"limitToLast 2", Query{Index: byChild, HasLimit: true, Limit: 2, FromRight: true}, "c,e"},
		{"by key from b, first 2", Query{Index: Index{Kind: ByKey}, Start: &Bound{Value: NewString("b"), Inclusive: true}, HasLimit: true, Limit: 2}, "b,c"},
		{"by key after b", Query{Index: Index{Kind: ByKey}, Start: &Bound{Value: NewString("b")}}, "c,d,e"},
		{"by priority", Query{HasLimit: true, Limit: 10}, "1,b,c,e,a,d"},
		{"by priority from 2", Query{Start: &Bound{Value: num(2), Inclusive: true}}, "a,d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range tc.q.Select(data) {
				got = append(got, c.key)
			}
			if strings.Join(got, ",") != tc.want {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
	if got := (Query{Index: byChild, HasLimit: true, Limit: 1}).Apply(NewNumber(1)); !got.IsEmpty() {
		t.Errorf("a filtered query of a leaf = %s, want null", got.JSON())
	}
}

func TestEngine_WritesAndServerValues(t *testing.T) {
	e := open(t, "")
	set(t, e, "/a", `{"n": 1, "s": "x"}`)
	ctx := context.Background()
	if _, err := e.Write(ctx, Write{NS: "ns", Path: Path{"a"}, Op: OpUpdate, Caller: identity.Owner,
		Value: value(t, `{"n": {".sv": {"increment": 4}}, "m": {".sv": {"increment": 2}}, "t": {".sv": "timestamp"}, "deep/x": true}`)}); err != nil {
		t.Fatal(err)
	}
	if got, want := get(t, e, "/a"), `{"deep":{"x":true},"m":2,"n":5,"s":"x","t":1700000000000}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	set(t, e, "/a/.priority", `7`)
	set(t, e, "/a/s", `null`)
	if got, want := get(t, e, "/a"), `{"deep":{"x":true},"m":2,"n":5,"t":1700000000000,".priority":7}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	set(t, e, "/a/deep/x", `null`)
	if got := get(t, e, "/a/deep"); got != "null" {
		t.Fatalf("an emptied object stays: %s", got)
	}
	_, err := e.Write(ctx, Write{NS: "ns", Path: Path{"a"}, Op: OpUpdate, Caller: identity.Owner, Value: value(t, `{"x/y": 1, "x": 2}`)})
	if errs.KindOf(err) != errs.InvalidArgument {
		t.Fatalf("overlapping update paths: %v", err)
	}
}

func TestEngine_ConditionalWrite(t *testing.T) {
	e := open(t, "")
	set(t, e, "/c", `1`)
	stale := ""
	_, err := e.Write(context.Background(), Write{NS: "ns", Path: Path{"c"}, Value: 2.0, IfHash: &stale, Caller: identity.Owner})
	var se *StaleError
	if !errors.As(err, &se) || se.Hash != e.Root("ns").Child("c").Hash() {
		t.Fatalf("write over a changed value: %v", err)
	}
	h := e.Root("ns").Child("c").Hash()
	if _, err := e.Write(context.Background(), Write{NS: "ns", Path: Path{"c"}, Value: 2.0, IfHash: &h, Caller: identity.Owner}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, e, "/c"); got != "2" {
		t.Fatalf("got %s", got)
	}
}

func TestEngine_ListenersSeeTheirChanges(t *testing.T) {
	e := open(t, "")
	set(t, e, "/room", `{"a": {"v": 1}, "b": {"v": 5}, "c": {"v": 9}}`)
	var all, top []string
	ctx := context.Background()
	cancel, err := e.Listen(ctx, "ns", Path{"room"}, Query{}, identity.Owner, func(u Update) {
		if u.Merge {
			all = append(all, "merge "+u.Path.String()+" "+string(mergeOf(u)))
			return
		}
		all = append(all, u.Path.String()+" "+string(u.Value.JSON()))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	q := Query{Index: Index{Kind: ByChild, Path: Path{"v"}}, HasLimit: true, Limit: 2, FromRight: true}
	cancelTop, err := e.Listen(ctx, "ns", Path{"room"}, q, identity.Owner, func(u Update) {
		if u.Merge {
			top = append(top, string(mergeOf(u)))
			return
		}
		top = append(top, string(u.Value.JSON()))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cancelTop()
	set(t, e, "/room/a/v", `10`)
	set(t, e, "/other", `1`)
	if _, err := e.Write(ctx, Write{NS: "ns", Path: Path{"room"}, Op: OpUpdate, Caller: identity.Owner, Value: value(t, `{"b": null, "d/v": 0}`)}); err != nil {
		t.Fatal(err)
	}
	set(t, e, "/", `{"room": {"z": {"v": 3}}}`)
	wantAll := []string{
		`/room {"a":{"v":1},"b":{"v":5},"c":{"v":9}}`,
		`/room/a/v 10`,
		`merge /room {"b":null,"d/v":0}`,
		`/room {"z":{"v":3}}`,
	}
	if !slices.Equal(all, wantAll) {
		t.Errorf("default listener got\n%s\nwant\n%s", strings.Join(all, "\n"), strings.Join(wantAll, "\n"))
	}
	wantTop := []string{`{"b":{"v":5},"c":{"v":9}}`, `{"b":null,"a":{"v":10}}`, `{"a":null,"c":null,"z":{"v":3}}`}
	if !slices.Equal(top, wantTop) {
		t.Errorf("limitToLast(2) listener got\n%s\nwant\n%s", strings.Join(top, "\n"), strings.Join(wantTop, "\n"))
	}
}

func mergeOf(u Update) []byte {
	var b []byte
	b = append(b, '{')
	for i, c := range u.Children {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, strings.Join(c.Path, "/"))
		b = append(b, ':')
		b = c.Value.AppendJSON(b, false)
	}
	return append(b, '}')
}

func TestEngine_SurvivesRestartAndATornLastRecord(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir)
	set(t, e, "/a", `{"x": 1, ".priority": "p"}`)
	set(t, e, "/b", `[1, 2]`)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, logFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`0badc0de {"ns":"ns","w":[["/c",1`) // a crash mid-append
	f.Close()
	e = open(t, dir)
	if got, want := get(t, e, "/"), `{"a":{"x":1,".priority":"p"},"b":{"0":1,"1":2}}`; got != want {
		t.Fatalf("after restart got %s, want %s", got, want)
	}
	// Folding the log keeps the data.
	if err := e.log.rewrite(e.roots()); err != nil {
		t.Fatal(err)
	}
	set(t, e, "/c", `3`)
	e.Close()
	e = open(t, dir)
	if got, want := get(t, e, "/"), `{"a":{"x":1,".priority":"p"},"b":{"0":1,"1":2},"c":3}`; got != want {
		t.Fatalf("after compaction got %s, want %s", got, want)
	}
}

// failingFile fails every write, as a full disk does.
type failingFile struct{ wal.File }

func (failingFile) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestEngine_AFailedSyncUndoesTheWrite(t *testing.T) {
	e := open(t, t.TempDir())
	set(t, e, "/a", `1`)
	var seen []string
	cancel, _ := e.Listen(context.Background(), "ns", Path{"a"}, Query{}, identity.Owner, func(u Update) { seen = append(seen, string(u.Value.JSON())) })
	defer cancel()
	good := e.log.wal.SwapFile(nil)
	e.log.wal.SwapFile(failingFile{good})
	_, err := e.Write(context.Background(), Write{NS: "ns", Path: Path{"a"}, Value: 2.0, Caller: identity.Owner})
	if errs.KindOf(err) != errs.Unavailable {
		t.Fatalf("write on a full disk: %v", err)
	}
	e.log.wal.SwapFile(good)
	if got := get(t, e, "/a"); got != "1" {
		t.Fatalf("the failed write is visible: %s", got)
	}
	set(t, e, "/b", `2`)
	if got := get(t, e, "/"); got != `{"a":1,"b":2}` {
		t.Fatalf("after the failure got %s", got)
	}
	if !slices.Equal(seen, []string{"1"}) {
		t.Fatalf("a listener saw %v", seen)
	}
}

func TestEngine_ExportImport(t *testing.T) {
	e := open(t, "")
	set(t, e, "/a", `{"x": {".value": 1, ".priority": 3}}`)
	dir := t.TempDir()
	if err := e.Export(dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ExportFolder, "ns.json"))
	if err != nil || strings.TrimSpace(string(raw)) != `{"a":{"x":{".value":1,".priority":3}}}` {
		t.Fatalf("export file %q %v", raw, err)
	}
	f := open(t, "")
	set(t, f, "/old", `1`)
	if err := f.Import(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if got := get(t, f, "/"); got != `{"a":{"x":{".value":1,".priority":3}}}` {
		t.Fatalf("imported %s", got)
	}
}

func TestNode_SizeAtMostStopsEarly(t *testing.T) {
	small := mustJSON(t, `{"a":"x","b":[1,2]}`)
	if !small.SizeAtMost(100) || small.SizeAtMost(5) {
		t.Fatal("SizeAtMost misjudges a small object")
	}
	big := Empty
	for i := range 5000 {
		big = big.WithChild(PushID(time.UnixMilli(int64(i))), NewString(strings.Repeat("x", 100)))
	}
	if big.SizeAtMost(64 << 10) {
		t.Fatal("a 500 KB object is at most 64 KB")
	}
}

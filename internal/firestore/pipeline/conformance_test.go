package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const project = "demo-loupe"

// start runs loupe with a standard (default) database and an Enterprise
// one named "ent", and returns a Go SDK client of each.
func start(t testing.TB) (ent, std *firestore.Client) {
	_, ent, std = startInstance(t)
	return ent, std
}

func startInstance(t testing.TB) (inst *loupetest.Instance, ent, std *firestore.Client) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(cfg, []byte(`{"firestore": [{"database": "(default)"}, {"database": "ent", "edition": "enterprise"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inst = loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})
	t.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	ctx := context.Background()
	var err error
	if ent, err = firestore.NewClientWithDatabase(ctx, project, "ent"); err != nil {
		t.Fatal(err)
	}
	if std, err = firestore.NewClient(ctx, project); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ent.Close(); std.Close() })
	return inst, ent, std
}

func set(t *testing.T, c *firestore.Client, path string, data map[string]any) {
	t.Helper()
	if _, err := c.Doc(path).Set(context.Background(), data); err != nil {
		t.Fatalf("set %s: %v", path, err)
	}
}

// all runs a pipeline and returns its results' data.
func all(t *testing.T, p *firestore.Pipeline) []map[string]any {
	t.Helper()
	res, err := p.Execute(context.Background()).Results().GetAll()
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	out := make([]map[string]any, len(res))
	for i, r := range res {
		out[i] = r.Data()
	}
	return out
}

func execErr(p *firestore.Pipeline) error {
	_, err := p.Execute(context.Background()).Results().GetAll()
	return err
}

func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), msg) {
		t.Errorf("error = %v, want %s containing %q", err, code, msg)
	}
}

// absent marks an expected result with no field.
type absentT struct{}

var absent absentT

var fixedTime = time.Date(2024, 3, 10, 15, 4, 5, 123456000, time.UTC)

// TestConformance_Functions evaluates each function family against one
// stored document, with the results production documents.
func TestConformance_Functions(t *testing.T) {
	ent, _ := start(t)
	set(t, ent, "fx/d2", map[string]any{"x": 1})
	set(t, ent, "fx/d1", map[string]any{
		"i": 7, "f": 2.5, "neg": -3, "zero": 0, "big": int64(math.MaxInt64), "nan": math.NaN(),
		"s": "  Hello World ", "name": "Ada Lovelace", "email": "ada@example.com", "csv": "a,b,c", "uni": "héllo",
		"tags": []string{"x", "y", "z"}, "nums": []int{3, 1, 2}, "mixed": []any{1, "a", nil},
		"m": map[string]any{"b": 2, "a": 1, "in": map[string]any{"deep": true}}, "m2": map[string]any{"c": 3},
		"ts": fixedTime, "nul": nil, "bt": true, "bf": false,
		"v": firestore.Vector64{1, 2, 3}, "w": firestore.Vector64{4, 5, 6},
		"geo": &latlng.LatLng{Latitude: 48.8566, Longitude: 2.3522}, "ref": ent.Doc("fx/d2"),
		"sub": ent.Doc("fx/d1/sub/s1"), "bytes": []byte("abc"),
	})
	d1 := ent.Doc("fx/d1")
	cases := []struct {
		name string
		expr firestore.Expression
		want any
	}{
		// arithmetic: integers stay integers, a double makes a double
		{"add ints", firestore.Add("i", 3), int64(10)},
		{"add int double", firestore.Add("i", firestore.FieldOf("f")), 9.5},
		{"subtract", firestore.Subtract("i", 10), int64(-3)},
		{"multiply", firestore.Multiply("f", 4), 10.0},
		{"divide ints truncates", firestore.Divide("i", 2), int64(3)},
		{"divide double", firestore.Divide("i", 2.0), 3.5},
		{"mod", firestore.Mod("i", 4), int64(3)},
		{"abs", firestore.Abs("neg"), int64(3)},
		{"ceil double", firestore.Ceil("f"), 3.0},
		{"floor double", firestore.Floor("f"), 2.0},
		{"floor int stays int", firestore.Floor("i"), int64(7)},
		{"round half away from zero", firestore.Round("f"), 3.0},
		{"round to precision", firestore.RoundToPrecision(firestore.ConstantOf(4.567), 2), 4.57},
		{"trunc", firestore.Trunc(firestore.ConstantOf(-2.7)), -2.0},
		{"sqrt", firestore.Sqrt(firestore.ConstantOf(16)), 4.0},
		{"pow", firestore.Pow("i", 2), 49.0},
		{"exp", firestore.Exp(firestore.ConstantOf(0)), 1.0},
		{"ln", firestore.Ln(firestore.ConstantOf(1)), 0.0},
		{"log base 2", firestore.Log(firestore.ConstantOf(8), 2), 3.0},
		{"log10", firestore.Log10(firestore.ConstantOf(1000)), 3.0},
		{"null propagates", firestore.Add("nul", 1), nil},
		{"divide by zero is an error", firestore.IfError(firestore.Divide("i", 0), "err"), "err"},
		{"overflow is an error", firestore.IfError(firestore.Add("big", 1), "overflow"), "overflow"},
		{"absent argument is an error", firestore.IfError(firestore.Add("missing", 1), "err"), "err"},
		// comparison
		{"equal int double", firestore.Equal("i", 7.0), true},
		{"equal NaN NaN", firestore.Equal("nan", math.NaN()), true},
		{"equal null null", firestore.Equal("nul", nil), true},
		{"equal null absent", firestore.Equal("nul", firestore.FieldOf("missing")), false},
		{"not equal across types", firestore.NotEqual("i", "7"), true},
		{"less than across types is false", firestore.LessThan("i", "z"), false},
		{"greater than or equal", firestore.GreaterThanOrEqual("i", 7), true},
		{"cmp", firestore.Cmp("i", 9), int64(-1)},
		{"equal any", firestore.EqualAny("i", []any{1, 7}), true},
		{"not equal any", firestore.NotEqualAny("i", []any{1, 7}), false},
		// logical and conditional
		{"and with null", firestore.And(firestore.Equal("i", 7), firestore.FieldOf("nul").Equal(1)), false},
		{"or", firestore.Or(firestore.Equal("i", 1), firestore.Equal("i", 7)), true},
		{"xor", firestore.Xor(firestore.Equal("i", 7), firestore.Equal("f", 2.5)), false},
		{"nor", firestore.Nor(firestore.Equal("i", 1), firestore.Equal("i", 2)), true},
		{"not", firestore.Not(firestore.Equal("i", 7)), false},
		{"conditional", firestore.Conditional(firestore.GreaterThan("i", 5), "big", "small"), "big"},
		{"switch on default", firestore.SwitchOn(firestore.Equal("i", 1), "one", "other"), "other"},
		{"if absent", firestore.IfAbsent("missing", 42), int64(42)},
		{"if null", firestore.IfNull("nul", 0), int64(0)},
		{"coalesce skips absent and null", firestore.Coalesce("missing", firestore.FieldOf("nul"), "fallback"), "fallback"},
		{"logical maximum", firestore.LogicalMaximum("i", 3, 11), int64(11)},
		{"logical minimum skips null", firestore.LogicalMinimum("i", firestore.FieldOf("nul")), int64(7)},
		{"exists", firestore.FieldExists("missing"), false},
		{"is absent", firestore.IsAbsent("missing"), true},
		{"is error", firestore.IsError(firestore.Divide("i", 0)), true},
		// types
		{"type int", firestore.Type("i"), "int64"},
		{"type double", firestore.Type("f"), "float64"},
		{"type vector", firestore.Type("v"), "vector"},
		{"type geo", firestore.Type("geo"), "geo_point"},
		{"is type number", firestore.IsType("f", "number"), true},
		// strings
		{"char length", firestore.CharLength("uni"), int64(5)},
		{"byte length", firestore.ByteLength("uni"), int64(6)},
		{"string concat", firestore.StringConcat("name", " <", firestore.FieldOf("email"), ">"), "Ada Lovelace <ada@example.com>"},
		{"to upper", firestore.ToUpper("name"), "ADA LOVELACE"},
		{"to lower", firestore.ToLower("name"), "ada lovelace"},
		{"trim", firestore.Trim("s"), "Hello World"},
		{"ltrim", firestore.LTrim("s"), "Hello World "},
		{"rtrim chars", firestore.RTrimValue("name", "ecal"), "Ada Lov"},
		{"substring", firestore.Substring("name", 4, 4), "Love"},
		{"string reverse", firestore.StringReverse("uni"), "olléh"},
		{"split", firestore.Split("csv", ","), []any{"a", "b", "c"}},
		{"join", firestore.Join("tags", "-"), "x-y-z"},
		{"repeat", firestore.StringRepeat(firestore.ConstantOf("ab"), 3), "ababab"},
		{"replace one", firestore.StringReplaceOne(firestore.ConstantOf("a-a-a"), "a", "b"), "b-a-a"},
		{"replace all", firestore.StringReplaceAll(firestore.ConstantOf("a-a-a"), "a", "b"), "b-b-b"},
		{"index of", firestore.StringIndexOf("name", "Love"), int64(4)},
		{"index of missing", firestore.StringIndexOf("name", "zzz"), int64(-1)},
		{"starts with", firestore.StartsWith("name", "Ada"), true},
		{"ends with", firestore.EndsWith("email", ".org"), false},
		{"contains", firestore.StringContains("email", "@"), true},
		{"like", firestore.Like("email", "%@example._om"), true},
		{"regex contains", firestore.RegexContains("email", `@example\.`), true},
		{"regex match is whole string", firestore.RegexMatch("email", `[a-z]+`), false},
		{"regex find", firestore.RegexFind("email", `[a-z]+`), "ada"},
		{"regex find all", firestore.RegexFindAll("csv", `[a-z]`), []any{"a", "b", "c"}},
		{"string function on a number is an error", firestore.IfError(firestore.ToUpper("i"), "err"), "err"},
		{"length of string", firestore.Length("uni"), int64(5)},
		{"length of map", firestore.Length("m"), int64(3)},
		{"reverse string", firestore.Reverse("csv"), "c,b,a"},
		{"concat arrays", firestore.Concat("tags", firestore.Array("w")), []any{"x", "y", "z", "w"}},
		// arrays
		{"array", firestore.Array(1, "a"), []any{int64(1), "a"}},
		{"array length", firestore.ArrayLength("tags"), int64(3)},
		{"array get", firestore.ArrayGet("tags", 1), "y"},
		{"array get negative", firestore.ArrayGet("tags", -1), "z"},
		{"array get out of range", firestore.ArrayGet("tags", 9), absent},
		{"offset of a non-array", firestore.Offset("name", 0), absent},
		{"array reverse", firestore.ArrayReverse("nums"), []any{int64(2), int64(1), int64(3)}},
		{"array concat", firestore.ArrayConcat("nums", []int{9}), []any{int64(3), int64(1), int64(2), int64(9)}},
		{"array sum", firestore.ArraySum("nums"), int64(6)},
		{"array maximum", firestore.ArrayMaximum("nums"), int64(3)},
		{"array minimum n", firestore.ArrayMinimumN("nums", 2), []any{int64(1), int64(2)}},
		{"array first", firestore.ArrayFirst("tags"), "x"},
		{"array last n", firestore.ArrayLastN("tags", 2), []any{"y", "z"}},
		{"array slice", firestore.ArraySlice("tags", 1, 1), []any{"y"}},
		{"array filter", firestore.ArrayFilter("nums", "n", firestore.GreaterThan(firestore.Variable("n"), 1)), []any{int64(3), int64(2)}},
		{"array transform with index", firestore.ArrayTransformWithIndex("nums", "n", "i", firestore.Multiply(firestore.Variable("n"), firestore.Variable("i"))), []any{int64(0), int64(1), int64(4)}},
		{"array index of", firestore.ArrayIndexOf("tags", "z"), int64(2)},
		{"array last index of", firestore.ArrayLastIndexOf(firestore.Array(1, 2, 1), 1), int64(2)},
		{"array index of all", firestore.ArrayIndexOfAll(firestore.Array(1, 2, 1), 1), []any{int64(0), int64(2)}},
		{"array contains", firestore.ArrayContains("mixed", "a"), true},
		{"array contains all", firestore.ArrayContainsAll("tags", []string{"x", "z"}), true},
		{"array contains any", firestore.ArrayContainsAny("tags", []string{"q", "y"}), true},
		// maps
		{"map", firestore.Map(map[string]any{"k": firestore.FieldOf("i")}), map[string]any{"k": int64(7)}},
		{"map get", firestore.MapGet("m", "b"), int64(2)},
		{"map get missing key", firestore.MapGet("m", "zz"), absent},
		{"get field nested", firestore.GetField("m", "in.deep"), true},
		{"map set", firestore.MapSet("m2", "d", 4), map[string]any{"c": int64(3), "d": int64(4)}},
		{"map remove", firestore.MapRemove("m", "in"), map[string]any{"a": int64(1), "b": int64(2)}},
		{"map merge", firestore.MapMerge("m2", firestore.Map(map[string]any{"c": 0, "e": 5})), map[string]any{"c": int64(0), "e": int64(5)}},
		{"map keys sorted", firestore.MapKeys("m"), []any{"a", "b", "in"}},
		{"map values", firestore.MapValues("m2"), []any{int64(3)}},
		{"map entries", firestore.MapEntries("m2"), []any{map[string]any{"k": "c", "v": int64(3)}}},
		// timestamps
		{"timestamp add", firestore.TimestampAdd("ts", "day", 1), fixedTime.AddDate(0, 0, 1)},
		{"timestamp subtract", firestore.TimestampSubtract("ts", "hour", 2), fixedTime.Add(-2 * time.Hour)},
		{"timestamp diff", firestore.TimestampDiff(firestore.TimestampAdd("ts", "minute", 90), firestore.FieldOf("ts"), "hour"), int64(1)},
		{"timestamp extract", firestore.TimestampExtract("ts", "month"), int64(3)},
		{"timestamp extract in zone", firestore.TimestampExtractWithTimezone("ts", "hour", "America/New_York"), int64(11)},
		{"timestamp trunc", firestore.TimestampTruncate("ts", "day"), time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)},
		{"timestamp trunc week(monday)", firestore.TimestampTruncate("ts", "week(monday)"), time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)},
		{"to unix millis", firestore.TimestampToUnixMillis("ts"), fixedTime.UnixMilli()},
		{"from unix seconds", firestore.UnixSecondsToTimestamp(firestore.ConstantOf(86400)), time.Unix(86400, 0).UTC()},
		// vectors and geo
		{"vector length", firestore.VectorLength("v"), int64(3)},
		{"dot product", firestore.DotProduct("v", firestore.FieldOf("w")), 32.0},
		{"euclidean distance", firestore.EuclideanDistance("v", firestore.Vector64{1, 2, 5}), 2.0},
		{"cosine distance of parallel vectors", firestore.CosineDistance("v", firestore.Vector64{2, 4, 6}), 0.0},
		{"geo distance to itself", firestore.GeoDistance("geo", &latlng.LatLng{Latitude: 48.8566, Longitude: 2.3522}), 0.0},
		// references
		{"document id", firestore.GetDocumentID(firestore.FieldOf("__name__")), "d1"},
		{"document id of a path", firestore.GetDocumentID("fx/d2"), "d2"},
		{"collection id", firestore.GetCollectionID("__name__"), "fx"},
		{"parent of a subcollection document", firestore.GetParent(firestore.FieldOf("sub")), d1},
		{"reference slice", firestore.ReferenceSlice("sub", 0, 1), d1},
		{"current document", firestore.MapGet(firestore.CurrentDocument(), "i"), int64(7)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := all(t, ent.Pipeline().Documents([]*firestore.DocumentRef{d1}).Select(firestore.Fields(c.expr.As("r"))))
			if len(rows) != 1 {
				t.Fatalf("rows = %v", rows)
			}
			got, ok := rows[0]["r"]
			if c.want == absent {
				if ok {
					t.Errorf("r = %#v, want no field", got)
				}
				return
			}
			if ref, isRef := c.want.(*firestore.DocumentRef); isRef {
				if g, ok := got.(*firestore.DocumentRef); !ok || g.Path != ref.Path {
					t.Errorf("r = %#v, want %s", got, ref.Path)
				}
				return
			}
			if f, isF := c.want.(float64); isF {
				if g, ok := got.(float64); ok && math.Abs(g-f) < 1e-9 {
					return
				}
			}
			if wt, isT := c.want.(time.Time); isT {
				if g, ok := got.(time.Time); ok && g.Equal(wt) {
					return
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("r = %#v, want %#v", got, c.want)
			}
		})
	}
}

func books(t *testing.T, c *firestore.Client) {
	t.Helper()
	for id, b := range map[string]map[string]any{
		"dune":     {"title": "Dune", "genre": "sf", "year": 1965, "rating": 4.6, "tags": []string{"desert", "politics"}, "v": firestore.Vector64{1, 0}},
		"hobbit":   {"title": "The Hobbit", "genre": "fantasy", "year": 1937, "rating": 4.7, "tags": []string{"dragons"}, "v": firestore.Vector64{0, 1}},
		"lotr":     {"title": "The Lord of the Rings", "genre": "fantasy", "year": 1954, "rating": 4.8, "tags": []string{"epic", "dragons"}, "v": firestore.Vector64{0.1, 0.9}},
		"neuro":    {"title": "Neuromancer", "genre": "sf", "year": 1984, "rating": 4.1, "tags": []string{"cyber"}, "v": firestore.Vector64{0.9, 0.2}},
		"untitled": {"genre": "sf", "year": 2001},
	} {
		set(t, c, "books/"+id, b)
	}
	set(t, c, "books/dune/reviews/r1", map[string]any{"stars": 5, "by": "ann"})
	set(t, c, "books/dune/reviews/r2", map[string]any{"stars": 3, "by": "bob"})
	set(t, c, "shelves/s1/reviews/r3", map[string]any{"stars": 4, "by": "cy"})
}

func titles(rows []map[string]any) string {
	var out []string
	for _, r := range rows {
		s, _ := r["title"].(string)
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

// TestConformance_Stages runs each stage through the Go SDK.
func TestConformance_Stages(t *testing.T) {
	ent, _ := start(t)
	books(t, ent)
	p := ent.Pipeline()
	for _, c := range []struct {
		name string
		p    *firestore.Pipeline
		want string // titles in order
	}{
		{"where sort limit", p.Collection("books").Where(firestore.Equal("genre", "fantasy")).Sort(firestore.Orders(firestore.Descending(firestore.FieldOf("rating")))).Limit(1), "The Lord of the Rings"},
		{"offset", p.Collection("books").Where(firestore.FieldExists("title")).Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("year")))).Offset(2), "Dune,Neuromancer"},
		{"sort puts absent first", p.Collection("books").Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("title")))).Limit(2), ",Dune"},
		{"descending sort puts absent last", p.Collection("books").Sort(firestore.Orders(firestore.Descending(firestore.FieldOf("title")))).Limit(10), "The Lord of the Rings,The Hobbit,Neuromancer,Dune,"},
		{"descending sort and limit on an index", p.Collection("books").Where(firestore.Equal("genre", "sf")).Sort(firestore.Orders(firestore.Descending(firestore.FieldOf("year")))).Limit(2), ",Neuromancer"},
		{"where with a residual the planner cannot run", p.Collection("books").Where(firestore.And(firestore.Equal("genre", "sf"), firestore.GreaterThan(firestore.CharLength("title"), 4))), "Neuromancer"},
		{"documents", p.Documents([]*firestore.DocumentRef{ent.Doc("books/hobbit"), ent.Doc("books/none")}), "The Hobbit"},
		{"union", p.Collection("books").Where(firestore.Equal("year", 1965)).Union(p.Collection("books").Where(firestore.Equal("year", 1937))).Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("year")))), "The Hobbit,Dune"},
		{"find nearest", p.Collection("books").FindNearest("v", firestore.Vector64{1, 0}, firestore.PipelineDistanceMeasureEuclidean, firestore.WithFindNearestLimit(2)), "Dune,Neuromancer"},
		{"sample all", p.Collection("books").Where(firestore.Equal("title", "Dune")).Sample(firestore.WithDocLimit(3)), "Dune"},
		{"replace with", p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).ReplaceWith(firestore.Map(map[string]any{"title": firestore.ToUpper("title")})), "DUNE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := titles(all(t, c.p)); got != c.want {
				t.Errorf("titles = %q, want %q", got, c.want)
			}
		})
	}

	t.Run("select add remove fields", func(t *testing.T) {
		rows := all(t, p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).
			Select(firestore.Fields("title", "year", firestore.Add("year", 1).As("next.year"))).
			AddFields(firestore.Selectables(firestore.ToLower("title").As("lower"))).
			RemoveFields(firestore.Fields("year")))
		// An alias is a field path: a dotted one sets a nested field.
		want := map[string]any{"title": "Dune", "lower": "dune", "next": map[string]any{"year": int64(1966)}}
		if len(rows) != 1 || !reflect.DeepEqual(rows[0], want) {
			t.Errorf("rows = %v, want %v", rows, want)
		}
	})
	t.Run("aliases are field paths", func(t *testing.T) {
		// As the SDKs' tests have production answer since March 2026:
		// select('author.name') gives {author: {name}}, a quoted segment
		// is one key, and map_get reads a key with a dot in it.
		rows := all(t, p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).
			ReplaceWith(firestore.Map(map[string]any{"title": "foo", "nested": map[string]any{
				"level": map[string]any{"1": "bar"}, "level.1": map[string]any{"level.2": "baz"},
			}})).
			Select(firestore.Fields("title", "nested.level.1",
				firestore.MapGet(firestore.MapGet("nested", "level.1"), "level.2").As("got"),
				firestore.ConstantOf(1).As("`a.b`.c"))))
		want := map[string]any{
			"title": "foo", "nested": map[string]any{"level": map[string]any{"1": "bar"}}, "got": "baz",
			"a.b": map[string]any{"c": int64(1)},
		}
		if len(rows) != 1 || !reflect.DeepEqual(rows[0], want) {
			t.Errorf("rows = %v, want %v", rows, want)
		}
		err := execErr(p.Collection("books").Select(firestore.Fields(firestore.ConstantOf(1).As("a..b"))))
		wantStatus(t, err, codes.InvalidArgument, "Invalid field path")
	})
	t.Run("aggregate with groups", func(t *testing.T) {
		rows := all(t, p.Collection("books").Aggregate(firestore.Accumulators(
			firestore.CountAll().As("n"), firestore.Average("rating").As("avg"), firestore.Maximum("year").As("latest"),
			firestore.Count("title").As("titled"), firestore.CountIf(firestore.GreaterThan("rating", 4.5)).As("good"),
		), firestore.WithAggregateGroups("genre")).Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("genre")))))
		want := []map[string]any{
			{"genre": "fantasy", "n": int64(2), "avg": 4.75, "latest": int64(1954), "titled": int64(2), "good": int64(2)},
			{"genre": "sf", "n": int64(3), "avg": (4.6 + 4.1) / 2, "latest": int64(2001), "titled": int64(2), "good": int64(1)},
		}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v, want %v", rows, want)
		}
		// The engine streams the filtered documents into the aggregate in
		// the classic query's order: by the inequality's field, then name.
		rows = all(t, p.Collection("books").Where(firestore.GreaterThan("year", 1940)).Aggregate(firestore.Accumulators(
			firestore.ArrayAgg("year").As("years"), firestore.First(firestore.FieldOf("__name__")).As("first"),
			firestore.Last("year").As("last"), firestore.Sum("rating").As("sum"))))
		sum := 4.8 // added in that order, as doubles
		sum += 4.6
		sum += 4.1
		if len(rows) != 1 || fmt.Sprint(rows[0]["years"]) != "[1954 1965 1984 2001]" || rows[0]["last"] != int64(2001) || rows[0]["sum"] != sum {
			t.Errorf("streamed aggregate = %v", rows)
		} else if ref, ok := rows[0]["first"].(*firestore.DocumentRef); !ok || ref.ID != "lotr" {
			t.Errorf("first name = %v, want lotr's", rows[0]["first"])
		}
	})
	t.Run("aggregate over nothing", func(t *testing.T) {
		rows := all(t, p.Collection("nothing").Aggregate(firestore.Accumulators(firestore.CountAll().As("n"), firestore.Sum("x").As("s"), firestore.Average("x").As("a"))))
		want := []map[string]any{{"n": int64(0), "s": int64(0), "a": nil}}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v, want %v", rows, want)
		}
	})
	t.Run("distinct", func(t *testing.T) {
		rows := all(t, p.Collection("books").Distinct(firestore.Fields("genre")).Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("genre")))))
		if want := []map[string]any{{"genre": "fantasy"}, {"genre": "sf"}}; !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("unnest with index", func(t *testing.T) {
		rows := all(t, p.Documents([]*firestore.DocumentRef{ent.Doc("books/lotr")}).
			UnnestWithAlias("tags", "tag", firestore.WithUnnestIndexField("i")).Select(firestore.Fields("tag", "i")))
		want := []map[string]any{{"tag": "epic", "i": int64(0)}, {"tag": "dragons", "i": int64(1)}}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("collection group and database", func(t *testing.T) {
		if n := len(all(t, p.CollectionGroup("reviews"))); n != 3 {
			t.Errorf("collection group reviews = %d rows, want 3", n)
		}
		if n := len(all(t, p.Database())); n != 8 {
			t.Errorf("database = %d rows, want 8", n)
		}
	})
	t.Run("literals", func(t *testing.T) {
		rows := all(t, p.Literals([]map[string]any{{"n": 1}, {"n": 5}}).Where(firestore.GreaterThan("n", 2)))
		if want := []map[string]any{{"n": int64(5)}}; !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("let, variables and subqueries", func(t *testing.T) {
		rows := all(t, p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).
			Define(firestore.AliasedExpressions(firestore.Multiply("year", 2).As("twice"))).
			AddFields(firestore.Selectables(
				firestore.Subcollection("reviews").Aggregate(firestore.Accumulators(firestore.Average("stars").As("avg"))).ToScalarExpression().As("stars"),
				firestore.Subcollection("reviews").Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("by")))).Select(firestore.Fields("by")).ToArrayExpression().As("reviewers"),
				firestore.Variable("twice").As("twice"),
			)).Select(firestore.Fields("stars", "reviewers", "twice")))
		// Rows of one field are unwrapped to its value, as the SDKs document.
		want := []map[string]any{{"stars": 4.0, "reviewers": []any{"ann", "bob"}, "twice": int64(3930)}}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v, want %v", rows, want)
		}
	})
	t.Run("a subquery's own variable shadows the enclosing one", func(t *testing.T) {
		inner := p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).
			Define(firestore.AliasedExpressions(firestore.ConstantOf("inner").As("x"))).
			Select([]any{firestore.Variable("x").As("val")})
		rows := all(t, p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).
			Define(firestore.AliasedExpressions(firestore.ConstantOf("outer").As("x"))).
			AddFields(firestore.Selectables(inner.ToArrayExpression().As("shadowed"))).
			Select(firestore.Fields("shadowed")))
		if want := []map[string]any{{"shadowed": []any{"inner"}}}; !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v, want %v", rows, want)
		}
	})
	t.Run("a scalar subquery of several rows is refused", func(t *testing.T) {
		err := execErr(p.Documents([]*firestore.DocumentRef{ent.Doc("books/dune")}).
			AddFields(firestore.Selectables(p.Collection("books").ToScalarExpression().As("one"))))
		wantStatus(t, err, codes.InvalidArgument, "Subpipeline returned multiple results")
	})
	t.Run("search", func(t *testing.T) {
		rows := all(t, p.Collection("books").Search(firestore.WithSearchQuery("the -hobbit")).Select(firestore.Fields("title")))
		if got := titles(rows); got != "The Lord of the Rings" {
			t.Errorf("search = %q", got)
		}
	})
}

// TestConformance_BadInput: production's codes and messages, never a crash.
func TestConformance_BadInput(t *testing.T) {
	inst, ent, std := startInstance(t)
	set(t, ent, "c/d", map[string]any{"s": "text", "a": []int{1}})
	set(t, std, "c/d", map[string]any{"s": "text"})
	p := ent.Pipeline().Collection("c")
	wantStatus(t, execErr(std.Pipeline().Collection("c")), codes.FailedPrecondition, "Enterprise edition")
	wantStatus(t, execErr(p.Where(firestore.RawBooleanFunction("no_such_function", "s"))), codes.InvalidArgument, "no_such_function(...) is not supported")
	wantStatus(t, execErr(p.Select(firestore.Fields(firestore.ReferenceSliceToEnd(firestore.FieldOf("__name__"), 0).As("r")))), codes.InvalidArgument, "takes [3..3] argument(s), but 2 were provided")
	wantStatus(t, execErr(p.Select(firestore.Fields(firestore.ArrayGet("s", 1).As("r")))), codes.InvalidArgument, "The function array_get(...) requires `Array` but got `STRING`.")
	wantStatus(t, execErr(p.RawStage("no_such_stage", nil)), codes.InvalidArgument, `Unrecognized pipeline stage "no_such_stage"`)
	wantStatus(t, execErr(p.Limit(-1)), codes.InvalidArgument, "must not be negative")
	wantStatus(t, execErr(p.Aggregate(firestore.Accumulators(firestore.RawAggregate("to_upper", "s").As("x")))), codes.InvalidArgument, "not an aggregate function")
	// Groups without accumulators (the JS SDK sends them; the Go SDK refuses them itself).
	noAccs := []any{map[string]any{}, map[string]any{"s": firestore.FieldOf("s")}}
	wantStatus(t, execErr(p.RawStage("aggregate", noAccs)), codes.InvalidArgument, "takes at least one accumulator")
	// Words the JS SDK's pipeline tests match.
	wantStatus(t, execErr(p.Select(firestore.Fields(firestore.ArraySlice("a", 1, -1).As("r")))), codes.InvalidArgument, "length must be non-negative")
	wantStatus(t, execErr(p.Select(firestore.Fields(firestore.SwitchOn(firestore.Equal("s", "other"), "one").As("r")))), codes.InvalidArgument, "all switch cases evaluate to false")
	wantStatus(t, execErr(p.RawStage("select", []any{firestore.FieldOf("s")})), codes.InvalidArgument, "Expected fields to be MAP_VALUE, but was FIELD_REFERENCE_VALUE.")
	// A where whose condition errs drops the row rather than failing.
	if rows := all(t, p.Where(firestore.GreaterThan(firestore.Add("s", 1), 0))); len(rows) != 0 {
		t.Errorf("rows = %v", rows)
	}
	// REST :executePipeline answers as runQuery does: a JSON array.
	body := `{"structuredPipeline": {"pipeline": {"stages": [
		{"name": "collection", "args": [{"referenceValue": "/c"}]},
		{"name": "where", "args": [{"functionValue": {"name": "equal", "args": [{"fieldReferenceValue": "s"}, {"stringValue": "text"}]}}]}]}}}`
	for db, want := range map[string]int{"ent": 200, "(default)": 400} {
		resp, err := http.Post(inst.URL+"/v1/projects/"+project+"/databases/"+db+"/documents:executePipeline", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("REST on %s: %d %s, want %d", db, resp.StatusCode, raw, want)
		}
		if want == 200 && !strings.Contains(string(raw), `"results"`) || want == 400 && !strings.Contains(string(raw), "FAILED_PRECONDITION") {
			t.Errorf("REST on %s answered %s", db, raw)
		}
	}
	// Classic queries still work on both editions.
	for _, c := range []*firestore.Client{ent, std} {
		docs, err := c.Collection("c").Where("s", "==", "text").Documents(context.Background()).GetAll()
		if err != nil || len(docs) != 1 {
			t.Errorf("classic query = %d docs, %v", len(docs), err)
		}
	}
}

// TestConformance_Consistency: transactions, read time and explain.
func TestConformance_Consistency(t *testing.T) {
	ent, _ := start(t)
	ctx := context.Background()
	set(t, ent, "acct/a", map[string]any{"n": 1})
	before := time.Now()
	time.Sleep(5 * time.Millisecond)
	set(t, ent, "acct/b", map[string]any{"n": 2})

	old := all(t, ent.Pipeline().Collection("acct").WithReadOptions(firestore.ReadTime(before)))
	if len(old) != 1 || old[0]["n"] != int64(1) {
		t.Errorf("at the earlier read time = %v, want only a", old)
	}
	err := ent.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		res, err := tx.Execute(ent.Pipeline().Collection("acct").Aggregate(firestore.Accumulators(firestore.Sum("n").As("total")))).Results().GetAll()
		if err != nil {
			return err
		}
		if got := res[0].Data()["total"]; got != int64(3) {
			t.Errorf("total in the transaction = %v", got)
		}
		return tx.Set(ent.Doc("acct/total"), map[string]any{"n": res[0].Data()["total"]})
	})
	if err != nil {
		t.Fatalf("transaction: %v", err)
	}
	snap := ent.Pipeline().Collection("acct").Where(firestore.Equal("n", 3)).Execute(ctx, firestore.WithExplainMode(firestore.ExplainModeAnalyze))
	res, err := snap.Results().GetAll()
	if err != nil || len(res) != 1 {
		t.Fatalf("explain results = %v, %v", res, err)
	}
	text, err := snap.ExplainStats().Text()
	if err != nil || !strings.Contains(text, "index") || !strings.Contains(text, "→ 1 rows") {
		t.Errorf("explain text = %q, %v: want the index used and the row count", text, err)
	}
	scan := ent.Pipeline().Collection("acct").Where(firestore.GreaterThan(firestore.Add("n", 1), 3)).Execute(ctx, firestore.WithExplainMode(firestore.ExplainModeAnalyze))
	if _, err := scan.Results().GetAll(); err != nil {
		t.Fatal(err)
	}
	if text, _ := scan.ExplainStats().Text(); !strings.Contains(text, "scan") || !strings.Contains(text, "where → 1 rows") {
		t.Errorf("explain of an unindexed filter = %q, want a scan", text)
	}

	// Query-level options: the SDK's index_mode, and memory_limit as
	// production's SDK tests send it: a pipeline holding more rows than it
	// allows fails with RESOURCE_EXHAUSTED and, when analyzed, the explain
	// stats of what ran in the status details.
	sorted := ent.Pipeline().Collection("acct").Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("n"))))
	if rows := all(t, sorted); len(rows) != 3 {
		t.Fatalf("rows = %v", rows)
	}
	if _, err := sorted.Execute(ctx, firestore.WithIndexMode("recommended"), firestore.RawOptions{"memory_limit": 1 << 20}).Results().GetAll(); err != nil {
		t.Errorf("index_mode recommended, memory_limit 1 MiB: %v", err)
	}
	_, err = sorted.Execute(ctx, firestore.WithExplainMode(firestore.ExplainModeAnalyze), firestore.RawOptions{"memory_limit": 1}).Results().GetAll()
	wantStatus(t, err, codes.ResourceExhausted, "memory limit")
	var stats *pb.ExplainStats
	for _, d := range status.Convert(err).Details() {
		if s, ok := d.(*pb.ExplainStats); ok {
			stats = s
		}
	}
	var statsText wrapperspb.StringValue
	if stats == nil || stats.GetData().UnmarshalTo(&statsText) != nil || !strings.Contains(statsText.GetValue(), "collection acct") {
		t.Errorf("details of %v = %v, want ExplainStats with the text of what ran", err, status.Convert(err).Details())
	}
	_, err = sorted.Execute(ctx, firestore.RawOptions{"memory_limit": 1}).Results().GetAll()
	wantStatus(t, err, codes.ResourceExhausted, "memory limit")
	if len(status.Convert(err).Details()) != 0 {
		t.Errorf("details without explain = %v, want none", status.Convert(err).Details())
	}
	_, err = sorted.Execute(ctx, firestore.RawOptions{"memory_limit": "1"}).Results().GetAll()
	wantStatus(t, err, codes.InvalidArgument, "memory_limit must be a positive integer")
	_, err = sorted.Execute(ctx, firestore.WithIndexMode("fastest")).Results().GetAll()
	wantStatus(t, err, codes.InvalidArgument, "index_mode")
	js := sorted.Execute(ctx, firestore.RawOptions{"explain_options": map[string]any{"mode": "analyze", "output_format": "json"}})
	if _, err := js.Results().GetAll(); err != nil {
		t.Fatal(err)
	}
	// output_format json: the stats are still a StringValue, holding JSON.
	jsText, _ := js.ExplainStats().Text()
	var parsed map[string]any
	if json.Unmarshal([]byte(jsText), &parsed) != nil || parsed["execution"] == nil {
		t.Errorf("explain with output_format json = %q", jsText)
	}
}

// TestConformance_ParentOfTopLevel: parent() of a top-level document is
// the database root reference and the parent of the root is null, as the
// Go SDK's integration test has production answer; the SDK cannot decode
// the root reference.
func TestConformance_ParentOfTopLevel(t *testing.T) {
	ent, _ := start(t)
	set(t, ent, "tops/d1", map[string]any{"a": 1})
	p := ent.Pipeline().Collection("tops")
	res, err := p.Select(firestore.Fields(firestore.GetParent(ent.Doc("tops/d1")).As("parent"))).Execute(context.Background()).Results().GetAll()
	if err != nil || len(res) != 1 {
		t.Fatalf("parent of a top-level document: %v, %v", res, err)
	}
	var got map[string]any
	if root := res[0].DataTo(&got); root == nil || !strings.Contains(root.Error(), `reference values for collections or databases. Actual path value: "projects/demo-loupe/databases/ent/documents"`) {
		t.Errorf("parent of a top-level document: %v, %v, want the database root reference", got, root)
	}
	rows := all(t, p.Select(firestore.Fields(
		firestore.GetParent(firestore.GetParent(firestore.FieldOf("__name__"))).As("rootParent"),
		firestore.GetCollectionID(firestore.GetParent(firestore.FieldOf("__name__"))).As("rootCollection"),
	)))
	if len(rows) != 1 || rows[0]["rootParent"] != nil || rows[0]["rootCollection"] != nil {
		t.Errorf("parent and collection_id of the root = %v, want null", rows)
	}
	if _, has := rows[0]["rootParent"]; !has {
		t.Errorf("parent of the root is absent, want null: %v", rows)
	}
}

// TestConformance_BSON: the MongoDB-compatible types of Enterprise
// edition are stored, ordered among the other types as production orders
// them, filtered by classic queries and pipelines, and checked on write;
// a Standard database refuses them.
func TestConformance_BSON(t *testing.T) {
	ent, std := start(t)
	ctx := context.Background()
	values := map[string]any{
		"null": nil, "min": firestore.BSONMinKey{}, "bool": true, "nan": math.NaN(), "dec": firestore.BSONDecimal128("2.01e-5"),
		"i32": firestore.BSONInt32(1), "dbl": 2.0, "int": 3, "ts": time.Unix(100, 0).UTC(), "bts": firestore.BSONTimestamp{Seconds: 1, Increment: 2},
		"str": "s", "bytes": []byte{0, 1}, "bin": firestore.BSONBinary{Subtype: 1, Data: []byte{1, 2}}, "ref": ent.Doc("x/y"),
		"oid": firestore.BSONObjectID("507f191e810c19729de860ea"), "geo": &latlng.LatLng{}, "re": firestore.BSONRegex{Pattern: "^a", Options: "i"},
		"arr": []any{1}, "vec": firestore.Vector64{1}, "map": map[string]any{"a": 1}, "max": firestore.BSONMaxKey{},
	}
	for id, v := range values {
		set(t, ent, "b/"+id, map[string]any{"k": v})
	}
	order := "null,min,bool,nan,dec,i32,dbl,int,ts,bts,str,bytes,bin,ref,oid,geo,re,arr,vec,map,max"
	docs, err := ent.Collection("b").OrderBy("k", firestore.Asc).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Ref.ID)
	}
	if strings.Join(got, ",") != order {
		t.Errorf("classic order = %v\nwant            %v", strings.Join(got, ","), order)
	}
	rows := all(t, ent.Pipeline().Collection("b").Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("k")))).Select(firestore.Fields(firestore.GetDocumentID(firestore.FieldOf("__name__")).As("id"))))
	got = got[:0]
	for _, r := range rows {
		got = append(got, r["id"].(string))
	}
	if strings.Join(got, ",") != order {
		t.Errorf("pipeline order = %v", strings.Join(got, ","))
	}
	// Numbers compare across Int32, Decimal128, integers and doubles.
	docs, err = ent.Collection("b").Where("k", ">=", firestore.BSONInt32(2)).Documents(ctx).GetAll()
	if err != nil || len(docs) != 2 {
		t.Errorf(">= Int32(2): %d docs, %v", len(docs), err)
	}
	if snap, err := ent.Doc("b/oid").Get(ctx); err != nil || snap.Data()["k"] != firestore.BSONObjectID("507f191e810c19729de860ea") {
		t.Errorf("read back ObjectId: %v, %v", snap.Data(), err)
	}
	for id, want := range map[string]string{"oid": "object_id", "i32": "int32", "dec": "decimal128", "bts": "bson_timestamp", "re": "regex", "min": "min_key", "max": "max_key"} {
		rows := all(t, ent.Pipeline().Documents([]*firestore.DocumentRef{ent.Doc("b/" + id)}).Select(firestore.Fields(firestore.Type("k").As("t"))))
		if len(rows) != 1 || rows[0]["t"] != want {
			t.Errorf("type of %s = %v, want %s", id, rows, want)
		}
	}
	if n := len(all(t, ent.Pipeline().Collection("b").Where(firestore.IsType("k", "number")))); n != 5 {
		t.Errorf("is_type number: %d rows, want 5", n)
	}
	bsonArithmetic(t, ent)
	_, err = ent.Doc("b/bad").Set(ctx, map[string]any{"k": firestore.BSONRegex{Pattern: "x", Options: "a"}})
	wantStatus(t, err, codes.InvalidArgument, "Invalid regex option")
	_, err = ent.Doc("b/bad").Set(ctx, map[string]any{"k": firestore.BSONObjectID("abc")})
	wantStatus(t, err, codes.InvalidArgument, "Object ID hex string has incorrect length")
	_, err = std.Doc("b/oid").Set(ctx, map[string]any{"k": firestore.BSONObjectID("507f191e810c19729de860ea")})
	wantStatus(t, err, codes.InvalidArgument, `Field name "__oid__" is reserved`)
}

// TestConformance_Writes: the update, delete, insert and upsert stages
// write the rows before them and report how many documents they changed.
func TestConformance_Writes(t *testing.T) {
	ent, _ := start(t)
	ctx := context.Background()
	set(t, ent, "w/a", map[string]any{"n": 1, "k": "x"})
	set(t, ent, "w/b", map[string]any{"n": 2, "k": "y"})
	modified := func(p *firestore.Pipeline, opts ...firestore.ExecuteOption) any {
		t.Helper()
		res, err := p.Execute(ctx, opts...).Results().GetAll()
		if err != nil || len(res) != 1 {
			t.Fatalf("write pipeline: %v, %v", res, err)
		}
		return res[0].Data()["documents_modified"]
	}
	p := ent.Pipeline()
	if n := modified(p.Collection("w").Where(firestore.Equal("k", "x")).Update(firestore.WithUpdateTransformations(firestore.Add("n", 10).As("n")))); n != int64(1) {
		t.Errorf("update modified %v", n)
	}
	if snap, _ := ent.Doc("w/a").Get(ctx); snap.Data()["n"] != int64(11) || snap.Data()["k"] != "x" {
		t.Errorf("after update w/a = %v", snap.Data())
	}
	if n := modified(p.Collection("w").Insert(firestore.WithInsertCollection("copies"))); n != int64(2) {
		t.Errorf("insert modified %v", n)
	}
	if snap, err := ent.Doc("copies/b").Get(ctx); err != nil || snap.Data()["n"] != int64(2) {
		t.Errorf("inserted copies/b = %v, %v", snap, err)
	}
	if err := execErr(p.Collection("w").Insert(firestore.WithInsertCollection("copies"))); status.Code(err) != codes.AlreadyExists {
		t.Errorf("insert over existing documents: %v, want ALREADY_EXISTS", err)
	}
	if n := modified(p.Literals([]map[string]any{{"n": 5}}).Upsert(firestore.WithUpsertCollection("w"), firestore.WithUpsertDocumentIDExpression(firestore.ConstantOf("c"))), firestore.WithAtomic(true)); n != int64(1) {
		t.Errorf("atomic upsert modified %v", n)
	}
	if n := modified(p.Collection("copies").Delete()); n != int64(2) {
		t.Errorf("delete modified %v", n)
	}
	if docs, _ := ent.Collection("copies").Documents(ctx).GetAll(); len(docs) != 0 {
		t.Errorf("copies left: %d", len(docs))
	}
	if docs, _ := ent.Collection("w").Documents(ctx).GetAll(); len(docs) != 3 {
		t.Errorf("w has %d documents, want 3", len(docs))
	}
}

// TestConformance_WritesInATransaction: a write stage inside a transaction
// the client began is staged in it: nothing is written until the commit,
// which writes it, and a transaction that rolls back writes nothing (the Go
// SDK's integration suite runs insert and upsert so).
func TestConformance_WritesInATransaction(t *testing.T) {
	ent, _ := start(t)
	ctx := context.Background()
	set(t, ent, "tw/a", map[string]any{"n": 1})
	insert := ent.Pipeline().Literals([]map[string]any{{"title": "Tx"}}).
		Insert(firestore.WithInsertCollection("tw"), firestore.WithInsertDocumentIDExpression(firestore.ConstantOf("b")))
	upsert := ent.Pipeline().Collection("tw").Where(firestore.Equal(firestore.FieldOf(firestore.DocumentID).GetDocumentID(), "a")).
		Upsert(firestore.WithUpsertAdditionalFields(firestore.ConstantOf("up").As("status")))
	err := ent.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		for _, p := range []*firestore.Pipeline{insert, upsert} {
			res, err := tx.Execute(p).Results().GetAll()
			if err != nil {
				return err
			}
			if len(res) != 1 || res[0].Data()["documents_modified"] != int64(1) {
				return fmt.Errorf("write stage answered %v", res)
			}
		}
		if _, err := ent.Doc("tw/b").Get(ctx); status.Code(err) != codes.NotFound {
			return fmt.Errorf("before the commit tw/b: %v, want NOT_FOUND", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("transaction: %v", err)
	}
	if snap, err := ent.Doc("tw/b").Get(ctx); err != nil || snap.Data()["title"] != "Tx" {
		t.Errorf("inserted tw/b = %v, %v", snap, err)
	}
	if snap, err := ent.Doc("tw/a").Get(ctx); err != nil || !reflect.DeepEqual(snap.Data(), map[string]any{"n": int64(1), "status": "up"}) {
		t.Errorf("upserted tw/a = %v, %v", snap, err)
	}
	rollback := errors.New("roll back")
	err = ent.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		p := ent.Pipeline().Collection("tw").Delete()
		if _, err := tx.Execute(p).Results().GetAll(); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatalf("rolled back transaction: %v", err)
	}
	if docs, err := ent.Collection("tw").Documents(ctx).GetAll(); err != nil || len(docs) != 2 {
		t.Errorf("after a rolled back delete tw has %d documents (%v), want 2", len(docs), err)
	}
}

// TestConformance_InsertWithoutName: a row whose __name__ was removed is
// inserted under a new generated id.
func TestConformance_InsertWithoutName(t *testing.T) {
	ent, _ := start(t)
	ctx := context.Background()
	set(t, ent, "src/a", map[string]any{"n": 1})
	res, err := ent.Pipeline().Collection("src").RemoveFields(firestore.Fields(firestore.DocumentID)).
		Insert(firestore.WithInsertCollection("dst")).Execute(ctx, firestore.WithAtomic(true)).Results().GetAll()
	if err != nil || len(res) != 1 || res[0].Data()["documents_modified"] != int64(1) {
		t.Fatalf("insert: %v, %v", res, err)
	}
	docs, err := ent.Collection("dst").Documents(ctx).GetAll()
	if err != nil || len(docs) != 1 {
		t.Fatalf("dst: %v, %v", docs, err)
	}
	if id := docs[0].Ref.ID; id == "a" || len(id) != 20 {
		t.Errorf("inserted id %q, want a new generated one", id)
	}
	if !reflect.DeepEqual(docs[0].Data(), map[string]any{"n": int64(1)}) {
		t.Errorf("inserted %v", docs[0].Data())
	}
}

// bsonArithmetic: arithmetic widens INT32 < INT64 < FLOAT64 < DECIMAL128
// and answers in the widest type present, as production documents it;
// comparisons see Int32 and Decimal128 by value beside integers and doubles.
func bsonArithmetic(t *testing.T, ent *firestore.Client) {
	t.Helper()
	set(t, ent, "bn/n", map[string]any{
		"i7": firestore.BSONInt32(7), "i2": firestore.BSONInt32(2), "i3": firestore.BSONInt32(3), "imax": firestore.BSONInt32(math.MaxInt32),
		"d15": firestore.BSONDecimal128("1.5"), "d01": firestore.BSONDecimal128("0.1"), "d02": firestore.BSONDecimal128("0.2"),
		"d3": firestore.BSONDecimal128("3"), "dnan": firestore.BSONDecimal128("NaN"), "ten": 10, "f": 2.5, "d150": firestore.BSONDecimal128("1.50"),
		"arr": []any{firestore.BSONInt32(1), 2}, "arrd": []any{firestore.BSONDecimal128("0.1"), 2, firestore.BSONDecimal128("0.2")},
	})
	f := firestore.FieldOf[string]
	cases := []struct {
		name string
		expr firestore.Expression
		want any
	}{
		{"int32 + int32 is int32", firestore.Add(f("i7"), f("i2")), firestore.BSONInt32(9)},
		{"int32 - int32", firestore.Subtract(f("i2"), f("i7")), firestore.BSONInt32(-5)},
		{"int32 * int32", firestore.Multiply(f("i7"), f("i2")), firestore.BSONInt32(14)},
		{"int32 / int32 truncates", firestore.Divide(f("i7"), f("i2")), firestore.BSONInt32(3)},
		{"int32 mod int32", firestore.Mod(f("i7"), f("i2")), firestore.BSONInt32(1)},
		{"int32 overflow is an error", firestore.IfError(firestore.Add(f("imax"), f("i2")), "overflow"), "overflow"},
		{"int32 + int64 is int64", firestore.Add(f("i7"), f("ten")), int64(17)},
		{"int32 * double is double", firestore.Multiply(f("i7"), f("f")), 17.5},
		{"decimal + int32 is decimal", firestore.Add(f("d15"), f("i2")), firestore.BSONDecimal128("3.5")},
		{"decimal + decimal is exact", firestore.Add(f("d01"), f("d02")), firestore.BSONDecimal128("0.3")},
		{"decimal - int64", firestore.Subtract(f("d15"), f("ten")), firestore.BSONDecimal128("-8.5")},
		{"decimal * double", firestore.Multiply(f("d15"), f("f")), firestore.BSONDecimal128("3.75")},
		{"decimal / decimal", firestore.Divide(f("d3"), f("d15")), firestore.BSONDecimal128("2")},
		{"decimal / int rounds to 34 digits", firestore.Divide(f("d3"), 7), firestore.BSONDecimal128("0.4285714285714285714285714285714286")},
		{"decimal NaN propagates", firestore.Add(f("dnan"), 1), firestore.BSONDecimal128("NaN")},
		// Decimal128 arithmetic is IEEE 754 decimal's (MongoDB's): trailing zeros are kept.
		{"decimal sum keeps trailing zeros", firestore.Add(f("d150"), 1), firestore.BSONDecimal128("2.50")},
		{"decimal difference keeps them", firestore.Subtract(f("d150"), f("d15")), firestore.BSONDecimal128("0.00")},
		{"decimal product adds exponents", firestore.Multiply(f("d150"), f("d150")), firestore.BSONDecimal128("2.2500")},
		{"decimal quotient at the ideal exponent", firestore.Divide(f("d150"), 3), firestore.BSONDecimal128("0.50")},
		{"decimal times a double", firestore.Multiply(f("d150"), 1e-9), firestore.BSONDecimal128("1.50E-9")},
		{"round to more places keeps the value", firestore.RoundToPrecision(f("d150"), 3), firestore.BSONDecimal128("1.50")},
		{"decimal equals across trailing zeros", firestore.Equal(f("d150"), f("d15")), true},
		{"decimal null propagates", firestore.Add(f("d15"), firestore.ConstantOfNull()), nil},
		{"string is a type error", firestore.IfError(firestore.Add(f("d15"), firestore.ConstantOf("x")), "err"), "err"},
		{"abs int32", firestore.Abs(firestore.Subtract(f("i2"), f("i7"))), firestore.BSONInt32(5)},
		{"abs int32 min is an error", firestore.IfError(firestore.Abs(firestore.Subtract(firestore.Subtract(f("i2"), f("imax")), f("i3"))), "overflow"), "overflow"},
		{"abs decimal", firestore.Abs(firestore.Subtract(f("d01"), f("d15"))), firestore.BSONDecimal128("1.4")},
		{"ceil int32 stays int32", firestore.Ceil(f("i7")), firestore.BSONInt32(7)},
		{"round int32 to tens", firestore.RoundToPrecision(f("i7"), -1), firestore.BSONInt32(10)},
		{"floor decimal", firestore.Floor(f("d15")), firestore.BSONDecimal128("1")},
		{"ceil negative decimal", firestore.Ceil(firestore.Subtract(f("d01"), f("d15"))), firestore.BSONDecimal128("-1")},
		{"round decimal half away from zero", firestore.Round(f("d15")), firestore.BSONDecimal128("2")},
		{"round decimal to precision", firestore.RoundToPrecision(firestore.Divide(f("d3"), 7), 3), firestore.BSONDecimal128("0.429")},
		{"trunc decimal", firestore.Trunc(firestore.Subtract(f("d01"), f("d15"))), firestore.BSONDecimal128("-1")},
		{"sqrt int32 is a double", firestore.Sqrt(firestore.Multiply(f("i2"), f("i2"))), 2.0},
		{"pow decimal is a double", firestore.Pow(f("d15"), 2), 2.25},
		{"array sum widens int32", firestore.ArraySum("arr"), int64(3)},
		{"array sum with a decimal is decimal", firestore.ArraySum("arrd"), firestore.BSONDecimal128("2.3")},
		{"decimal NaN equals double NaN", firestore.Equal(f("dnan"), math.NaN()), true},
		{"decimal NaN equals itself", firestore.Equal(f("dnan"), f("dnan")), true},
		{"decimal NaN is not a number's equal", firestore.Equal(f("dnan"), 0), false},
		{"is_nan decimal NaN", firestore.RawBooleanFunction("is_nan", f("dnan")), true},
		{"is_nan int32", firestore.RawBooleanFunction("is_nan", f("i7")), false},
		{"int32 equals int64", firestore.Equal(f("i7"), 7), true},
		{"int32 equals double", firestore.Equal(f("i2"), 2.0), true},
		{"decimal equals double", firestore.Equal(f("d15"), 1.5), true},
		{"decimal equals int64", firestore.Equal(f("d3"), 3), true},
		{"int32 < int64", firestore.LessThan(f("i2"), 3), true},
		{"int32 > double", firestore.GreaterThan(f("i7"), 6.5), true},
		{"decimal < double", firestore.LessThan(f("d01"), 0.2), true},
		{"decimal > int32", firestore.GreaterThan(f("d3"), f("i2")), true},
		{"sum equals decimal", firestore.Equal(firestore.Add(f("d01"), f("d02")), firestore.Divide(f("d3"), 10)), true},
	}
	sel := make([]any, len(cases))
	for i, c := range cases {
		sel[i] = c.expr.As(fmt.Sprintf("c%d", i))
	}
	rows := all(t, ent.Pipeline().Documents([]*firestore.DocumentRef{ent.Doc("bn/n")}).Select(firestore.Fields(sel...)))
	if len(rows) != 1 {
		t.Fatalf("rows = %v", rows)
	}
	for i, c := range cases {
		if got := rows[0][fmt.Sprintf("c%d", i)]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, got, c.want)
		}
	}
	// sum and average count Int32s as integers.
	for i, v := range []any{firestore.BSONInt32(1), firestore.BSONInt32(2), 3} {
		set(t, ent, fmt.Sprintf("bs/%d", i), map[string]any{"k": v})
	}
	rows = all(t, ent.Pipeline().Collection("bs").Aggregate(firestore.Accumulators(firestore.Sum("k").As("s"), firestore.Average("k").As("a"))))
	if len(rows) != 1 || rows[0]["s"] != int64(6) || rows[0]["a"] != 2.0 {
		t.Errorf("sum, average over Int32s = %v, want s 6, a 2", rows)
	}
	// A Decimal128 makes the sum and the average Decimal128s, added exactly.
	set(t, ent, "bs/3", map[string]any{"k": firestore.BSONDecimal128("0.1")})
	set(t, ent, "bs/4", map[string]any{"k": 0.5})
	rows = all(t, ent.Pipeline().Collection("bs").Aggregate(firestore.Accumulators(firestore.Sum("k").As("s"), firestore.Average("k").As("a"))))
	if len(rows) != 1 || rows[0]["s"] != firestore.BSONDecimal128("6.6") || rows[0]["a"] != firestore.BSONDecimal128("1.32") {
		t.Errorf("sum, average with a Decimal128 = %v, want s 6.6, a 1.32 as Decimal128s", rows)
	}
	// Groups and distinct values are by value: 1.50, 1.5, 15E-1 and the
	// double 1.5 are one group, as 2.000, Int32 2 and 2 are.
	for i, v := range []any{firestore.BSONDecimal128("1.50"), firestore.BSONDecimal128("1.5"), firestore.BSONDecimal128("15E-1"), 1.5, firestore.BSONDecimal128("2.000"), firestore.BSONInt32(2), 2} {
		set(t, ent, fmt.Sprintf("bg/%d", i), map[string]any{"k": v})
	}
	rows = all(t, ent.Pipeline().Collection("bg").Aggregate(firestore.Accumulators(firestore.CountAll().As("n")), firestore.WithAggregateGroups("k")).Sort(firestore.Orders(firestore.Ascending(firestore.FieldOf("k")))))
	if len(rows) != 2 || rows[0]["n"] != int64(4) || rows[1]["n"] != int64(3) {
		t.Errorf("groups of equal numbers = %v, want 4 of 1.5 and 3 of 2", rows)
	}
	if rows = all(t, ent.Pipeline().Collection("bg").Distinct(firestore.Fields("k"))); len(rows) != 2 {
		t.Errorf("distinct numbers = %v, want 1.5 and 2", rows)
	}
	set(t, ent, "bs/5", map[string]any{"k": firestore.BSONDecimal128("NaN")})
	rows = all(t, ent.Pipeline().Collection("bs").Aggregate(firestore.Accumulators(firestore.Sum("k").As("s"))))
	if len(rows) != 1 || rows[0]["s"] != firestore.BSONDecimal128("NaN") {
		t.Errorf("sum with a Decimal128 NaN = %v, want NaN", rows)
	}
}

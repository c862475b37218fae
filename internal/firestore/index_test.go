package firestore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/wal"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const ixDB = "projects/ix/databases/(default)"

// randomValue draws from a small pool of mixed-type values so that filters,
// ties and type ordering all get exercised.
func randomValue(r *rand.Rand) *pb.Value {
	switch r.IntN(8) {
	case 0:
		return nullValue()
	case 1:
		return doubleValue(float64(r.IntN(5)) + 0.5)
	case 2:
		return doubleValue(math.NaN())
	case 3:
		return str(fmt.Sprint("s", r.IntN(4)))
	case 4:
		return &pb.Value{ValueType: &pb.Value_BooleanValue{BooleanValue: r.IntN(2) == 0}}
	default:
		return intValue(int64(r.IntN(6)))
	}
}

func randomDoc(r *rand.Rand, path string) *pb.Write {
	fields := map[string]*pb.Value{}
	for _, f := range []string{"a", "b", "c"} {
		if r.IntN(5) > 0 {
			fields[f] = randomValue(r)
		}
	}
	if r.IntN(3) > 0 {
		var elems []*pb.Value
		for range r.IntN(4) {
			elems = append(elems, intValue(int64(r.IntN(4))))
		}
		fields["tags"] = &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: elems}}}
	}
	if r.IntN(2) == 0 {
		fields["m"] = &pb.Value{ValueType: &pb.Value_MapValue{MapValue: &pb.MapValue{Fields: map[string]*pb.Value{"x": intValue(int64(r.IntN(3)))}}}}
	}
	return &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{Name: ixDB + "/documents/" + path, Fields: fields}}}
}

// randomWrites draws n paths (repeats dropped) and writes a random
// document to each, or deletes it one time in deleteOneIn.
func randomWrites(r *rand.Rand, n, deleteOneIn int, path func() string) []*pb.Write {
	var writes []*pb.Write
	seen := map[string]bool{}
	for range n {
		p := path()
		if seen[p] {
			continue
		}
		seen[p] = true
		if r.IntN(deleteOneIn) == 0 {
			writes = append(writes, &pb.Write{Operation: &pb.Write_Delete{Delete: ixDB + "/documents/" + p}})
		} else {
			writes = append(writes, randomDoc(r, p))
		}
	}
	return writes
}

func fieldFilter(field string, op pb.StructuredQuery_FieldFilter_Operator, v *pb.Value) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{FieldFilter: &pb.StructuredQuery_FieldFilter{
		Field: &pb.StructuredQuery_FieldReference{FieldPath: field}, Op: op, Value: v}}}
}

func arrayOf(values ...*pb.Value) *pb.Value {
	return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: values}}}
}

func or(fs ...*pb.StructuredQuery_Filter) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{
		Op: pb.StructuredQuery_CompositeFilter_OR, Filters: fs}}}
}

func and(fs ...*pb.StructuredQuery_Filter) *pb.StructuredQuery_Filter {
	return &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_CompositeFilter{CompositeFilter: &pb.StructuredQuery_CompositeFilter{
		Op: pb.StructuredQuery_CompositeFilter_AND, Filters: fs}}}
}

func randomQuery(r *rand.Rand) (string, *pb.StructuredQuery) {
	q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}}}
	parent := ixDB + "/documents"
	switch r.IntN(4) {
	case 0:
		q.From[0].AllDescendants = true
	case 1:
		parent += "/shops/s1"
	}
	fields := []string{"a", "b", "c", "m.x"}
	ops := []pb.StructuredQuery_FieldFilter_Operator{
		pb.StructuredQuery_FieldFilter_EQUAL, pb.StructuredQuery_FieldFilter_LESS_THAN, pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL,
		pb.StructuredQuery_FieldFilter_GREATER_THAN, pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL, pb.StructuredQuery_FieldFilter_NOT_EQUAL,
	}
	var filters []*pb.StructuredQuery_Filter
	for range r.IntN(3) {
		filters = append(filters, fieldFilter(fields[r.IntN(len(fields))], ops[r.IntN(len(ops))], randomValue(r)))
	}
	list := func(n int, value func() *pb.Value) *pb.Value {
		var values []*pb.Value
		for range n {
			values = append(values, value())
		}
		return arrayOf(values...)
	}
	tag := func() *pb.Value { return intValue(int64(r.IntN(4))) }
	switch r.IntN(8) {
	case 0:
		filters = append(filters, fieldFilter("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, tag()))
	case 1:
		filters = append(filters, fieldFilter("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY, list(1+r.IntN(3), tag)))
	case 2:
		filters = append(filters, fieldFilter(fields[r.IntN(len(fields))], pb.StructuredQuery_FieldFilter_IN, list(1+r.IntN(3), func() *pb.Value { return randomValue(r) })))
	case 3:
		filters = append(filters, fieldFilter(fields[r.IntN(len(fields))], pb.StructuredQuery_FieldFilter_NOT_IN, list(1+r.IntN(3), func() *pb.Value { return randomValue(r) })))
	}
	nameOrder := r.IntN(4) == 0 // ordered by name first: name filters and cursors seek
	if nameOrder || r.IntN(6) == 0 {
		filters = append(filters, fieldFilter("__name__", ops[r.IntN(len(ops))], randomReference(r, parent)))
	}
	switch {
	case len(filters) == 1:
		q.Where = filters[0]
	case len(filters) > 1 && r.IntN(3) == 0:
		q.Where = or(filters...)
	case len(filters) > 2 && r.IntN(2) == 0:
		q.Where = and(filters[0], or(filters[1:]...))
	case len(filters) > 1:
		q.Where = and(filters...)
	}
	if nameOrder {
		dir := pb.StructuredQuery_ASCENDING
		if r.IntN(2) == 0 {
			dir = pb.StructuredQuery_DESCENDING
		}
		q.OrderBy = append(q.OrderBy, &pb.StructuredQuery_Order{Field: &pb.StructuredQuery_FieldReference{FieldPath: "__name__"}, Direction: dir})
	}
	for range r.IntN(3) {
		dir := pb.StructuredQuery_ASCENDING
		if r.IntN(2) == 0 {
			dir = pb.StructuredQuery_DESCENDING
		}
		q.OrderBy = append(q.OrderBy, &pb.StructuredQuery_Order{Field: &pb.StructuredQuery_FieldReference{FieldPath: fields[r.IntN(len(fields))]}, Direction: dir})
	}
	if r.IntN(3) > 0 {
		q.Limit = wrapperspb.Int32(int32(r.IntN(8)))
	}
	if r.IntN(4) == 0 {
		q.Offset = int32(r.IntN(4))
	}
	cursorValue := func() *pb.Value {
		if nameOrder {
			return randomReference(r, parent)
		}
		return randomValue(r)
	}
	if r.IntN(3) == 0 {
		q.StartAt = &pb.Cursor{Values: []*pb.Value{cursorValue()}, Before: r.IntN(2) == 0}
	}
	if r.IntN(4) == 0 {
		q.EndAt = &pb.Cursor{Values: []*pb.Value{cursorValue()}, Before: r.IntN(2) == 0}
	}
	return parent, q
}

// randomID returns a document id of the tests' random paths: mostly
// "dNN", sometimes a numeric id, which sorts before every string id.
func randomID(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return fmt.Sprintf("__id%d__", r.IntN(44)-4)
	}
	return fmt.Sprintf("d%02d", r.IntN(40))
}

// randomReference returns a reference to a document of the collection
// items under parent, or now and then of another collection.
func randomReference(r *rand.Rand, parent string) *pb.Value {
	coll := "/items/"
	if r.IntN(5) == 0 {
		coll = "/other/"
	}
	return &pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: parent + coll + randomID(r)}}
}

func names(docs []*pb.Document) string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Name[strings.Index(d.Name, "/documents/")+len("/documents/"):]
	}
	return strings.Join(out, " ")
}

// TestEngine_RunQueryIndexesMatchScan checks that queries read through the
// indexes return exactly what a full scan returns, while the indexes are
// kept up to date across sets, updates and deletes. The engine is reopened
// from its data folder every few rounds, so that documents read back
// encoded (from the snapshot and from the log) mix with ones written since.
func TestEngine_RunQueryIndexesMatchScan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	r := rand.New(rand.NewPCG(1, 2))
	paths := func() string {
		id := randomID(r)
		switch r.IntN(4) {
		case 0:
			return "shops/s1/items/" + id
		case 1:
			return "shops/s2/items/" + id
		case 2:
			return "other/" + id
		}
		return "items/" + id
	}
	nonEmpty := 0
	var commitTimes []time.Time
	for round := range 30 {
		if round%10 == 5 {
			e = reopen(t, e, round%20 == 5)
			commitTimes = nil // a reopened engine reads only from its start on
		}
		res, err := e.Commit(ctx, identity.Owner, ixDB, randomWrites(r, 25, 5, paths), nil)
		if err != nil {
			t.Fatal(err)
		}
		commitTimes = append(commitTimes, res.Time)
		for i := range 60 {
			var at time.Time // every third query reads at an earlier commit's time
			if i%3 == 2 {
				at = commitTimes[r.IntN(len(commitTimes))]
			}
			q, got, want, ok := indexedAndScanned(t, e, r, at)
			if !ok {
				continue
			}
			if got != "" {
				nonEmpty++
			}
			if got != want {
				t.Fatalf("round %d query %d at %v %v:\n index: %s\n  scan: %s", round, i, at, q, got, want)
			}
		}
	}
	if nonEmpty < 300 {
		t.Errorf("only %d of 1800 queries found documents: the comparison proves little", nonEmpty)
	}
}

// indexedAndScanned runs a random query through RunQuery, which reads the
// indexes, and by a full scan of the documents, at read time at (zero: the
// latest state), and returns the names each found; ok is false when the
// query drawn is invalid (e.g. too many cursor values).
func indexedAndScanned(t *testing.T, e *Engine, r *rand.Rand, at time.Time) (q *pb.StructuredQuery, index, scan string, ok bool) {
	t.Helper()
	parent, q := randomQuery(r)
	p, err := planQuery(parent, q)
	if err != nil {
		return q, "", "", false
	}
	got, _, err := e.RunQuery(context.Background(), identity.Owner, parent, q, Consistency{ReadTime: at})
	if err != nil {
		t.Fatal(err)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if at.IsZero() {
		at = e.lastTime
	}
	w := newWindow(p, 0)
	e.eachDocAt(ixDB, at, func(path string, doc *pb.Document) {
		if w.inScope(path) {
			w.offer(doc)
		}
	})
	return q, names(got), names(w.result()), true
}

// reopen closes e and opens its data folder again, first folding the log
// into the snapshot when fold is set. Every document must come back the same.
func reopen(t *testing.T, e *Engine, fold bool) *Engine {
	t.Helper()
	before := map[string]*pb.Document{}
	e.mu.RLock()
	e.eachDocAt(ixDB, time.Time{}, func(path string, doc *pb.Document) { before[path] = doc })
	e.mu.RUnlock()
	if fold {
		if err := e.log.rewrite(e.dbs, e.lastTime); err != nil {
			t.Fatal(err)
		}
	}
	dir := e.log.dir
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	after := 0
	e.eachDocAt(ixDB, time.Time{}, func(path string, doc *pb.Document) {
		after++
		if !proto.Equal(doc, before[path]) {
			t.Errorf("%s reopened as %v, was %v", path, doc, before[path])
		}
	})
	if after != len(before) {
		t.Errorf("reopened with %d documents, had %d", after, len(before))
	}
	return e
}

// TestEngine_ChooseReadsAboutLimit checks the plan a filtered, ordered,
// limited query gets reads about limit rows, not the collection.
func TestEngine_ChooseReadsAboutLimit(t *testing.T) {
	e, _ := Open(Options{})
	defer e.Close()
	ctx := context.Background()
	for i := 0; i < 5000; i += MaxWritesPerCommit {
		var writes []*pb.Write
		for j := i; j < i+MaxWritesPerCommit; j++ {
			writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
				Name: fmt.Sprintf("%s/documents/items/d%05d", ixDB, j),
				Fields: map[string]*pb.Value{"n": intValue(int64(j)), "group": intValue(int64(j % 10)), "tags": {ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{
					Values: []*pb.Value{intValue(int64(j % 10)), intValue(int64(100 + j%1000))},
				}}}},
			}}})
		}
		if _, err := e.Commit(ctx, identity.Owner, ixDB, writes, nil); err != nil {
			t.Fatal(err)
		}
	}
	orderN := []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}, Direction: pb.StructuredQuery_DESCENDING}}
	tests := []struct {
		name    string
		where   *pb.StructuredQuery_Filter
		order   []*pb.StructuredQuery_Order
		maxRead int
		want    string
	}{
		{"equality seeks an index prefixed by its value", fieldFilter("group", pb.StructuredQuery_FieldFilter_EQUAL, intValue(7)), orderN, 3, "items/d04997 items/d04987"},
		{"common array-contains streams the order", fieldFilter("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, intValue(7)), orderN, 30, "items/d04997 items/d04987"},
		{"rare array-contains reads its range", fieldFilter("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, intValue(107)), orderN, 5, "items/d04007 items/d03007"},
		{"range seeks", fieldFilter("n", pb.StructuredQuery_FieldFilter_LESS_THAN, intValue(100)), orderN, 4, "items/d00099 items/d00098"},
		{"in reads one range per value", fieldFilter("n", pb.StructuredQuery_FieldFilter_IN, arrayOf(intValue(4005), intValue(17), doubleValue(17), intValue(300))), orderN, 3, "items/d04005 items/d00300"},
		{"or of rare values reads their ranges", or(fieldFilter("n", pb.StructuredQuery_FieldFilter_EQUAL, intValue(4005)), fieldFilter("n", pb.StructuredQuery_FieldFilter_EQUAL, intValue(17)),
			fieldFilter("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS, intValue(107))), orderN, 7, "items/d04007 items/d04005"},
		{"rare array-contains-any reads its ranges", fieldFilter("tags", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY, arrayOf(intValue(107), intValue(108))), orderN, 10, "items/d04008 items/d04007"},
		{"no filter", nil, nil, 3, "items/d00000 items/d00001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}}, Where: tt.where, OrderBy: tt.order, Limit: wrapperspb.Int32(2)}
			p, err := planQuery(ixDB+"/documents", q)
			if err != nil {
				t.Fatal(err)
			}
			e.mu.RLock()
			d := e.dbs[ixDB]
			s := choose(p, e.indexesOf(d))
			w := newWindow(p, s.sorted)
			read := 0
			s.run(e.indexesOf(d), func(path string) bool { read++; return !w.inScope(path) || w.offer(d.docs.get(path)) })
			got := names(w.result())
			e.mu.RUnlock()
			if got != tt.want || read > tt.maxRead {
				t.Errorf("got %s reading %d rows, want %s reading at most %d", got, read, tt.want, tt.maxRead)
			}
		})
	}
}

// TestEngine_IndexBuildSeesConcurrentWrites: commits made while an index is
// built, between the batches of documents it reads and while it sorts with
// no lock held, are in the index it installs (sets, deletes, and a clear of
// the database), so queries still match a full scan.
func TestEngine_IndexBuildSeesConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	r := rand.New(rand.NewPCG(3, 4))
	write := func(n int) {
		writes := randomWrites(r, n, 4, func() string { return fmt.Sprintf("items/d%03d", r.IntN(300)) })
		if _, err := e.Commit(ctx, identity.Owner, ixDB, writes, nil); err != nil {
			t.Error(err)
		}
	}
	write(400)
	builds := 0
	defer func(n int) { rowsPerLock = n }(rowsPerLock)
	rowsPerLock = 16 // writers get in while the documents are read, too
	duringIndexBuild = func() {
		builds++
		if builds%7 == 0 {
			if err := e.Clear(ixDB); err != nil {
				t.Error(err)
			}
		}
		write(20)
	}
	defer func() { duringIndexBuild = nil }()
	for i := range 200 {
		q, got, want, ok := indexedAndScanned(t, e, r, time.Time{})
		if ok && got != want {
			t.Fatalf("query %d %v:\n index: %s\n  scan: %s", i, q, got, want)
		}
		if i%20 == 19 {
			write(50) // more documents, so later builds have something to read
		}
	}
	if builds < 10 {
		t.Errorf("only %d indexes built while writes went on: the test proves little", builds)
	}
}

// fullDisk fails every write, as a full disk does.
type fullDisk struct{ wal.File }

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestEngine_FailedCommitLeavesIndexesAsBefore: a commit that cannot be made
// durable is undone in the indexes too, so queries find the documents as
// they were.
func TestEngine_FailedCommitLeavesIndexesAsBefore(t *testing.T) {
	ctx := context.Background()
	e, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 1), setDoc("b", 2)}, nil); err != nil {
		t.Fatal(err)
	}
	query := func(n int64) string {
		t.Helper()
		docs, _, err := e.RunQuery(ctx, identity.Owner, ixDB+"/documents", &pb.StructuredQuery{
			From:  []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items"}},
			Where: fieldFilter("n", pb.StructuredQuery_FieldFilter_EQUAL, intValue(n)),
		}, Consistency{})
		if err != nil {
			t.Fatal(err)
		}
		return names(docs)
	}
	if got := query(1); got != "items/a" { // builds the index on n
		t.Fatalf("n == 1: %q before the failed commit", got)
	}
	e.log.wal.SwapFile(fullDisk{e.log.wal.SwapFile(nil)})
	_, err = e.Commit(ctx, identity.Owner, ixDB, []*pb.Write{setDoc("a", 5), {Operation: &pb.Write_Delete{Delete: ixDB + "/documents/items/b"}}}, nil)
	if errs.KindOf(err) != errs.ResourceExhausted {
		t.Fatalf("commit on a full disk: %v, want RESOURCE_EXHAUSTED", err)
	}
	for n, want := range map[int64]string{1: "items/a", 2: "items/b", 5: ""} {
		if got := query(n); got != want {
			t.Errorf("n == %d after the failed commit: %q, want %q", n, got, want)
		}
	}
}

// TestEngine_SubcollectionQueryReadsItsOwnRows: a query of one collection
// reads the rows of that collection only, however many same-named
// collections other documents have; a collection group query reads them all.
func TestEngine_SubcollectionQueryReadsItsOwnRows(t *testing.T) {
	e, _ := Open(Options{})
	defer e.Close()
	ctx := context.Background()
	var writes []*pb.Write
	for r := range 100 {
		for c := range 10 {
			writes = append(writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
				Name:   fmt.Sprintf("%s/documents/requests/r%03d/comments/c%02d", ixDB, r, c),
				Fields: map[string]*pb.Value{"n": intValue(int64(c)), "isReply": {ValueType: &pb.Value_BooleanValue{BooleanValue: c%2 == 1}}},
			}}})
		}
		if len(writes) == MaxWritesPerCommit {
			if _, err := e.Commit(ctx, identity.Owner, ixDB, writes, nil); err != nil {
				t.Fatal(err)
			}
			writes = nil
		}
	}
	orderN := []*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "n"}, Direction: pb.StructuredQuery_DESCENDING}}
	for _, tt := range []struct {
		name        string
		parent      string
		descendants bool
		where       *pb.StructuredQuery_Filter
		order       []*pb.StructuredQuery_Order
		wantRead    int
		wantFirst   string
	}{
		{"equality, ordered, no limit", "/requests/r042", false, fieldFilter("isReply", pb.StructuredQuery_FieldFilter_EQUAL, &pb.Value{ValueType: &pb.Value_BooleanValue{}}), orderN, 5, "requests/r042/comments/c08"},
		{"ordered", "/requests/r042", false, nil, orderN, 10, "requests/r042/comments/c09"},
		{"by name", "/requests/r000", false, nil, nil, 10, "requests/r000/comments/c00"},
		{"by name, after a document", "/requests/r000", false, fieldFilter("__name__", pb.StructuredQuery_FieldFilter_GREATER_THAN,
			&pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: ixDB + "/documents/requests/r000/comments/c05"}}), nil, 5, "requests/r000/comments/c06"},
		{"by name descending, before a document", "/requests/r000", false, fieldFilter("__name__", pb.StructuredQuery_FieldFilter_LESS_THAN,
			&pb.Value{ValueType: &pb.Value_ReferenceValue{ReferenceValue: ixDB + "/documents/requests/r000/comments/c03"}}),
			[]*pb.StructuredQuery_Order{{Field: &pb.StructuredQuery_FieldReference{FieldPath: "__name__"}, Direction: pb.StructuredQuery_DESCENDING}}, 4, "requests/r000/comments/c02"},
		{"collection group", "", true, fieldFilter("isReply", pb.StructuredQuery_FieldFilter_EQUAL, &pb.Value{ValueType: &pb.Value_BooleanValue{}}), orderN, 500, "requests/r099/comments/c08"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "comments", AllDescendants: tt.descendants}}, Where: tt.where, OrderBy: tt.order}
			p, err := planQuery(ixDB+"/documents"+tt.parent, q)
			if err != nil {
				t.Fatal(err)
			}
			e.mu.RLock()
			defer e.mu.RUnlock()
			d := e.dbs[ixDB]
			s := choose(p, e.indexesOf(d))
			w := newWindow(p, s.sorted)
			read := 0
			s.run(e.indexesOf(d), func(path string) bool { read++; return !w.inScope(path) || w.offer(d.docs.get(path)) })
			got := w.result()
			if read != tt.wantRead || len(got) == 0 || names(got[:1]) != tt.wantFirst {
				t.Errorf("read %d rows, first %s; want %d rows, first %s", read, names(got[:min(1, len(got))]), tt.wantRead, tt.wantFirst)
			}
		})
	}
}

// TestEngine_CountFromIndexMatchesResults: a count the index rows answer
// alone equals the number of documents the query returns.
func TestEngine_CountFromIndexMatchesResults(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	r := rand.New(rand.NewPCG(5, 6))
	var writes []*pb.Write
	for i := range 300 {
		path := []string{"items/", "shops/s1/items/", "shops/s2/items/", "other/"}[r.IntN(4)] + fmt.Sprintf("d%03d", i)
		writes = append(writes, randomDoc(r, path))
		if len(writes) == MaxWritesPerCommit || i == 299 {
			if _, err := e.Commit(ctx, identity.Owner, ixDB, writes, nil); err != nil {
				t.Fatal(err)
			}
			writes = nil
		}
	}
	countAgg := []*pb.StructuredAggregationQuery_Aggregation{{Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}}}
	fastPaths := 0
	for i := range 300 {
		parent := ixDB + "/documents"
		q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "items", AllDescendants: r.IntN(3) == 0}}}
		if r.IntN(3) == 0 {
			parent += "/shops/s1"
		}
		if r.IntN(4) > 0 {
			q.Where = fieldFilter([]string{"a", "b", "c", "m.x"}[r.IntN(4)], pb.StructuredQuery_FieldFilter_EQUAL, randomValue(r))
		}
		if r.IntN(4) == 0 {
			q.Limit = wrapperspb.Int32(int32(r.IntN(10)))
		}
		docs, _, err := e.RunQuery(ctx, identity.Owner, parent, q, Consistency{})
		if err != nil {
			continue // e.g. an equality with NaN
		}
		n, _, counted, err := e.countFromIndex(ctx, identity.Owner, parent, q, countAgg, Consistency{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if counted {
			fastPaths++
			if n != int64(len(docs)) {
				t.Fatalf("query %d %v: counted %d from the index, the query returns %d", i, q, n, len(docs))
			}
		}
		res, _, err := e.Aggregate(ctx, identity.Owner, parent, q, countAgg, Consistency{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res["field_1"].GetIntegerValue(); got != int64(len(docs)) {
			t.Fatalf("query %d %v: count %d, the query returns %d", i, q, got, len(docs))
		}
	}
	if fastPaths < 150 {
		t.Errorf("only %d of 300 counts came from the index: the test proves little", fastPaths)
	}
}

// TestEngine_ListingIndexMatchesScan checks that listing documents (with
// and without missing ones) and collection ids through the
// collection-order index, a page at a time, gives exactly what a full scan
// gives, as documents and subcollections come and go.
func TestEngine_ListingIndexMatchesScan(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{})
	defer e.Close()
	r := rand.New(rand.NewPCG(7, 8))
	path := func() string {
		switch r.IntN(5) {
		case 0:
			return "items/" + randomID(r) + "/notes/" + randomID(r)
		case 1:
			return "items/" + randomID(r) + "/notes/n/deep/" + randomID(r)
		case 2:
			return "shops/" + randomID(r) + "/items/" + randomID(r)
		case 3:
			return []string{"a", "b", "items0", "itemsz"}[r.IntN(4)] + "/" + randomID(r)
		}
		return "items/" + randomID(r)
	}
	listed := 0
	for round := range 20 {
		if _, err := e.Commit(ctx, identity.Owner, ixDB, randomWrites(r, 30, 4, path), nil); err != nil {
			t.Fatal(err)
		}
		for _, parent := range []string{"", "/items/d01", "/items/" + randomID(r), "/shops/" + randomID(r), "/items/d02/notes/n"} {
			for _, coll := range []string{"items", "notes", "deep", "a"} {
				for _, missing := range []bool{false, true} {
					var all, paged []*pb.Document
					e.mu.RLock()
					n, _ := ParseName(ixDB + "/documents" + parent)
					all = e.scanDocuments(Name{Database: ixDB, Path: append(n.Path, coll)}, "", missing, time.Time{}, 0)
					e.mu.RUnlock()
					size := 1 + r.IntN(4)
					paged = allPages(t, func(token string) ([]*pb.Document, string, error) {
						return e.ListDocuments(ctx, identity.Owner, ixDB+"/documents"+parent, coll, size, token, missing, Consistency{})
					})
					if got, want := names(paged), names(all); got != want {
						t.Fatalf("round %d: %s/%s showMissing=%v in pages of %d:\n index: %s\n  scan: %s", round, parent, coll, missing, size, got, want)
					}
					for i := range paged {
						if !proto.Equal(paged[i], all[i]) {
							t.Fatalf("round %d: %s listed as %v, is %v", round, paged[i].Name, paged[i], all[i])
						}
					}
					listed += len(paged)
				}
			}
			size := 1 + r.IntN(3)
			paged := allPages(t, func(token string) ([]string, string, error) {
				return e.CollectionIDs(identity.Owner, ixDB+"/documents"+parent, size, token)
			})
			e.mu.RLock()
			prefix := strings.TrimPrefix(parent, "/")
			if prefix != "" {
				prefix += "/"
			}
			want := e.scanCollectionIDs(ixDB, prefix, "")
			e.mu.RUnlock()
			if strings.Join(paged, " ") != strings.Join(want, " ") {
				t.Fatalf("round %d: collections of %q in pages of %d: index %v, scan %v", round, parent, size, paged, want)
			}
		}
	}
	if listed < 1000 {
		t.Errorf("only %d documents listed: the comparison proves little", listed)
	}
}

// allPages reads every page page gives, each after the last's next token,
// until one has none.
func allPages[T any](t *testing.T, page func(token string) ([]T, string, error)) []T {
	t.Helper()
	var all []T
	token := ""
	for {
		items, next, err := page(token)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
		if next == "" {
			return all
		}
		token = next
	}
}

// TestEngine_CountWhileCollectionIndexBuilds: while the collection-order
// index of a data folder just opened is being built, a count of a whole
// collection is answered from the document table, without waiting, and
// agrees with the count the index gives once built.
func TestEngine_CountWhileCollectionIndexBuilds(t *testing.T) {
	ctx := context.Background()
	e, _ := Open(Options{Dir: t.TempDir()})
	r := rand.New(rand.NewPCG(9, 10))
	paths := func() string {
		return []string{"items/", "shops/s1/items/", "items/d01/notes/"}[r.IntN(3)] + randomID(r)
	}
	if _, err := e.Commit(ctx, identity.Owner, ixDB, randomWrites(r, 300, 1000, paths), nil); err != nil {
		t.Fatal(err)
	}
	countAgg := []*pb.StructuredAggregationQuery_Aggregation{{Operator: &pb.StructuredAggregationQuery_Aggregation_Count_{Count: &pb.StructuredAggregationQuery_Aggregation_Count{}}}}
	type count struct {
		parent, coll string
		limit        int32
	}
	counts := []count{{"", "items", 0}, {"/shops/s1", "items", 0}, {"/items/d01", "notes", 0}, {"", "items", 7}, {"", "none", 0}}
	countAll := func() []int64 {
		var out []int64
		for _, c := range counts {
			q := &pb.StructuredQuery{From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: c.coll}}}
			if c.limit > 0 {
				q.Limit = wrapperspb.Int32(c.limit)
			}
			res, _, err := e.Aggregate(ctx, identity.Owner, ixDB+"/documents"+c.parent, q, countAgg, Consistency{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res["field_1"].GetIntegerValue())
		}
		return out
	}
	want := countAll()
	if want[0] == 0 || want[1] == 0 || want[2] == 0 || want[3] != 7 {
		t.Fatalf("counts %v: the test proves little", want)
	}
	e = reopen(t, e, false)
	defer e.Close()
	building, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	duringIndexBuild = func() { once.Do(func() { close(building); <-release }) }
	defer func() { duringIndexBuild = nil }()
	built := make(chan struct{})
	go func() { e.BuildIndexes(); close(built) }()
	<-building
	during := make(chan []int64)
	go func() { during <- countAll() }()
	select {
	case got := <-during:
		if !slices.Equal(got, want) {
			t.Errorf("counted %v while the index was built, want %v", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the count waited for the index being built")
	}
	close(release)
	<-built
	if got := countAll(); !slices.Equal(got, want) {
		t.Errorf("counted %v from the built index, want %v", got, want)
	}
}

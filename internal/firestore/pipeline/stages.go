package pipeline

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// stage maps the rows of the stage before it.
type stage interface {
	apply(r *run, outer *scope, in []*row) ([]*row, error)
}

// scopeFor is the scope an expression over row sees.
func scopeFor(r *run, outer *scope, rw *row) *scope {
	s := &scope{run: r, row: rw}
	if outer != nil {
		s.vars = outer.vars
		if outer.row != nil && len(outer.row.vars) > 0 {
			s.vars = maps.Clone(outer.vars)
			if s.vars == nil {
				s.vars = map[string]val{}
			}
			maps.Copy(s.vars, outer.row.vars)
		}
		s.vars = shadowed(s.vars, rw)
	}
	return s
}

// shadowed drops from an enclosing pipeline's variables those the row
// defines itself: the innermost definition wins.
func shadowed(vars map[string]val, rw *row) map[string]val {
	if rw == nil || len(rw.vars) == 0 || len(vars) == 0 {
		return vars
	}
	var out map[string]val
	for name := range rw.vars {
		if _, ok := vars[name]; ok {
			if out == nil {
				out = maps.Clone(vars)
			}
			delete(out, name)
		}
	}
	if out == nil {
		return vars
	}
	return out
}

// outputError is the request error an error value reaching a stage's
// output becomes.
func outputError(x val) error { return x.err.asError() }

type whereStage struct {
	cond expr
	raw  *pb.Value
}

// apply keeps the rows whose condition is true.
func (st *whereStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	out := in[:0:0]
	for _, rw := range in {
		x := st.cond.eval(scopeFor(r, outer, rw))
		if x.v != nil && kindOf(x.v) == kBoolean && x.v.GetBooleanValue() {
			out = append(out, rw)
		}
	}
	return out, nil
}

// selectStage is select (only the named fields) or add_fields (keep is
// true: the row's fields and the named ones). An absent value sets no
// field (and add_fields removes it).
type selectStage struct {
	fields []named
	keep   bool
}

func (st *selectStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	out := make([]*row, 0, len(in))
	m := r.meter()
	for _, rw := range in {
		s := scopeFor(r, outer, rw)
		fields := map[string]*pb.Value{}
		if st.keep {
			fields = maps.Clone(rw.fields)
			if fields == nil {
				fields = map[string]*pb.Value{}
			}
		}
		for _, f := range st.fields {
			if f.alias == "__name__" && f.raw.GetFieldReferenceValue() == "__name__" {
				continue // the document's name stays its name, not an output field
			}
			x := f.x.eval(s)
			switch {
			case x.isError():
				return nil, outputError(x)
			case x.isAbsent():
				if st.keep {
					removePath(fields, f.path)
				}
			default:
				setPath(fields, f.path, x.v)
			}
		}
		next := *rw
		next.fields = fields
		out = append(out, &next)
		if err := m.add(&next); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// removeStage is remove_fields. Removing __name__ takes the row's document
// name away, so that an insert after it generates a new id.
type removeStage struct{ paths []firestore.FieldPath }

func (st *removeStage) apply(_ *run, _ *scope, in []*row) ([]*row, error) {
	out := make([]*row, 0, len(in))
	for _, rw := range in {
		fields := maps.Clone(rw.fields)
		next := *rw
		for _, p := range st.paths {
			if len(p) == 1 && p[0] == "__name__" {
				next.name = ""
				continue
			}
			removePath(fields, p)
		}
		next.fields = fields
		out = append(out, &next)
	}
	return out, nil
}

// setPath sets a field in fields (owned by the caller), copying the maps
// on the way rather than changing them: rows share their values.
func setPath(fields map[string]*pb.Value, path firestore.FieldPath, v *pb.Value) {
	if len(path) == 1 {
		fields[path[0]] = v
		return
	}
	var child map[string]*pb.Value
	if cur, ok := fields[path[0]]; ok && kindOf(cur) == kMap {
		child = maps.Clone(cur.GetMapValue().GetFields())
	}
	if child == nil {
		child = map[string]*pb.Value{}
	}
	setPath(child, path[1:], v)
	fields[path[0]] = mapV(child)
}

func removePath(fields map[string]*pb.Value, path firestore.FieldPath) {
	if len(path) == 1 {
		delete(fields, path[0])
		return
	}
	cur, ok := fields[path[0]]
	if !ok || kindOf(cur) != kMap {
		return
	}
	child := maps.Clone(cur.GetMapValue().GetFields())
	removePath(child, path[1:])
	fields[path[0]] = mapV(child)
}

type sortStage struct{ keys []ordering }

// apply sorts by the keys in Firestore's value order, absent first; ties
// keep their order.
func (st *sortStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	keys := make([][]val, len(in))
	for i, rw := range in {
		s := scopeFor(r, outer, rw)
		keys[i] = make([]val, len(st.keys))
		for j, k := range st.keys {
			x := k.x.eval(s)
			if x.isError() {
				return nil, outputError(x)
			}
			keys[i][j] = x
		}
	}
	idx := make([]int, len(in))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		for j, k := range st.keys {
			c := compareVals(keys[idx[a]][j], keys[idx[b]][j])
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	out := make([]*row, len(in))
	for i, j := range idx {
		out[i] = in[j]
	}
	return out, nil
}

// compareVals orders values with absent before every value.
func compareVals(a, b val) int {
	switch {
	case a.v == nil && b.v == nil:
		return 0
	case a.v == nil:
		return -1
	case b.v == nil:
		return 1
	}
	return firestore.Compare(a.v, b.v)
}

// sliceStage is limit (offset -1) or offset (limit -1).
type sliceStage struct{ limit, offset int64 }

func (st *sliceStage) apply(_ *run, _ *scope, in []*row) ([]*row, error) {
	if st.offset >= 0 {
		if st.offset >= int64(len(in)) {
			return nil, nil
		}
		return in[st.offset:], nil
	}
	if st.limit < int64(len(in)) {
		return in[:st.limit], nil
	}
	return in, nil
}

type namedAcc struct {
	alias string
	path  firestore.FieldPath
	make  func([]expr) accumulator
	args  []expr
}

// aggregateStage groups rows by the group fields and folds each group
// with the accumulators; with no accumulator it is distinct.
type aggregateStage struct {
	accs   []namedAcc
	groups []named
}

type group struct {
	key  []*pb.Value
	accs []accumulator
}

func (st *aggregateStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	f := st.folder(r, outer)
	for _, rw := range in {
		if err := f.add(rw); err != nil {
			return nil, err
		}
	}
	return f.rows(), nil
}

// folder folds rows into an aggregate stage's groups one at a time, so
// a source can stream them in (collectionSource does).
type folder struct {
	st    *aggregateStage
	r     *run
	outer *scope
	byKey map[string]*group
	order []*group
	// The row's group values and their key are built in buffers reused
	// from row to row; only a new group keeps copies.
	vals []*pb.Value
	k    []byte
	// s is the one scope of every row when there is no outer scope: the
	// accumulators keep values, never the scope.
	s *scope
}

func (st *aggregateStage) folder(r *run, outer *scope) *folder {
	return &folder{st: st, r: r, outer: outer, byKey: map[string]*group{}, vals: make([]*pb.Value, len(st.groups))}
}

func (f *folder) newGroup(key []*pb.Value) *group {
	g := &group{key: key}
	for _, a := range f.st.accs {
		g.accs = append(g.accs, a.make(a.args))
	}
	return g
}

func (f *folder) add(rw *row) error {
	var s *scope
	if f.outer == nil {
		if f.s == nil {
			f.s = &scope{}
		}
		*f.s = scope{run: f.r, row: rw}
		s = f.s
	} else {
		s = scopeFor(f.r, f.outer, rw)
	}
	f.k = f.k[:0]
	for i, gf := range f.st.groups {
		x := gf.x.eval(s)
		if x.isError() {
			return outputError(x)
		}
		f.vals[i] = x.v
		if f.vals[i] == nil {
			f.vals[i] = nullV
		}
		f.k = appendKey(f.k, f.vals[i])
	}
	g, ok := f.byKey[string(f.k)]
	if !ok {
		g = f.newGroup(slices.Clone(f.vals))
		f.byKey[string(f.k)] = g
		f.order = append(f.order, g)
	}
	for _, a := range g.accs {
		if err := a.add(s); err != nil {
			return err.asError()
		}
	}
	return nil
}

// rows is one row per group, in the order of their keys.
func (f *folder) rows() []*row {
	st, order := f.st, f.order
	if len(st.groups) == 0 && len(order) == 0 && len(st.accs) > 0 {
		order = append(order, f.newGroup(nil))
	}
	sort.SliceStable(order, func(i, j int) bool {
		for k := range order[i].key {
			if c := firestore.Compare(order[i].key[k], order[j].key[k]); c != 0 {
				return c < 0
			}
		}
		return false
	})
	out := make([]*row, 0, len(order))
	for _, g := range order {
		fields := map[string]*pb.Value{}
		for i, gf := range st.groups {
			setPath(fields, gf.path, g.key[i])
		}
		for i, a := range st.accs {
			setPath(fields, a.path, g.accs[i].result())
		}
		out = append(out, &row{fields: fields})
	}
	return out
}

var measures = map[string]bool{"euclidean": true, "cosine": true, "dot_product": true}

type nearestStage struct {
	field         expr
	query         []float64
	measure       string
	limit         int64
	distanceField firestore.FieldPath
}

// apply ranks the rows whose field is a vector of the query's dimension
// by distance (dot_product: largest first).
func (st *nearestStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	type hit struct {
		rw   *row
		dist float64
	}
	var hits []hit
	for _, rw := range in {
		x := st.field.eval(scopeFor(r, outer, rw))
		if x.v == nil || kindOf(x.v) != kVector {
			continue
		}
		vec := vectorOf(x.v)
		if len(vec) != len(st.query) {
			continue
		}
		var d float64
		switch st.measure {
		case "euclidean":
			for i := range vec {
				d += (vec[i] - st.query[i]) * (vec[i] - st.query[i])
			}
			d = math.Sqrt(d)
		case "cosine":
			n := math.Sqrt(dotProduct(vec, vec)) * math.Sqrt(dotProduct(st.query, st.query))
			if n == 0 {
				continue
			}
			d = 1 - dotProduct(vec, st.query)/n
		default:
			d = dotProduct(vec, st.query)
		}
		hits = append(hits, hit{rw, d})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if st.measure == "dot_product" {
			return hits[i].dist > hits[j].dist
		}
		return hits[i].dist < hits[j].dist
	})
	if st.limit >= 0 && int64(len(hits)) > st.limit {
		hits = hits[:st.limit]
	}
	out := make([]*row, len(hits))
	for i, h := range hits {
		rw := h.rw
		if st.distanceField != nil {
			next := *rw
			next.fields = maps.Clone(rw.fields)
			if next.fields == nil {
				next.fields = map[string]*pb.Value{}
			}
			setPath(next.fields, st.distanceField, doubleV(h.dist))
			rw = &next
		}
		out[i] = rw
	}
	return out, nil
}

type sampleStage struct {
	mode string
	n    int64
	p    float64
}

func (st *sampleStage) apply(_ *run, _ *scope, in []*row) ([]*row, error) {
	if st.mode == "percent" {
		var out []*row
		for _, rw := range in {
			if rand.Float64() < st.p {
				out = append(out, rw)
			}
		}
		return out, nil
	}
	if st.n >= int64(len(in)) {
		return in, nil
	}
	picked := rand.Perm(len(in))[:st.n]
	slices.Sort(picked)
	out := make([]*row, len(picked))
	for i, j := range picked {
		out[i] = in[j]
	}
	return out, nil
}

type unionStage struct{ other *compiled }

func (st *unionStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	more, err := r.execute(st.other, outer)
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(in), more...), nil
}

// unnestStage makes a row per element of an array (with the element under
// alias, and its position under index when asked); a row whose value is
// absent, null or an empty array is dropped, and one that is not an
// array passes with the value under alias.
type unnestStage struct {
	x            expr
	alias, index firestore.FieldPath
}

func (st *unnestStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	var out []*row
	m := r.meter()
	emit := func(rw *row, v *pb.Value, i int) error {
		next := *rw
		next.fields = maps.Clone(rw.fields)
		if next.fields == nil {
			next.fields = map[string]*pb.Value{}
		}
		setPath(next.fields, st.alias, v)
		if st.index != nil {
			setPath(next.fields, st.index, intV(int64(i)))
		}
		out = append(out, &next)
		return m.add(&next)
	}
	for _, rw := range in {
		x := st.x.eval(scopeFor(r, outer, rw))
		switch {
		case x.isError():
			return nil, outputError(x)
		case x.v == nil || isNull(x.v):
		case kindOf(x.v) == kArray:
			for i, el := range x.v.GetArrayValue().GetValues() {
				if err := emit(rw, el, i); err != nil {
					return nil, err
				}
			}
		default:
			if err := emit(rw, x.v, 0); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

type replaceStage struct{ x expr }

func (st *replaceStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	out := make([]*row, 0, len(in))
	m := r.meter()
	for _, rw := range in {
		x := st.x.eval(scopeFor(r, outer, rw))
		switch {
		case x.isError():
			return nil, outputError(x)
		case x.v == nil || kindOf(x.v) != kMap:
			return nil, invalid("replace_with(...) requires a map but got `%s`.", gotName(x))
		}
		out = append(out, &row{fields: x.v.GetMapValue().GetFields(), vars: rw.vars})
		if err := m.add(out[len(out)-1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// letStage binds variables per row for the stages after it.
type letStage struct{ vars []named }

func (st *letStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	out := make([]*row, 0, len(in))
	for _, rw := range in {
		s := scopeFor(r, outer, rw)
		vars := maps.Clone(rw.vars)
		if vars == nil {
			vars = map[string]val{}
		}
		for _, v := range st.vars {
			vars[v.alias] = v.x.eval(s)
		}
		next := *rw
		next.vars = vars
		out = append(out, &next)
	}
	return out, nil
}

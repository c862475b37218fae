package pipeline

import (
	"math"
	"sort"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// compiled is a decoded pipeline: a source and the stages after it.
type compiled struct {
	source source
	stages []stage
}

// maxStages bounds a pipeline's length, subqueries included.
const maxStages = 1000

// compilePipeline decodes a pipeline; nested pipelines (subqueries, which
// may start from a subcollection of the current row) are decoded with
// nested true.
func compilePipeline(p *pb.Pipeline, nested bool, depth int) (*compiled, error) {
	if depth > maxDepth {
		return nil, invalid("Pipeline is nested too deeply (more than %d levels).", maxDepth)
	}
	st := p.GetStages()
	if len(st) == 0 {
		return nil, invalid("A pipeline must have at least one stage.")
	}
	if len(st) > maxStages {
		return nil, invalid("A pipeline may have at most %d stages.", maxStages)
	}
	src, err := compileSource(st[0], nested, depth)
	if err != nil {
		return nil, err
	}
	out := &compiled{source: src}
	for _, s := range st[1:] {
		if _, isSource := sources[s.GetName()]; isSource {
			return nil, invalid("Stage %s must be the first stage of a pipeline.", s.GetName())
		}
		x, err := compileStage(s, depth)
		if err != nil {
			return nil, err
		}
		out.stages = append(out.stages, x)
	}
	return out, nil
}

var sources = map[string]bool{"collection": true, "collection_group": true, "database": true, "documents": true, "literals": true, "subcollection": true}

func compileSource(s *pb.Pipeline_Stage, nested bool, depth int) (source, error) {
	args := s.GetArgs()
	switch s.GetName() {
	case "collection":
		if len(args) != 1 || args[0].GetReferenceValue() == "" {
			return nil, invalid("collection(...) takes one collection path.")
		}
		segs := splitPath(args[0].GetReferenceValue())
		if len(segs)%2 != 1 || hasEmpty(segs) {
			return nil, invalid("Invalid collection path %q.", args[0].GetReferenceValue())
		}
		return &collectionSource{parent: segs[:len(segs)-1], id: segs[len(segs)-1]}, nil
	case "collection_group":
		if len(args) != 2 || kindOf(args[1]) != kString || args[1].GetStringValue() == "" {
			return nil, invalid("collection_group(...) takes an ancestor and a collection id.")
		}
		anc := splitPath(args[0].GetReferenceValue())
		if len(anc)%2 != 0 || hasEmpty(anc) || strings.Contains(args[1].GetStringValue(), "/") {
			return nil, invalid("Invalid collection group %q under %q.", args[1].GetStringValue(), args[0].GetReferenceValue())
		}
		return &collectionSource{parent: anc, id: args[1].GetStringValue(), group: true}, nil
	case "database":
		if len(args) != 0 {
			return nil, invalid("database() takes no arguments.")
		}
		return &collectionSource{group: true}, nil
	case "documents":
		src := &documentsSource{}
		for _, a := range args {
			segs := splitPath(a.GetReferenceValue())
			if len(segs) == 0 || len(segs)%2 != 0 || hasEmpty(segs) {
				return nil, invalid("Invalid document path %q.", a.GetReferenceValue())
			}
			src.paths = append(src.paths, strings.Join(segs, "/"))
		}
		return src, nil
	case "literals":
		src := &literalsSource{}
		for _, a := range args {
			if kindOf(a) != kMap {
				return nil, invalid("literals(...) takes maps.")
			}
			x, err := compileExpr(a, depth+1)
			if err != nil {
				return nil, err
			}
			src.maps = append(src.maps, x)
		}
		return src, nil
	case "subcollection":
		if !nested {
			return nil, invalid("subcollection(...) can only start a subquery.")
		}
		if len(args) != 1 || kindOf(args[0]) != kString || args[0].GetStringValue() == "" {
			return nil, invalid("subcollection(...) takes a collection id.")
		}
		return &collectionSource{id: args[0].GetStringValue(), sub: true}, nil
	}
	if _, known := stageKinds[s.GetName()]; known {
		return nil, invalid("A pipeline must start with a source stage (collection, collection_group, database, documents or literals), not %s.", s.GetName())
	}
	return nil, unknownStage(s.GetName())
}

func unknownStage(name string) error {
	return invalid("Unrecognized pipeline stage %q.", name)
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func hasEmpty(segs []string) bool {
	for _, s := range segs {
		if s == "" {
			return true
		}
	}
	return false
}

// stageKinds are the stages after the source, by name.
var stageKinds map[string]func(s *pb.Pipeline_Stage, depth int) (stage, error)

func init() {
	stageKinds = map[string]func(s *pb.Pipeline_Stage, depth int) (stage, error){
		"where": func(s *pb.Pipeline_Stage, depth int) (stage, error) {
			args, err := exprArgs(s, 1, 1, depth)
			if err != nil {
				return nil, err
			}
			return &whereStage{cond: args[0], raw: s.GetArgs()[0]}, nil
		},
		"select": func(s *pb.Pipeline_Stage, depth int) (stage, error) {
			f, err := projection(s, depth)
			return &selectStage{fields: f}, err
		},
		"add_fields": func(s *pb.Pipeline_Stage, depth int) (stage, error) {
			f, err := projection(s, depth)
			return &selectStage{fields: f, keep: true}, err
		},
		"remove_fields": func(s *pb.Pipeline_Stage, depth int) (stage, error) {
			if len(s.GetArgs()) == 0 {
				return nil, invalid("remove_fields(...) takes at least one field.")
			}
			st := &removeStage{}
			for _, a := range s.GetArgs() {
				if a.GetFieldReferenceValue() == "" {
					return nil, invalid("remove_fields(...) takes field references.")
				}
				p, err := parseField(a.GetFieldReferenceValue())
				if err != nil {
					return nil, err
				}
				st.paths = append(st.paths, p)
			}
			return st, nil
		},
		"sort": func(s *pb.Pipeline_Stage, depth int) (stage, error) {
			keys, err := orderings(s.GetArgs(), depth)
			return &sortStage{keys: keys}, err
		},
		"limit": func(s *pb.Pipeline_Stage, _ int) (stage, error) {
			n, err := count(s, "limit")
			return &sliceStage{limit: n, offset: -1}, err
		},
		"offset": func(s *pb.Pipeline_Stage, _ int) (stage, error) {
			n, err := count(s, "offset")
			return &sliceStage{offset: n, limit: -1}, err
		},
		"aggregate": compileAggregate,
		"distinct": func(s *pb.Pipeline_Stage, depth int) (stage, error) {
			f, err := projection(s, depth)
			if err == nil && len(f) == 0 {
				err = invalid("distinct(...) takes at least one field.")
			}
			return &aggregateStage{groups: f}, err
		},
		"find_nearest": compileNearest,
		"sample":       compileSample,
		"union":        compileUnion,
		"unnest":       compileUnnest,
		"replace_with": compileReplace,
		"let":          compileLet,
		"search":       compileSearch,
		"update":       compileDML,
		"delete":       compileDML,
		"insert":       compileDML,
		"upsert":       compileDML,
	}
}

func compileStage(s *pb.Pipeline_Stage, depth int) (stage, error) {
	f, ok := stageKinds[s.GetName()]
	if !ok {
		return nil, unknownStage(s.GetName())
	}
	return f(s, depth)
}

// exprArgs compiles a stage's arguments as expressions.
func exprArgs(s *pb.Pipeline_Stage, min, max int, depth int) ([]expr, error) {
	args := s.GetArgs()
	if len(args) < min || len(args) > max {
		return nil, invalid("Stage %s takes %d to %d arguments, but %d were provided.", s.GetName(), min, max, len(args))
	}
	out := make([]expr, len(args))
	for i, a := range args {
		x, err := compileExpr(a, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// named is an output field and the expression that computes it.
type named struct {
	alias string
	path  firestore.FieldPath
	x     expr
	raw   *pb.Value
}

// projection compiles a stage's one map argument of alias → expression,
// in alias order.
func projection(s *pb.Pipeline_Stage, depth int) ([]named, error) {
	if len(s.GetArgs()) != 1 {
		return nil, invalid("Stage %s takes one map of fields.", s.GetName())
	}
	if arg := s.GetArgs()[0]; arg.GetMapValue() == nil && kindOf(arg) != kMap {
		return nil, invalid("Expected fields to be MAP_VALUE, but was %s.", valueField(arg))
	}
	return namedMap(s.GetArgs()[0].GetMapValue().GetFields(), depth, false)
}

// valueField is the name of the field of Value that v sets, as
// production's argument errors spell it (MAP_VALUE, FIELD_REFERENCE_VALUE).
func valueField(v *pb.Value) string {
	m := v.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("value_type")); fd != nil {
		return strings.ToUpper(string(fd.Name()))
	}
	return "VALUE_TYPE_NOT_SET"
}

// namedMap compiles a map of alias → expression, in alias order. An output
// field's alias is a field path: select('a.b') sets b inside a, and
// backquotes quote a segment (production reads aliases so since March
// 2026, when the SDKs' tests changed to nested results). A variable's
// alias (vars) is its name as written.
func namedMap(fields map[string]*pb.Value, depth int, vars bool) ([]named, error) {
	aliases := make([]string, 0, len(fields))
	for k := range fields {
		aliases = append(aliases, k)
	}
	sort.Strings(aliases)
	out := make([]named, 0, len(aliases))
	for _, a := range aliases {
		path := firestore.FieldPath{a}
		if !vars {
			var err error
			if path, err = parseField(a); err != nil {
				return nil, err
			}
		}
		x, err := compileExpr(fields[a], depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, named{alias: a, path: path, x: x, raw: fields[a]})
	}
	return out, nil
}

// ordering is one sort key.
type ordering struct {
	x    expr
	raw  *pb.Value
	desc bool
}

func orderings(args []*pb.Value, depth int) ([]ordering, error) {
	if len(args) == 0 {
		return nil, invalid("sort(...) takes at least one ordering.")
	}
	var out []ordering
	for _, a := range args {
		m := a.GetMapValue().GetFields()
		e, ok := m["expression"]
		if !ok {
			return nil, invalid("A sort ordering must have an expression.")
		}
		dir := m["direction"].GetStringValue()
		if dir != "ascending" && dir != "descending" {
			return nil, invalid("A sort direction must be \"ascending\" or \"descending\", not %q.", dir)
		}
		x, err := compileExpr(e, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, ordering{x: x, raw: e, desc: dir == "descending"})
	}
	return out, nil
}

// count reads a limit or offset argument.
func count(s *pb.Pipeline_Stage, name string) (int64, error) {
	args := s.GetArgs()
	if len(args) != 1 {
		return 0, invalid("%s(...) takes one integer.", name)
	}
	var n int64
	switch t := args[0].GetValueType().(type) {
	case *pb.Value_IntegerValue:
		n = t.IntegerValue
	case *pb.Value_DoubleValue:
		if t.DoubleValue != math.Trunc(t.DoubleValue) {
			return 0, invalid("%s(...) takes an integer.", name)
		}
		n = int64(t.DoubleValue)
	default:
		return 0, invalid("%s(...) takes an integer.", name)
	}
	if n < 0 {
		return 0, invalid("%s(...) must not be negative.", name)
	}
	return n, nil
}

func compileAggregate(s *pb.Pipeline_Stage, depth int) (stage, error) {
	args := s.GetArgs()
	if len(args) < 1 || len(args) > 2 {
		return nil, invalid("aggregate(...) takes accumulators and optional groups.")
	}
	st := &aggregateStage{}
	accs := args[0].GetMapValue().GetFields()
	aliases := make([]string, 0, len(accs))
	for k := range accs {
		aliases = append(aliases, k)
	}
	sort.Strings(aliases)
	for _, alias := range aliases {
		f := accs[alias].GetFunctionValue()
		if f == nil {
			return nil, invalid("Accumulator %q must be an aggregate function.", alias)
		}
		def, ok := aggregates[f.GetName()]
		if !ok {
			if _, scalar := catalogue[f.GetName()]; scalar {
				return nil, invalid("Function %s(...) is not an aggregate function.", f.GetName())
			}
			return nil, invalid("Function %s(...) is not supported.", f.GetName())
		}
		n := len(f.GetArgs())
		if n < def.min || n > def.max {
			return nil, invalid("Function %s(...) takes [%d..%d] argument(s), but %d were provided.", f.GetName(), def.min, def.max, n)
		}
		var xs []expr
		for _, a := range f.GetArgs() {
			x, err := compileExpr(a, depth+1)
			if err != nil {
				return nil, err
			}
			xs = append(xs, x)
		}
		path, err := firestore.ParseFieldPath(alias)
		if err != nil || len(path) == 0 {
			path = firestore.FieldPath{alias}
		}
		st.accs = append(st.accs, namedAcc{alias: alias, path: path, make: def.make, args: xs})
	}
	if len(args) == 2 {
		g, err := namedMap(args[1].GetMapValue().GetFields(), depth, false)
		if err != nil {
			return nil, err
		}
		st.groups = g
	}
	if len(st.accs) == 0 { // groups alone are distinct's job: production refuses them
		return nil, invalid("aggregate(...) takes at least one accumulator.")
	}
	return st, nil
}

func compileNearest(s *pb.Pipeline_Stage, depth int) (stage, error) {
	args := s.GetArgs()
	if len(args) != 3 {
		return nil, invalid("find_nearest(...) takes a field, a vector and a distance measure.")
	}
	field, err := compileExpr(args[0], depth+1)
	if err != nil {
		return nil, err
	}
	query := vectorOf(args[1])
	if len(query) == 0 {
		return nil, invalid("find_nearest(...) takes a non-empty vector to search for.")
	}
	measure := args[2].GetStringValue()
	if _, ok := measures[measure]; !ok {
		return nil, invalid("find_nearest(...) does not know the distance measure %q.", measure)
	}
	st := &nearestStage{field: field, query: query, measure: measure, limit: -1}
	opts := s.GetOptions()
	if l, ok := opts["limit"]; ok {
		if kindOf(l) != kInt || l.GetIntegerValue() <= 0 {
			return nil, invalid("find_nearest(...) limit must be a positive integer.")
		}
		st.limit = l.GetIntegerValue()
	}
	if d, ok := opts["distance_field"]; ok {
		name := d.GetFieldReferenceValue()
		if name == "" {
			name = d.GetStringValue()
		}
		p, err := parseField(name)
		if err != nil {
			return nil, err
		}
		st.distanceField = p
	}
	return st, nil
}

func compileSample(s *pb.Pipeline_Stage, _ int) (stage, error) {
	args := s.GetArgs()
	if len(args) != 2 {
		return nil, invalid("sample(...) takes a size and a mode.")
	}
	st := &sampleStage{mode: args[1].GetStringValue()}
	switch st.mode {
	case "documents":
		if kindOf(args[0]) != kInt || args[0].GetIntegerValue() < 0 {
			return nil, invalid("sample(...) takes a non-negative number of documents.")
		}
		st.n = args[0].GetIntegerValue()
	case "percent":
		if !isNumber(args[0]) || toFloat(args[0]) < 0 || toFloat(args[0]) > 1 {
			return nil, invalid("sample(...) takes a percentage between 0 and 1.")
		}
		st.p = toFloat(args[0])
	default:
		return nil, invalid("sample(...) mode must be \"documents\" or \"percent\", not %q.", st.mode)
	}
	return st, nil
}

func compileUnion(s *pb.Pipeline_Stage, depth int) (stage, error) {
	if len(s.GetArgs()) != 1 || s.GetArgs()[0].GetPipelineValue() == nil {
		return nil, invalid("union(...) takes one pipeline.")
	}
	other, err := compilePipeline(s.GetArgs()[0].GetPipelineValue(), false, depth+1)
	if err != nil {
		return nil, err
	}
	return &unionStage{other: other}, nil
}

func compileUnnest(s *pb.Pipeline_Stage, depth int) (stage, error) {
	args := s.GetArgs()
	if len(args) != 2 || args[1].GetFieldReferenceValue() == "" {
		return nil, invalid("unnest(...) takes an expression and an alias.")
	}
	x, err := compileExpr(args[0], depth+1)
	if err != nil {
		return nil, err
	}
	alias, err := parseField(args[1].GetFieldReferenceValue())
	if err != nil {
		return nil, err
	}
	st := &unnestStage{x: x, alias: alias}
	if ix, ok := s.GetOptions()["index_field"]; ok {
		if st.index, err = parseField(ix.GetFieldReferenceValue()); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func compileReplace(s *pb.Pipeline_Stage, depth int) (stage, error) {
	args := s.GetArgs()
	if len(args) < 1 || len(args) > 2 {
		return nil, invalid("replace_with(...) takes an expression and a mode.")
	}
	if len(args) == 2 && args[1].GetStringValue() != "full_replace" {
		return nil, invalid("replace_with(...) mode %q is not supported.", args[1].GetStringValue())
	}
	x, err := compileExpr(args[0], depth+1)
	if err != nil {
		return nil, err
	}
	return &replaceStage{x: x}, nil
}

func compileLet(s *pb.Pipeline_Stage, depth int) (stage, error) {
	if len(s.GetArgs()) != 1 || s.GetArgs()[0].GetMapValue() == nil {
		return nil, invalid("let(...) takes one map of variables.")
	}
	vars, err := namedMap(s.GetArgs()[0].GetMapValue().GetFields(), depth, true)
	return &letStage{vars: vars}, err
}

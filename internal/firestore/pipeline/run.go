package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Request is one ExecutePipeline call, decoded by the adapter.
type Request struct {
	// Database is "projects/{p}/databases/{d}".
	Database string
	Pipeline *pb.StructuredPipeline
	// Consistency is the state read: a transaction or a read time; zero
	// reads the engine's read time when the pipeline starts.
	Consistency firestore.Consistency
	// AutoCommit commits Consistency's (new) transaction with the
	// pipeline's writes, when it has any.
	AutoCommit bool
}

// Result is a pipeline's output.
type Result struct {
	Docs          []*pb.Document
	ExecutionTime time.Time
	// Explain is the explain text when explain_options asked for it;
	// Analyze is false for mode "explain", which runs nothing.
	Explain *string
	Analyze bool
	// Committed is true when the pipeline's writes committed its
	// auto-commit transaction.
	Committed bool
}

// run is one execution: the state it reads and what explain records.
type run struct {
	ctx     context.Context
	eng     *firestore.Engine
	caller  identity.Principal
	db      string
	c       firestore.Consistency
	now     time.Time
	explain *explainLog
	// autoCommit lets writes commit the request's transaction, once
	// (committed).
	autoCommit, committed bool
	// memoryLimit is the memory_limit option (defaultMemoryLimit when not
	// set): the most bytes of rows a source or stage may hold.
	memoryLimit int64
}

// Execute runs a pipeline against an Enterprise edition database.
func Execute(ctx context.Context, eng *firestore.Engine, caller identity.Principal, req Request) (*Result, error) {
	if _, err := firestore.ParseDatabase(req.Database); err != nil {
		return nil, err
	}
	if ed := eng.Edition(req.Database); ed != firestore.EditionEnterprise {
		return nil, errs.Errorf(errs.FailedPrecondition, "Pipeline operations are only supported on Firestore Enterprise edition databases; database %s is %s edition.", dbID(req.Database), ed)
	}
	sp := req.Pipeline
	if sp == nil || sp.GetPipeline() == nil {
		return nil, invalid("ExecutePipeline requires a structured pipeline.")
	}
	opts, err := parseOptions(sp.GetOptions())
	if err != nil {
		return nil, err
	}
	mode := opts.mode
	p, err := compilePipeline(sp.GetPipeline(), false, 0)
	if err != nil {
		return nil, err
	}
	if err := checkVariables(sp.GetPipeline(), nil); err != nil {
		return nil, err
	}
	c := req.Consistency
	now := time.Now().UTC().Truncate(time.Microsecond)
	if c.Transaction == nil && c.ReadTime.IsZero() {
		c.ReadTime = now // every read of the pipeline sees the state at its start
	}
	r := &run{ctx: ctx, eng: eng, caller: caller, db: req.Database, c: c, now: now, autoCommit: req.AutoCommit,
		memoryLimit: cmp.Or(opts.memoryLimit, defaultMemoryLimit)}
	res := &Result{ExecutionTime: c.ReadTime}
	if res.ExecutionTime.IsZero() {
		res.ExecutionTime = now
	}
	if mode != "" {
		r.explain = &explainLog{json: opts.format == "json"}
		res.Analyze = mode == "analyze"
		if !res.Analyze {
			text := r.explain.plan(p)
			res.Explain = &text
			return res, nil
		}
	}
	start := time.Now()
	rows, err := r.execute(p, nil)
	if err != nil {
		if r.explain != nil { // production puts what ran in the error's details
			return nil, &StatsError{Err: err, Stats: explainStats(r.explain.text(time.Since(start)))}
		}
		return nil, err
	}
	res.Docs = make([]*pb.Document, len(rows))
	for i, rw := range rows {
		res.Docs[i] = rw.document()
	}
	res.Committed = r.committed
	if r.explain != nil {
		text := r.explain.text(time.Since(start))
		res.Explain = &text
	}
	return res, nil
}

// batch is how many results one ExecutePipelineResponse carries.
const batch = 500

// Responses splits a result into ExecutePipeline responses: each carries
// the execution time, the first a new transaction's id (txn, when newTxn)
// and the last the explain stats; there is always at least one.
func (res *Result) Responses(txn []byte, newTxn bool) []*pb.ExecutePipelineResponse {
	at := timestamppb.New(res.ExecutionTime)
	var out []*pb.ExecutePipelineResponse
	for i := 0; i < len(res.Docs) || i == 0; i += batch {
		out = append(out, &pb.ExecutePipelineResponse{Results: res.Docs[i:min(i+batch, len(res.Docs))], ExecutionTime: at})
	}
	if newTxn {
		out[0].Transaction = txn
	}
	if res.Explain != nil {
		out[len(out)-1].ExplainStats = explainStats(*res.Explain)
	}
	return out
}

// explainStats wraps explain text as the SDKs decode it: a StringValue
// in ExplainStats.data.
func explainStats(text string) *pb.ExplainStats {
	data, _ := anypb.New(wrapperspb.String(text))
	return &pb.ExplainStats{Data: data}
}

// StatsError is a pipeline's error when explain's analyze mode ran it:
// the adapters send Stats, what ran before the error, in the status
// details (google.firestore.v1.ExplainStats), as production does.
type StatsError struct {
	Err   error
	Stats *pb.ExplainStats
}

func (e *StatsError) Error() string { return e.Err.Error() }

// Unwrap returns the pipeline's error.
func (e *StatsError) Unwrap() error { return e.Err }

func dbID(database string) string { return database[strings.LastIndexByte(database, '/')+1:] }

// options are a StructuredPipeline's query-level options.
type options struct {
	mode        string // explain_options.mode: "explain", "analyze" or "" (run, no stats)
	format      string // explain_options.output_format: "text" or "json"
	memoryLimit int64  // memory_limit, bytes; 0 when not set
}

// parseOptions reads the options the SDKs send (explain_options,
// index_mode) and memory_limit, the raw option production documents in
// its SDKs' tests. Options it does not know are ignored.
func parseOptions(opts map[string]*pb.Value) (options, error) {
	o := options{format: "text"}
	if eo, ok := opts["explain_options"]; ok {
		m, isMap := eo.GetValueType().(*pb.Value_MapValue)
		if !isMap {
			return o, invalid("explain_options must be a map, got %s.", wireName[kindOf(eo)])
		}
		for k, v := range m.MapValue.GetFields() {
			s, isStr := v.GetValueType().(*pb.Value_StringValue)
			if !isStr {
				return o, invalid("explain_options.%s must be a string, got %s.", k, wireName[kindOf(v)])
			}
			switch k {
			case "mode":
				switch s.StringValue {
				case "analyze", "explain":
					o.mode = s.StringValue
				case "execute": // the SDKs' default: run the pipeline, no stats
				default:
					return o, invalid("Unknown explain mode %q: use \"execute\", \"explain\" or \"analyze\".", s.StringValue)
				}
			case "output_format":
				if s.StringValue != "text" && s.StringValue != "json" {
					return o, invalid("Unknown explain output format %q: use \"text\" or \"json\".", s.StringValue)
				}
				o.format = s.StringValue
			default:
				return o, invalid("Unknown explain option %q.", k)
			}
		}
	}
	if im, ok := opts["index_mode"]; ok && im.GetStringValue() != "recommended" {
		return o, invalid("Unknown index_mode %s: the only index mode is \"recommended\".", optionText(im))
	}
	if ml, ok := opts["memory_limit"]; ok {
		n, isInt := ml.GetValueType().(*pb.Value_IntegerValue)
		if !isInt || n.IntegerValue <= 0 {
			return o, invalid("memory_limit must be a positive integer (bytes), got %s.", optionText(ml))
		}
		o.memoryLimit = n.IntegerValue
	}
	return o, nil
}

// optionText shows an option's value in an error: a string or integer
// as itself, any other value by its type.
func optionText(v *pb.Value) string {
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		return fmt.Sprintf("%q", x.StringValue)
	case *pb.Value_IntegerValue:
		return fmt.Sprint(x.IntegerValue)
	}
	return wireName[kindOf(v)]
}

// defaultMemoryLimit is the memory limit of a pipeline whose request sets
// no memory_limit.
const defaultMemoryLimit = 128 << 20

// holds checks rows against the run's memory limit: it fails with
// RESOURCE_EXHAUSTED when what a source or stage holds is larger.
func (r *run) holds(rows []*row) error {
	m := r.meter()
	for _, rw := range rows {
		if err := m.add(rw); err != nil {
			return err
		}
	}
	return nil
}

// meter counts the bytes of the rows a source or stage has made so far
// against the run's memory limit, so that one making large rows (literals
// unnested, then add_fields(string_repeat(…))) fails as it passes the
// limit, not once it has made them all.
type meter struct{ limit, n int64 }

func (r *run) meter() *meter { return &meter{limit: r.memoryLimit} }

// add counts rw; past the limit it is RESOURCE_EXHAUSTED.
func (m *meter) add(rw *row) error {
	m.n += int64(len(rw.name)) + 1 + 32 // the name and two timestamps
	for k, v := range rw.fields {
		m.n += int64(len(k) + 1 + firestore.ValueSize(v))
	}
	if m.n > m.limit {
		return errs.Errorf(errs.ResourceExhausted, "The pipeline exceeded its memory limit of %d bytes (memory_limit).", m.limit)
	}
	return nil
}

func (rw *row) document() *pb.Document {
	return &pb.Document{Name: rw.name, Fields: rw.fields, CreateTime: rw.create, UpdateTime: rw.update}
}

// execute runs a compiled pipeline; outer is the enclosing row's scope for
// a subquery (nil at the top).
func (r *run) execute(p *compiled, outer *scope) ([]*row, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, errs.Errorf(errs.Unavailable, "The pipeline was cancelled: %v", err)
	}
	rows, rest, err := p.source.rows(r, outer, p.stages)
	if err == nil {
		err = r.holds(rows)
	}
	if err != nil {
		return nil, err
	}
	for _, st := range rest {
		if rows, err = st.apply(r, outer, rows); err != nil {
			return nil, err
		}
		r.explain.stage(st, len(rows))
		if err := r.holds(rows); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// subquery runs a nested pipeline for the current row.
func (r *run) subquery(p *compiled, s *scope) ([]*row, error) {
	return r.execute(p, s)
}

// source produces a pipeline's first rows. It may take over a prefix of
// the stages after it (running them through the engine's query planner)
// and returns the stages still to run.
type source interface {
	rows(r *run, outer *scope, stages []stage) ([]*row, []stage, error)
}

// collectionSource reads a collection (parent path and id), a collection
// group (group: every collection of that id under parent; no id: the
// whole database), or (sub) a subcollection of the current row.
type collectionSource struct {
	parent []string
	id     string
	group  bool
	sub    bool
}

func (src *collectionSource) rows(r *run, outer *scope, stages []stage) ([]*row, []stage, error) {
	parent := r.db + "/documents"
	if len(src.parent) > 0 {
		parent += "/" + strings.Join(src.parent, "/")
	}
	if src.sub {
		if outer == nil || outer.row == nil || outer.row.name == "" {
			return nil, nil, invalid("subcollection(...) needs a document to start from.")
		}
		parent = outer.row.name
	}
	q, rest, absentLast := push(stages)
	q.From = []*pb.StructuredQuery_CollectionSelector{{CollectionId: src.id, AllDescendants: src.group}}
	if len(rest) > 0 && absentLast == "" {
		// An aggregate of plain fields reads only those: the engine then
		// decodes no other field (explain still shows the query as pushed).
		q.Select = aggregateReads(rest[0])
		if q.Select != nil && r.explain == nil {
			if rows, done, err := r.streamAggregate(parent, q, rest[0].(*aggregateStage), outer); done {
				return rows, rest[1:], err
			}
		}
	}
	docs, used, err := r.query(parent, q)
	q.Select = nil
	if err != nil && len(rest) < len(stages) && errs.KindOf(err) == errs.InvalidArgument {
		// The engine refused the pushed-down query: scan and run the stages.
		q, rest, absentLast = &pb.StructuredQuery{From: q.From}, stages, ""
		docs, used, err = r.query(parent, q)
	}
	if err == nil && absentLast != "" && len(docs) < int(q.GetLimit().GetValue()) {
		docs, err = r.withAbsent(parent, q, docs, absentLast)
	}
	if err != nil {
		return nil, nil, err
	}
	r.explain.source(describeSource(src), q, used, len(stages)-len(rest), len(docs))
	return fromDocs(docs), rest, nil
}

// streamAggregate folds the documents of q into the aggregate stage as
// the engine reads them, without collecting them first; done is false,
// having read nothing, when the engine cannot stream q (see
// Engine.StreamQuery) or refuses it (the caller's path then answers the
// same).
func (r *run) streamAggregate(parent string, q *pb.StructuredQuery, agg *aggregateStage, outer *scope) (rows []*row, done bool, err error) {
	f := agg.folder(r, outer)
	var foldErr error
	rw := &row{} // the folder keeps no row, so one serves every document
	ok, err := r.eng.StreamQuery(r.ctx, r.caller, parent, q, r.c, func(d *pb.Document) {
		if foldErr == nil {
			*rw = row{name: d.Name, create: d.CreateTime, update: d.UpdateTime, fields: d.Fields}
			foldErr = f.add(rw)
		}
	})
	if !ok {
		return nil, false, nil
	}
	if err == nil {
		err = foldErr
	}
	if err != nil {
		return nil, true, foldErr
	}
	return f.rows(), true, nil
}

// aggregateReads is the projection of the fields an aggregate stage reads
// when all it reads is plain fields, else nil.
func aggregateReads(st stage) *pb.StructuredQuery_Projection {
	agg, ok := st.(*aggregateStage)
	if !ok {
		return nil
	}
	sel := &pb.StructuredQuery_Projection{Fields: []*pb.StructuredQuery_FieldReference{{FieldPath: "__name__"}}}
	read := func(x expr) bool {
		f, ok := x.(fieldExpr)
		if ok && len(f.path) == 1 && (f.path[0] == "__name__" || f.path[0] == "__create_time__" || f.path[0] == "__update_time__") {
			return true // every projected document keeps its name and times
		}
		if ok {
			sel.Fields = append(sel.Fields, &pb.StructuredQuery_FieldReference{FieldPath: f.path.String()})
		}
		return ok
	}
	for _, g := range agg.groups {
		if !read(g.x) {
			return nil
		}
	}
	for _, a := range agg.accs {
		for _, x := range a.args {
			if !read(x) {
				return nil
			}
		}
	}
	return sel
}

// withAbsent completes a descending, limited query's documents with those
// its filters match that lack field (which sort after every value), in
// name order, up to the limit.
func (r *run) withAbsent(parent string, q *pb.StructuredQuery, docs []*pb.Document, field string) ([]*pb.Document, error) {
	path, _ := firestore.ParseFieldPath(field)
	all, _, err := r.query(parent, &pb.StructuredQuery{From: q.From, Where: q.Where})
	if err != nil {
		return nil, err
	}
	for _, d := range all {
		if len(docs) >= int(q.GetLimit().GetValue()) {
			break
		}
		if _, has := firestore.GetField(d.Fields, path); !has {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// query runs a structured query in the run's state; used names the index
// the engine read (only when explaining).
func (r *run) query(parent string, q *pb.StructuredQuery) ([]*pb.Document, string, error) {
	if r.explain == nil {
		docs, _, err := r.eng.RunQuery(r.ctx, r.caller, parent, q, r.c)
		return docs, "", err
	}
	docs, _, metrics, err := r.eng.ExplainQuery(r.ctx, r.caller, parent, q, r.c, true)
	if err != nil {
		return nil, "", err
	}
	var used []string
	for _, ix := range metrics.GetPlanSummary().GetIndexesUsed() {
		used = append(used, fmt.Sprint(ix.AsMap()["properties"]))
	}
	return docs, strings.Join(used, "; "), nil
}

func fromDocs(docs []*pb.Document) []*row {
	rows := make([]*row, len(docs))
	for i, d := range docs {
		rows[i] = &row{name: d.Name, create: d.CreateTime, update: d.UpdateTime, fields: d.Fields}
	}
	return rows
}

type documentsSource struct{ paths []string }

func (src *documentsSource) rows(r *run, _ *scope, stages []stage) ([]*row, []stage, error) {
	names := make([]string, len(src.paths))
	for i, p := range src.paths {
		names[i] = r.db + "/documents/" + p
	}
	docs, _, err := r.eng.BatchGet(r.ctx, r.caller, names, r.c)
	if err != nil {
		return nil, nil, err
	}
	var found []*pb.Document
	for _, d := range docs {
		if d != nil {
			found = append(found, d)
		}
	}
	r.explain.source(fmt.Sprintf("documents(%d named)", len(names)), nil, "", 0, len(found))
	return fromDocs(found), stages, nil
}

type literalsSource struct{ maps []expr }

func (src *literalsSource) rows(r *run, outer *scope, stages []stage) ([]*row, []stage, error) {
	out := make([]*row, 0, len(src.maps))
	m := r.meter()
	for _, x := range src.maps {
		v := x.eval(scopeFor(r, outer, &row{}))
		if v.isError() {
			return nil, nil, outputError(v)
		}
		out = append(out, &row{fields: v.v.GetMapValue().GetFields()})
		if err := m.add(out[len(out)-1]); err != nil {
			return nil, nil, err
		}
	}
	r.explain.source(fmt.Sprintf("literals(%d rows)", len(out)), nil, "", 0, len(out))
	return out, stages, nil
}

func describeSource(src *collectionSource) string {
	switch {
	case src.sub:
		return "subcollection " + src.id
	case src.group && src.id == "":
		return "database"
	case src.group:
		return "collection group " + src.id
	}
	return "collection " + strings.TrimPrefix(strings.Join(append(append([]string{}, src.parent...), src.id), "/"), "/")
}

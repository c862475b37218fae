package firestore

import (
	"cmp"
	"math"
	"slices"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
)

// Production's bounds on a vector search.
const (
	maxNearestLimit     = 1000
	maxVectorDimensions = 2048
)

// nearest is a validated FindNearest stage: it ranks the documents passing
// the query's filters by their distance to the query vector.
type nearest struct {
	field     FieldPath
	query     []float64
	measure   pb.StructuredQuery_FindNearest_DistanceMeasure
	limit     int
	result    FieldPath // nil: the distance is not returned
	threshold *float64
}

// planNearest validates a query's FindNearest stage (nil without one).
func planNearest(q *pb.StructuredQuery) (*nearest, error) {
	fn := q.GetFindNearest()
	if fn == nil {
		return nil, nil
	}
	if q.GetStartAt() != nil || q.GetEndAt() != nil || q.GetOffset() != 0 || q.GetLimit() != nil || len(q.GetOrderBy()) > 0 {
		return nil, errorf(errs.InvalidArgument, "FindNearest cannot be combined with order_by, start_at, end_at, offset or limit.")
	}
	if fn.GetVectorField().GetFieldPath() == "" {
		return nil, errorf(errs.InvalidArgument, "FindNearest.vector_field must name a field.")
	}
	field, err := ParseFieldPath(fn.GetVectorField().GetFieldPath())
	if err != nil {
		return nil, err
	}
	if !IsVector(fn.GetQueryVector()) || validateVector(fn.GetQueryVector(), "query_vector") != nil {
		return nil, errorf(errs.InvalidArgument, "Query Value must be of type vector.")
	}
	elems := vectorElements(fn.GetQueryVector())
	if len(elems) == 0 || len(elems) > maxVectorDimensions {
		return nil, errorf(errs.InvalidArgument, "FindNearest.query_vector must have between 1 and %d dimensions, not %d.", maxVectorDimensions, len(elems))
	}
	if fn.GetDistanceMeasure() == pb.StructuredQuery_FindNearest_DISTANCE_MEASURE_UNSPECIFIED {
		return nil, errorf(errs.InvalidArgument, "FindNearest.distance_measure must be EUCLIDEAN, COSINE or DOT_PRODUCT.")
	}
	if _, ok := pb.StructuredQuery_FindNearest_DistanceMeasure_name[int32(fn.GetDistanceMeasure())]; !ok {
		return nil, errorf(errs.InvalidArgument, "FindNearest.distance_measure must be EUCLIDEAN, COSINE or DOT_PRODUCT.")
	}
	if l := fn.GetLimit(); l == nil || l.GetValue() <= 0 || l.GetValue() > maxNearestLimit {
		return nil, errorf(errs.InvalidArgument, "FindNearest.limit must be a positive integer of no more than %d.", maxNearestLimit)
	}
	n := &nearest{field: field, query: floats(elems), measure: fn.GetDistanceMeasure(), limit: int(fn.GetLimit().GetValue())}
	if r := fn.GetDistanceResultField(); r != "" {
		if n.result, err = ParseFieldPath(r); err != nil {
			return nil, err
		}
	}
	if t := fn.GetDistanceThreshold(); t != nil {
		v := t.GetValue()
		n.threshold = &v
	}
	return n, nil
}

// floats returns the numbers of vector elements.
func floats(elems []*pb.Value) []float64 {
	out := make([]float64, len(elems))
	for i, e := range elems {
		if x, ok := e.GetValueType().(*pb.Value_IntegerValue); ok {
			out[i] = float64(x.IntegerValue)
		} else {
			out[i] = e.GetDoubleValue()
		}
	}
	return out
}

// findNearest runs a query with a FindNearest stage as of t; e.mu is held.
// Without filters, at the latest state, it searches the field's vector
// index and reads only the documents it returns; otherwise it ranks the
// documents passing the filters. Explaining, it counts the vector entries
// of the field it compares and the documents it reads.
func (e *Engine) findNearest(p *plan, t time.Time) []*pb.Document {
	if p.query.GetWhere() != nil || !e.latest(t) {
		return p.nearest.rank(e.executeAt(p, t))
	}
	d := e.dbs[p.parent.Database]
	if d == nil {
		return nil
	}
	key := vectorKey{group: p.collection, field: p.nearest.field.String()}
	top := p.nearest.top()
	w := newWindow(p, 0)
	inScope, read := w.inScope, d.docs.get
	if st := p.stats; st != nil {
		inScope = func(path string) bool { st.entries++; return w.inScope(path) }
		read = func(path string) *pb.Document { st.docs++; return d.docs.get(path) }
	}
	e.vectorIndex(d, key, p.nearest.field).search(top, inScope)
	return top.result(read)
}

// vectorOf returns the numbers of the vector at the stage's field of doc,
// or nil when the field is absent, not a vector, or of another dimension.
func (n *nearest) vectorOf(doc *pb.Document) []float64 {
	v, ok := GetField(doc.Fields, n.field)
	if !ok || !IsVector(v) || len(vectorElements(v)) != len(n.query) {
		return nil
	}
	return floats(vectorElements(v))
}

// rank returns the documents of docs nearest to the query vector (see
// topK.result).
func (n *nearest) rank(docs []*pb.Document) []*pb.Document {
	top := n.top()
	for _, d := range docs {
		if vec := n.vectorOf(d); vec != nil {
			top.offer(d.Name, d, vec)
		}
	}
	return top.result(nil)
}

// hit is a document (or, before it is read, its path) and its distance.
type hit struct {
	name string
	doc  *pb.Document
	dist float64
}

// topK keeps the nearest hits seen so far, nearest first, at most limit.
type topK struct {
	n    *nearest
	hits []hit
}

func (n *nearest) top() *topK { return &topK{n: n, hits: make([]hit, 0, n.limit)} }

// before orders hits nearest first (a larger dot product is nearer), ties
// by name.
func (t *topK) before(a, b hit) int {
	c := cmp.Compare(a.dist, b.dist)
	if t.n.measure == pb.StructuredQuery_FindNearest_DOT_PRODUCT {
		c = -c
	}
	if c != 0 {
		return c
	}
	return compareReferences(a.name, b.name)
}

// offer considers one document's vector: kept when within the threshold
// and among the limit nearest so far. Distances that are not numbers
// (cosine with a zero vector) are left out.
func (t *topK) offer(name string, doc *pb.Document, vec []float64) {
	h := hit{name: name, doc: doc, dist: t.n.distance(vec)}
	if math.IsNaN(h.dist) || t.n.threshold != nil && !t.n.within(h.dist) {
		return
	}
	if len(t.hits) == t.n.limit && t.before(h, t.hits[len(t.hits)-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(t.hits, h, t.before)
	if len(t.hits) == t.n.limit {
		t.hits = t.hits[:len(t.hits)-1]
	}
	t.hits = slices.Insert(t.hits, i, h)
}

// result returns the kept documents, nearest first, each with its distance
// in the result field when the stage asks for one; read looks up the
// documents offered by path alone.
func (t *topK) result(read func(path string) *pb.Document) []*pb.Document {
	out := make([]*pb.Document, 0, len(t.hits))
	for _, h := range t.hits {
		doc := h.doc
		if doc == nil {
			doc = read(h.name)
		}
		if t.n.result != nil {
			doc = withField(doc, t.n.result, doubleValue(h.dist))
		}
		out = append(out, doc)
	}
	return out
}

// within reports whether a distance passes the threshold: at most it for
// distances, at least it for the dot product, which grows with similarity.
func (n *nearest) within(dist float64) bool {
	if n.measure == pb.StructuredQuery_FindNearest_DOT_PRODUCT {
		return dist >= *n.threshold
	}
	return dist <= *n.threshold
}

// distance measures a vector of the query's dimension against the query
// vector: euclidean distance, cosine distance (1 - cosine similarity) or
// the dot product.
func (n *nearest) distance(vec []float64) float64 {
	q := n.query[:len(vec)]
	switch n.measure {
	case pb.StructuredQuery_FindNearest_EUCLIDEAN:
		return math.Sqrt(squaredDistance(vec, q))
	case pb.StructuredQuery_FindNearest_COSINE:
		na, nb := dot(vec, vec), dot(q, q)
		if na == 0 || nb == 0 {
			return math.NaN()
		}
		return 1 - dot(vec, q)/math.Sqrt(na*nb)
	}
	return dot(vec, q)
}

// dot is the dot product of two vectors of one dimension, summed in four
// lanes so that the additions overlap.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// squaredDistance is the squared euclidean distance of two vectors of one
// dimension, summed in four lanes.
func squaredDistance(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// withField returns a copy of doc with a field set, leaving doc as it is.
func withField(doc *pb.Document, path FieldPath, v *pb.Value) *pb.Document {
	out := &pb.Document{Name: doc.Name, CreateTime: doc.CreateTime, UpdateTime: doc.UpdateTime}
	if len(path) == 1 {
		out.Fields = make(map[string]*pb.Value, len(doc.Fields)+1)
		for k, f := range doc.Fields {
			out.Fields[k] = f
		}
	} else {
		out.Fields = cloneFields(doc.Fields)
	}
	setField(out.Fields, path, v)
	return out
}

package firestore

import (
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/btree"
)

// indexSpec names one index over the documents of every collection with id
// group ("" for every document of the database): a single-field index
// orders them by a field's value and then by name (or by name alone); with
// a prefix field, by the prefix field's value first, which serves an
// equality filter on it ordered by the other field. A scoped index orders
// them by their collection's path before all that, so that a query of one
// collection reads only its rows, not those of same-named collections
// under other documents; collection group queries read unscoped indexes.
type indexSpec struct {
	group    string
	field    string // FieldPath.String(); "" orders by name alone
	contains bool   // array-contains: one entry per distinct array element
	prefix   string // FieldPath.String() of the equality field; "" for none
	scoped   bool
}

// byCollection is the index of every document of a database by its
// collection's path, then by name: what reading a collection in name order,
// counting it, listing collection ids and listing documents read. Every
// database keeps it from its first write on; BuildIndexes builds it for
// the databases of an opened data folder.
var byCollection = indexSpec{scoped: true}

// fieldIndex is a built index. Its tree is changed only under the engine's
// write lock, so readers holding the read lock see a stable tree.
type fieldIndex struct {
	spec       indexSpec
	path       FieldPath
	prefixPath FieldPath
	tree       *btree.BTreeG[indexEntry]
}

// indexEntry is one index row: the document's path and the indexed values
// inside it, so an index costs a few words per document and does not keep
// the rest of a document decoded from the data folder alive.
type indexEntry struct {
	prefix *pb.Value // nil without a prefix field
	value  *pb.Value // nil in a name index
	path   string    // under documents/
	seek   seekBound // set only in the bounds a scan seeks to
	coll   int32     // path[:coll] is the path of the document's collection
}

// seekBound places a seek bound before or after every path of its values.
type seekBound int8

const (
	seekFirst seekBound = iota - 1
	atPath
	seekLast
)

// valueLast is a value after every value (nil sorts with null, before every value).
var valueLast = &pb.Value{}

// less orders the rows of the index.
func (ix *fieldIndex) less(a, b indexEntry) bool {
	if ix.spec.scoped {
		if ca, cb := a.collection(), b.collection(); ca != cb {
			return compareReferences(ca, cb) < 0
		}
	}
	return lessEntry(a, b)
}

// collection returns the path of the collection of the row's document.
func (en indexEntry) collection() string { return en.path[:en.coll] }

// rowOf returns a row of the document at path with the indexed values.
func rowOf(path string, prefix, value *pb.Value) indexEntry {
	return indexEntry{prefix: prefix, value: value, path: path, coll: int32(max(strings.LastIndexByte(path, '/'), 0))}
}

func lessEntry(a, b indexEntry) bool {
	if c := compareIndexValues(a.prefix, b.prefix); c != 0 {
		return c < 0
	}
	if c := compareIndexValues(a.value, b.value); c != 0 {
		return c < 0
	}
	if a.seek != b.seek {
		return a.seek < b.seek
	}
	return compareReferences(a.path, b.path) < 0
}

func compareIndexValues(a, b *pb.Value) int {
	switch {
	case a == b:
		return 0
	case a == valueLast:
		return 1
	case b == valueLast:
		return -1
	}
	return Compare(a, b)
}

// groupOf returns the collection id of the document at path.
func groupOf(path string) string {
	end := strings.LastIndexByte(path, '/')
	if end < 0 {
		return ""
	}
	return path[strings.LastIndexByte(path[:end], '/')+1 : end]
}

// entries returns the rows in ix of the document at path (none when the
// index does not cover its collection).
func (ix *fieldIndex) entries(path string, doc storedDoc) []indexEntry {
	if doc.doc == nil && doc.encoded == nil || ix.spec.group != "" && groupOf(path) != ix.spec.group {
		return nil
	}
	if ix.spec.field == "" {
		return []indexEntry{rowOf(path, nil, nil)}
	}
	v, ok := doc.field(ix.path)
	if !ok {
		return nil
	}
	if ix.prefixPath != nil {
		pv, ok := doc.field(ix.prefixPath)
		if !ok {
			return nil
		}
		return []indexEntry{rowOf(path, pv, v)}
	}
	if !ix.spec.contains {
		return []indexEntry{rowOf(path, nil, v)}
	}
	elems := v.GetArrayValue().GetValues()
	out := make([]indexEntry, len(elems))
	for i, el := range elems {
		out[i] = rowOf(path, nil, el)
	}
	return out
}

// update moves the rows of the document at path from its old to its new
// version (a name index's row stays while the document exists).
func (ix *fieldIndex) update(path string, old, doc *pb.Document) {
	if ix.spec.field == "" && (old == nil) == (doc == nil) {
		return
	}
	for _, en := range ix.entries(path, storedDoc{doc: old}) {
		ix.tree.Delete(en)
	}
	for _, en := range ix.entries(path, storedDoc{doc: doc}) {
		ix.tree.ReplaceOrInsert(en)
	}
}

// reindex keeps the database's built indexes, and those being built, in
// step with one document change; e.mu is held for writing.
func (d *database) reindex(path string, old, doc *pb.Document) {
	d.reindexVectors(path, doc)
	if len(d.indexes) == 0 && len(d.building) == 0 {
		return
	}
	g := groupOf(path)
	for _, ix := range d.indexes[g] {
		ix.update(path, old, doc)
	}
	for _, ix := range d.indexes[""] {
		ix.update(path, old, doc)
	}
	for spec, b := range d.building {
		if spec.group == "" || spec.group == g {
			b.changes = append(b.changes, indexChange{path, old, doc})
		}
	}
}

func newFieldIndex(spec indexSpec, path FieldPath) *fieldIndex {
	ix := &fieldIndex{spec: spec, path: path}
	ix.tree = btree.NewG(32, ix.less)
	if spec.prefix != "" {
		ix.prefixPath, _ = ParseFieldPath(spec.prefix)
	}
	return ix
}

// run visits the document paths of the scan's rows in order until visit
// returns false.
func (s scan) run(index indexLookup, visit func(path string) bool) {
	if s.parts != nil {
		s.runUnion(index, visit)
		return
	}
	ix := index(s.spec, s.path)
	step := func(en indexEntry) bool {
		if s.spec.scoped && en.collection() != s.scope {
			return false
		}
		if s.prefix != nil && Compare(en.prefix, s.prefix) != 0 {
			return false
		}
		if s.desc {
			if s.lo != nil && Compare(en.value, s.lo) < 0 {
				return false
			}
		} else if s.hi != nil && Compare(en.value, s.hi) > 0 {
			return false
		}
		if s.desc {
			if s.loName != "" && compareReferences(en.path, s.loName) < 0 {
				return false
			}
		} else if s.hiName != "" && compareReferences(en.path, s.hiName) > 0 {
			return false
		}
		if s.stats != nil {
			s.stats.entries++
		}
		return visit(en.path)
	}
	bound := func(v *pb.Value, seek seekBound) indexEntry {
		return indexEntry{prefix: s.prefix, value: v, seek: seek, path: s.scope, coll: int32(len(s.scope))}
	}
	seeks := s.prefix != nil || s.spec.scoped
	switch {
	case s.desc && s.hiName != "":
		ix.tree.DescendLessOrEqual(rowOf(s.hiName, nil, nil), step)
	case !s.desc && s.loName != "":
		ix.tree.AscendGreaterOrEqual(rowOf(s.loName, nil, nil), step)
	case s.desc && (s.hi != nil || seeks):
		hi := s.hi
		if hi == nil {
			hi = valueLast
		}
		ix.tree.DescendLessOrEqual(bound(hi, seekLast), step)
	case s.desc:
		ix.tree.Descend(step)
	case s.lo != nil || seeks:
		ix.tree.AscendGreaterOrEqual(bound(s.lo, seekFirst), step)
	default:
		ix.tree.Ascend(step)
	}
}

// runUnion visits the rows of each part in turn, each path once.
func (s scan) runUnion(index indexLookup, visit func(path string) bool) {
	seen := map[string]bool{}
	going := true
	for _, part := range s.parts {
		part.stats = s.stats
		part.run(index, func(path string) bool {
			if seen[path] {
				return true
			}
			seen[path] = true
			going = visit(path)
			return going
		})
		if !going {
			return
		}
	}
}

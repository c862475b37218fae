package firestore

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// vectorKey names a flat vector index: the vectors at one field of the
// documents of every collection with one id ("" for every collection).
type vectorKey struct {
	group string
	field string // FieldPath.String()
}

// vectorIndex holds the vectors at one field as plain numbers, by document
// path, so that a search without filters reads contiguous numbers instead
// of decoding every document. Like the field indexes it is built on first
// use and changed only under the engine's write lock.
type vectorIndex struct {
	key  vectorKey
	path FieldPath
	vecs map[string][]float64
}

// vectorAt returns the numbers of the vector at path of a stored
// document, or nil when the field is absent or not a vector.
func vectorAt(doc storedDoc, path FieldPath) []float64 {
	v, ok := doc.field(path)
	if !ok || !IsVector(v) {
		return nil
	}
	return floats(vectorElements(v))
}

// update moves the document at path from its old version to doc's.
func (vi *vectorIndex) update(path string, doc *pb.Document) {
	delete(vi.vecs, path)
	if doc == nil || vi.key.group != "" && groupOf(path) != vi.key.group {
		return
	}
	if vec := vectorAt(storedDoc{doc: doc}, vi.path); vec != nil {
		vi.vecs[path] = vec
	}
}

// vectorIndex returns the vector index for key, building it from the
// documents on first use; e.mu is held (for reading or writing).
func (e *Engine) vectorIndex(d *database, key vectorKey, path FieldPath) *vectorIndex {
	e.ixMu.Lock()
	defer e.ixMu.Unlock()
	if vi := d.vectors[key]; vi != nil {
		return vi
	}
	vi := &vectorIndex{key: key, path: path, vecs: map[string][]float64{}}
	for p, doc := range d.docs {
		if key.group != "" && groupOf(p) != key.group {
			continue
		}
		if vec := vectorAt(doc, path); vec != nil {
			vi.vecs[p] = vec
		}
	}
	if d.vectors == nil {
		d.vectors = map[vectorKey]*vectorIndex{}
	}
	d.vectors[key] = vi
	return vi
}

// reindexVectors keeps the vector indexes in step with one document
// change; e.mu is held for writing.
func (d *database) reindexVectors(path string, doc *pb.Document) {
	for _, vi := range d.vectors {
		vi.update(path, doc)
	}
}

// search offers every vector of the index in scope to top.
func (vi *vectorIndex) search(top *topK, inScope func(path string) bool) {
	dims := len(top.n.query)
	for path, vec := range vi.vecs {
		if len(vec) == dims && inScope(path) {
			top.offer(path, nil, vec)
		}
	}
}

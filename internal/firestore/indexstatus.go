package firestore

import (
	"sort"
)

// BuiltIndex is an index the engine holds in memory for one database.
type BuiltIndex struct {
	// CollectionGroup is the collection id it covers ("" for every one).
	CollectionGroup string `json:"collectionGroup"`
	// QueryScope is COLLECTION (rows grouped by collection path) or
	// COLLECTION_GROUP.
	QueryScope string `json:"queryScope"`
	// Fields are its fields in order; __name__ last is implicit.
	Fields []IndexField `json:"fields"`
	// Entries is how many rows (or vectors) it holds.
	Entries int `json:"entries"`
}

// IndexStatus is what the engine knows of one database's indexes.
type IndexStatus struct {
	Declared []IndexDef     `json:"declared"`
	Built    []BuiltIndex   `json:"built"`
	Missing  []MissingIndex `json:"missing"`
	// Ready is true once the declared indexes are built.
	Ready bool `json:"ready"`
}

// Indexes reports database's declared indexes, the indexes built in
// memory, and the undeclared composite indexes its queries needed.
func (e *Engine) Indexes(database string) IndexStatus {
	st := IndexStatus{Declared: e.declaredIndexes(database), Built: []BuiltIndex{}, Missing: e.undeclaredIndexes(database)}
	if st.Declared == nil {
		st.Declared = []IndexDef{}
	}
	e.indexPolicy.mu.Lock()
	if b := e.indexPolicy.built; b != nil {
		select {
		case <-b:
			st.Ready = true
		default:
		}
	}
	e.indexPolicy.mu.Unlock()
	e.mu.RLock()
	defer e.mu.RUnlock()
	e.ixMu.Lock()
	defer e.ixMu.Unlock()
	d := e.dbs[database]
	if d == nil {
		return st
	}
	for _, group := range d.indexes {
		for spec, ix := range group {
			st.Built = append(st.Built, builtIndex(spec, ix.tree.Len()))
		}
	}
	for key, vi := range d.vectors {
		dims := 0
		for _, v := range vi.vecs {
			dims = len(v)
			break
		}
		st.Built = append(st.Built, BuiltIndex{CollectionGroup: key.group, QueryScope: ScopeCollectionGroup,
			Fields: []IndexField{{FieldPath: key.field, VectorConfig: &VectorConfig{Dimension: dims}}}, Entries: len(vi.vecs)})
	}
	sort.Slice(st.Built, func(i, j int) bool {
		a, b := st.Built[i], st.Built[j]
		if a.CollectionGroup != b.CollectionGroup {
			return a.CollectionGroup < b.CollectionGroup
		}
		return IndexDef{Fields: a.Fields}.properties() < IndexDef{Fields: b.Fields}.properties()
	})
	return st
}

// builtIndex describes a field index by its spec.
func builtIndex(spec indexSpec, entries int) BuiltIndex {
	b := BuiltIndex{CollectionGroup: spec.group, QueryScope: ScopeCollectionGroup, Entries: entries, Fields: []IndexField{}}
	if spec.scoped {
		b.QueryScope = ScopeCollection
	}
	if spec.prefix != "" {
		b.Fields = append(b.Fields, IndexField{FieldPath: spec.prefix, Order: "ASCENDING"})
	}
	switch {
	case spec.field == "":
	case spec.contains:
		b.Fields = append(b.Fields, IndexField{FieldPath: spec.field, ArrayConfig: "CONTAINS"})
	default:
		b.Fields = append(b.Fields, IndexField{FieldPath: spec.field, Order: "ASCENDING"})
	}
	return b
}

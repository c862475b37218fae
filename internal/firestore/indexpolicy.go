package firestore

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	adminpb "cloud.google.com/go/firestore/apiv1/admin/adminpb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/proto"
)

// indexPolicy is what the engine knows of firestore.indexes.json: the
// declared indexes, whether a query needing an undeclared composite index
// fails (as production) or runs, and the undeclared indexes queries needed.
type indexPolicy struct {
	mu        sync.Mutex
	declared  map[string][]IndexDef      // by database id, e.g. "(default)"
	overrides map[string][]FieldOverride // by database id
	keys      map[string]map[string]bool // by database id, the declared indexKeys
	enforce   bool
	onMissing func(MissingIndex)
	missing   map[string]*MissingIndex // by database and index key
	order     []string                 // missing keys, in the order first needed
	built     chan struct{}            // closed once the declared indexes are built
}

// MissingIndex is an index queries needed that is not declared: a
// composite index, or a single-field index a field override must declare
// (collection group queries need them; an override that leaves out an
// automatic collection index removes it).
type MissingIndex struct {
	// Database is projects/{p}/databases/{d}.
	Database string `json:"database"`
	// Index is the composite index to add to firestore.indexes.json's
	// indexes; FieldOverride the single-field index to add to its
	// fieldOverrides. One of them is set.
	Index         *IndexDef      `json:"index,omitempty"`
	FieldOverride *FieldOverride `json:"fieldOverride,omitempty"`
	// Link is production's console link for creating the index.
	Link string `json:"link"`
	// Queries counts the queries that needed it; First is when the first did.
	Queries int       `json:"queries"`
	First   time.Time `json:"first"`
}

// DeclareIndexes sets the indexes firestore.indexes.json declares, by
// database id ("(default)", or a named database's id, in every project).
// With enforce, a query needing an index its database lacks fails with
// FAILED_PRECONDITION as in production; either way each such index is
// recorded (Indexes) and reported once to onMissing (which may be
// nil).
func (e *Engine) DeclareIndexes(byDatabase map[string]IndexFile, enforce bool, onMissing func(MissingIndex)) {
	pol := &e.indexPolicy
	pol.mu.Lock()
	defer pol.mu.Unlock()
	pol.enforce, pol.onMissing = enforce, onMissing
	pol.declared, pol.overrides, pol.keys = map[string][]IndexDef{}, map[string][]FieldOverride{}, map[string]map[string]bool{}
	for db, file := range byDatabase {
		pol.declared[db] = slices.Clone(file.Indexes)
		pol.overrides[db] = slices.Clone(file.FieldOverrides)
		pol.keys[db] = map[string]bool{}
		for _, d := range file.Indexes {
			pol.keys[db][d.indexKey()] = true
		}
	}
}

// declaredIndexes returns the indexes declared for database
// (projects/{p}/databases/{d}).
func (e *Engine) declaredIndexes(database string) []IndexDef {
	db := SplitDatabase(database).ID
	e.indexPolicy.mu.Lock()
	defer e.indexPolicy.mu.Unlock()
	return slices.Clone(e.indexPolicy.declared[db])
}

// undeclaredIndexes returns the undeclared indexes queries of database
// needed, in the order first needed.
func (e *Engine) undeclaredIndexes(database string) []MissingIndex {
	pol := &e.indexPolicy
	pol.mu.Lock()
	defer pol.mu.Unlock()
	out := []MissingIndex{}
	for _, k := range pol.order {
		if m := pol.missing[k]; m.Database == database {
			out = append(out, *m)
		}
	}
	return out
}

// checkIndexes applies the index policy to a planned query: it records
// each composite index the query reads that no declared index serves, and
// with enforcement refuses the query as production does. A FindNearest
// query whose vector dimension differs from the declared vector index's is
// refused in any case. An Enterprise database's queries need no index.
func (e *Engine) checkIndexes(p *plan) error {
	if e.Edition(p.parent.Database) == EditionEnterprise {
		return nil // Enterprise requires no index: an unindexed query scans
	}
	pol := &e.indexPolicy
	pol.mu.Lock()
	defer pol.mu.Unlock()
	for _, u := range queryIndexes(p) {
		if !u.composite {
			if err := pol.checkSingleField(p.parent.Database, u.def, p.unrecorded); err != nil {
				return err
			}
			continue
		}
		if p.nearest != nil {
			if err := pol.checkDimension(u.def, p); err != nil {
				return err
			}
		}
		if pol.serves(p.parent.Database, u) {
			continue
		}
		def := u.def
		m := pol.record(p.parent.Database+"|"+def.indexKey(), p.unrecorded, func() MissingIndex {
			return MissingIndex{Database: p.parent.Database, Index: &def, Link: consoleLink("create_composite", p.parent.Database, "indexes/_", def)}
		})
		if pol.enforce {
			if p.nearest != nil {
				return errorf(errs.FailedPrecondition, "Missing vector index configuration. Please create the required index with the following gcloud command: %s", gcloudVectorIndex(p.parent.Database, u.def))
			}
			return errorf(errs.FailedPrecondition, "The query requires an index. You can create it here: %s", m.Link)
		}
	}
	return nil
}

// checkSingleField applies the policy to a single-field index a query
// reads: the automatic collection-scope ones exist unless a field override
// leaves them out; collection group ones exist only when an override
// declares them. pol.mu is held.
func (pol *indexPolicy) checkSingleField(database string, def IndexDef, unrecorded bool) error {
	f := def.Fields[0]
	if f.FieldPath == "__name__" {
		return nil
	}
	db := SplitDatabase(database).ID
	declared := false
	for _, o := range pol.overrides[db] {
		if o.CollectionGroup == def.CollectionGroup && canonicalPath(o.FieldPath) == canonicalPath(f.FieldPath) {
			declared = true
			if o.serves(def.CollectionGroup, f, def.QueryScope) {
				return nil
			}
		}
	}
	if !declared && def.QueryScope == ScopeCollection {
		return nil // an automatic index
	}
	one := IndexDef{CollectionGroup: def.CollectionGroup, QueryScope: def.QueryScope, Fields: []IndexField{f}}
	m := pol.record(database+"|field|"+one.indexKey(), unrecorded, func() MissingIndex {
		ix := FieldOverrideIndex{Order: f.Order, ArrayConfig: f.ArrayConfig, QueryScope: def.QueryScope}
		override := &FieldOverride{CollectionGroup: def.CollectionGroup, FieldPath: f.FieldPath, Indexes: []FieldOverrideIndex{ix}}
		return MissingIndex{Database: database, FieldOverride: override, Link: consoleLink("create_exemption", database, "fields/"+f.FieldPath, one)}
	})
	if !pol.enforce {
		return nil
	}
	mode := "ASC"
	switch {
	case f.ArrayConfig != "":
		mode = "ARRAY_CONTAINS"
	case f.Order == "DESCENDING":
		mode = "DESC"
	}
	return errorf(errs.FailedPrecondition, "The query requires a %s_%s index for collection %s and field %s. You can create it here: %s", def.QueryScope, mode, def.CollectionGroup, f.FieldPath, m.Link)
}

// record notes one query's need of the undeclared index key names,
// describing it with describe the first time; pol.mu is held.
// An unrecorded need (a console query's) is described but not kept.
func (pol *indexPolicy) record(key string, unrecorded bool, describe func() MissingIndex) *MissingIndex {
	if m := pol.missing[key]; m != nil {
		if !unrecorded {
			m.Queries++
		}
		return m
	}
	need := describe()
	m := &need
	if unrecorded {
		return m
	}
	m.Queries, m.First = 1, time.Now().UTC()
	if pol.missing == nil {
		pol.missing = map[string]*MissingIndex{}
	}
	pol.missing[key] = m
	pol.order = append(pol.order, key)
	if pol.onMissing != nil {
		pol.onMissing(*m)
	}
	return m
}

// serves reports whether a declared index serves a needed one: the same
// collection group and scope; the needed equality fields first, in any
// order and direction; then the other fields as needed, the ordered ones
// all in the needed directions or all reversed; a trailing __name__
// aside. pol.mu is held.
func (pol *indexPolicy) serves(database string, need indexUse) bool {
	db := SplitDatabase(database).ID
	if pol.keys[db][need.def.indexKey()] {
		return true
	}
	for _, d := range pol.declared[db] {
		if d.CollectionGroup == need.def.CollectionGroup && d.QueryScope == need.def.QueryScope &&
			servesFields(trimName(d.Fields), trimName(need.def.Fields), need.equalities) {
			return true
		}
	}
	return false
}

func trimName(fields []IndexField) []IndexField {
	if n := len(fields); n > 1 && fields[n-1].FieldPath == "__name__" {
		return fields[:n-1]
	}
	return fields
}

// servesFields matches declared fields have against needed fields want,
// whose first eq are equalities (see serves).
func servesFields(have, want []IndexField, eq int) bool {
	if len(have) != len(want) {
		return false
	}
	need := map[string]bool{}
	for _, f := range want[:eq] {
		need[canonicalPath(f.FieldPath)] = true
	}
	for _, f := range have[:eq] {
		if !need[canonicalPath(f.FieldPath)] || f.Order == "" {
			return false
		}
	}
	same, reversed := true, true
	for i := eq; i < len(want); i++ {
		h, w := have[i], want[i]
		if canonicalPath(h.FieldPath) != canonicalPath(w.FieldPath) || (h.Order == "") != (w.Order == "") {
			return false
		}
		if w.Order == "" {
			if h.mode() != w.mode() {
				return false
			}
			continue
		}
		same = same && h.Order == w.Order
		reversed = reversed && h.Order != w.Order
	}
	return same || reversed
}

func canonicalPath(s string) string {
	p, err := ParseFieldPath(s)
	if err != nil {
		return s
	}
	return p.String()
}

// checkDimension refuses a vector search whose query vector's dimension
// differs from the declared vector index on its field; pol.mu is held.
func (pol *indexPolicy) checkDimension(need IndexDef, p *plan) error {
	field := canonicalPath(need.Fields[len(need.Fields)-1].FieldPath)
	db := SplitDatabase(p.parent.Database).ID
	for _, d := range pol.declared[db] {
		last := d.Fields[len(d.Fields)-1]
		if d.CollectionGroup != need.CollectionGroup || last.VectorConfig == nil || canonicalPath(last.FieldPath) != field {
			continue
		}
		if last.VectorConfig.Dimension != len(p.nearest.query) {
			return errorf(errs.InvalidArgument, "The query vector has %d dimensions, but the vector index on field %s of collection group %s has %d: they must match.", len(p.nearest.query), field, need.CollectionGroup, last.VectorConfig.Dimension)
		}
	}
	return nil
}

// consoleLink is production's link for creating an index in the Firebase
// console: the Index message, named after the collection group and suffix
// ("indexes/_" for a composite index, "fields/{field}" for a single-field
// exemption), base64 (URL alphabet, unpadded) in the parameter param
// (create_composite or create_exemption).
func consoleLink(param, database, suffix string, def IndexDef) string {
	name := SplitDatabase(database)
	ix := &adminpb.Index{
		Name:       name.String() + "/collectionGroups/" + def.CollectionGroup + "/" + suffix,
		QueryScope: adminpb.Index_COLLECTION,
	}
	if def.QueryScope == ScopeCollectionGroup {
		ix.QueryScope = adminpb.Index_COLLECTION_GROUP
	}
	for _, f := range def.Fields {
		field := &adminpb.Index_IndexField{FieldPath: f.FieldPath}
		switch {
		case f.VectorConfig != nil:
			field.ValueMode = &adminpb.Index_IndexField_VectorConfig_{VectorConfig: &adminpb.Index_IndexField_VectorConfig{
				Dimension: int32(f.VectorConfig.Dimension),
				Type:      &adminpb.Index_IndexField_VectorConfig_Flat{Flat: &adminpb.Index_IndexField_VectorConfig_FlatIndex{}},
			}}
		case f.ArrayConfig != "":
			field.ValueMode = &adminpb.Index_IndexField_ArrayConfig_{ArrayConfig: adminpb.Index_IndexField_CONTAINS}
		case f.Order == "DESCENDING":
			field.ValueMode = &adminpb.Index_IndexField_Order_{Order: adminpb.Index_IndexField_DESCENDING}
		default:
			field.ValueMode = &adminpb.Index_IndexField_Order_{Order: adminpb.Index_IndexField_ASCENDING}
		}
		ix.Fields = append(ix.Fields, field)
	}
	raw, _ := proto.MarshalOptions{Deterministic: true}.Marshal(ix)
	path := "firestore/indexes"
	if name.ID != "(default)" {
		path = "firestore/databases/" + name.ID + "/indexes"
	}
	return fmt.Sprintf("https://console.firebase.google.com/v1/r/project/%s/%s?%s=%s", name.Project, path, param, base64.RawURLEncoding.EncodeToString(raw))
}

// gcloudVectorIndex is the gcloud command production suggests for a
// missing vector index.
func gcloudVectorIndex(database string, def IndexDef) string {
	name := SplitDatabase(database)
	project, db := name.Project, name.ID
	var b strings.Builder
	fmt.Fprintf(&b, "gcloud firestore indexes composite create --project=%s --collection-group=%s --query-scope=%s", project, def.CollectionGroup, def.QueryScope)
	if db != "(default)" {
		fmt.Fprintf(&b, " --database=%s", db)
	}
	for _, f := range def.Fields {
		switch {
		case f.VectorConfig != nil:
			fmt.Fprintf(&b, ` --field-config=vector-config='{"dimension":"%d","flat": "{}"}',field-path=%s`, f.VectorConfig.Dimension, f.FieldPath)
		case f.ArrayConfig != "":
			fmt.Fprintf(&b, " --field-config=array-config=contains,field-path=%s", f.FieldPath)
		default:
			fmt.Fprintf(&b, " --field-config=order=%s,field-path=%s", strings.ToLower(f.Order), f.FieldPath)
		}
	}
	return b.String()
}

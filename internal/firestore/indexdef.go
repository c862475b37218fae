package firestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// IndexFile is firestore.indexes.json: the composite (and vector) indexes a
// project declares, and its single-field overrides.
type IndexFile struct {
	Indexes        []IndexDef      `json:"indexes"`
	FieldOverrides []FieldOverride `json:"fieldOverrides"`
}

// FieldOverride sets the single-field indexes of one field of a collection
// group; loupe acts on the collection-group-scoped ones, which collection
// group queries filtering or ordering on the field need.
type FieldOverride struct {
	CollectionGroup string               `json:"collectionGroup"`
	FieldPath       string               `json:"fieldPath"`
	TTL             bool                 `json:"ttl,omitempty"`
	Indexes         []FieldOverrideIndex `json:"indexes"`
}

// FieldOverrideIndex is one single-field index of a field override.
type FieldOverrideIndex struct {
	Order       string `json:"order,omitempty"`
	ArrayConfig string `json:"arrayConfig,omitempty"`
	QueryScope  string `json:"queryScope,omitempty"`
}

// IndexDef is one declared index, in the file's form.
type IndexDef struct {
	CollectionGroup string       `json:"collectionGroup"`
	QueryScope      string       `json:"queryScope,omitempty"` // COLLECTION (the default) or COLLECTION_GROUP
	Fields          []IndexField `json:"fields"`
}

// IndexField is one field of an index: ordered, array-contains, or a vector.
type IndexField struct {
	FieldPath    string        `json:"fieldPath"`
	Order        string        `json:"order,omitempty"`       // ASCENDING or DESCENDING
	ArrayConfig  string        `json:"arrayConfig,omitempty"` // CONTAINS
	VectorConfig *VectorConfig `json:"vectorConfig,omitempty"`
}

// VectorConfig declares a flat vector index of one dimension.
type VectorConfig struct {
	Dimension int       `json:"dimension"`
	Flat      *struct{} `json:"flat,omitempty"`
}

// Query scopes, as the file names them.
const (
	ScopeCollection      = "COLLECTION"
	ScopeCollectionGroup = "COLLECTION_GROUP"
)

// ParseIndexFile parses and checks firestore.indexes.json, naming the index
// and field at fault. Keys loupe does not act on (density, apiScope) are
// ignored.
func ParseIndexFile(data []byte) (*IndexFile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	f := &IndexFile{}
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("parse indexes: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parse indexes: data after the JSON object")
	}
	for i := range f.Indexes {
		if err := f.Indexes[i].check(); err != nil {
			return nil, fmt.Errorf("indexes[%d]: %w", i, err)
		}
	}
	overridden := map[string]bool{}
	for i := range f.FieldOverrides {
		o := &f.FieldOverrides[i]
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("fieldOverrides[%d]: %w", i, err)
		}
		key := o.CollectionGroup + "|" + canonicalPath(o.FieldPath)
		if overridden[key] {
			return nil, fmt.Errorf("fieldOverrides[%d]: field %s of collection group %s is overridden twice", i, o.FieldPath, o.CollectionGroup)
		}
		overridden[key] = true
	}
	return f, nil
}

// check validates a field override and fills in default scopes.
func (o *FieldOverride) check() error {
	if o.CollectionGroup == "" || strings.Contains(o.CollectionGroup, "/") {
		return fmt.Errorf("collectionGroup must be a collection id, not %q", o.CollectionGroup)
	}
	if _, err := ParseFieldPath(o.FieldPath); err != nil {
		return err
	}
	for j := range o.Indexes {
		ix := &o.Indexes[j]
		switch ix.QueryScope {
		case "":
			ix.QueryScope = ScopeCollection
		case ScopeCollection, ScopeCollectionGroup:
		default:
			return fmt.Errorf("indexes[%d]: queryScope must be COLLECTION or COLLECTION_GROUP, not %q", j, ix.QueryScope)
		}
		switch {
		case ix.Order != "" && ix.ArrayConfig != "":
			return fmt.Errorf("indexes[%d]: an index needs one of order and arrayConfig, not both", j)
		case ix.Order == "ASCENDING", ix.Order == "DESCENDING", ix.Order == "" && ix.ArrayConfig == "CONTAINS":
		default:
			return fmt.Errorf("indexes[%d]: order must be ASCENDING or DESCENDING, or arrayConfig CONTAINS", j)
		}
	}
	return nil
}

// serves reports whether the override declares the single-field index of
// field f (its order or CONTAINS) in scope for collection group group.
func (o FieldOverride) serves(group string, f IndexField, scope string) bool {
	if o.CollectionGroup != group || canonicalPath(o.FieldPath) != canonicalPath(f.FieldPath) {
		return false
	}
	for _, ix := range o.Indexes {
		if ix.QueryScope == scope && ix.Order == f.Order && ix.ArrayConfig == f.ArrayConfig {
			return true
		}
	}
	return false
}

// automaticIndexes are the single-field indexes Firestore keeps for a field
// no override names; a new override lists them so as to keep them.
var automaticIndexes = []FieldOverrideIndex{
	{Order: "ASCENDING", QueryScope: ScopeCollection},
	{Order: "DESCENDING", QueryScope: ScopeCollection},
	{ArrayConfig: "CONTAINS", QueryScope: ScopeCollection},
}

// check validates a definition and fills in the default scope.
func (d *IndexDef) check() error {
	if d.CollectionGroup == "" || strings.Contains(d.CollectionGroup, "/") {
		return fmt.Errorf("collectionGroup must be a collection id, not %q", d.CollectionGroup)
	}
	switch d.QueryScope {
	case "":
		d.QueryScope = ScopeCollection
	case ScopeCollection, ScopeCollectionGroup:
	default:
		return fmt.Errorf("queryScope must be COLLECTION or COLLECTION_GROUP, not %q", d.QueryScope)
	}
	if len(d.Fields) == 0 {
		return fmt.Errorf("an index needs at least one field")
	}
	seen := map[string]bool{}
	for j, fd := range d.Fields {
		path, err := ParseFieldPath(fd.FieldPath)
		if err != nil {
			return fmt.Errorf("fields[%d]: %w", j, err)
		}
		if seen[path.String()] {
			return fmt.Errorf("fields[%d]: field %s appears twice", j, path)
		}
		seen[path.String()] = true
		kinds := 0
		if fd.Order != "" {
			kinds++
			if fd.Order != "ASCENDING" && fd.Order != "DESCENDING" {
				return fmt.Errorf("fields[%d]: order must be ASCENDING or DESCENDING, not %q", j, fd.Order)
			}
		}
		if fd.ArrayConfig != "" {
			kinds++
			if fd.ArrayConfig != "CONTAINS" {
				return fmt.Errorf("fields[%d]: arrayConfig must be CONTAINS, not %q", j, fd.ArrayConfig)
			}
		}
		if fd.VectorConfig != nil {
			kinds++
			if fd.VectorConfig.Dimension < 1 || fd.VectorConfig.Dimension > maxVectorDimensions {
				return fmt.Errorf("fields[%d]: vectorConfig.dimension must be between 1 and %d", j, maxVectorDimensions)
			}
			if j != len(d.Fields)-1 {
				return fmt.Errorf("fields[%d]: a vector field must be the last field of an index", j)
			}
		}
		if kinds != 1 {
			return fmt.Errorf("fields[%d]: a field needs exactly one of order, arrayConfig and vectorConfig", j)
		}
	}
	return nil
}

// indexKey identifies a definition regardless of how the file spells it:
// scope, collection group and each field's path and mode, a trailing
// __name__ field dropped when it adds nothing.
func (d IndexDef) indexKey() string {
	fields := d.Fields
	if n := len(fields); n > 1 && fields[n-1].FieldPath == "__name__" {
		fields = fields[:n-1]
	}
	var b strings.Builder
	scope := d.QueryScope
	if scope == "" {
		scope = ScopeCollection
	}
	b.WriteString(scope)
	b.WriteByte('|')
	b.WriteString(d.CollectionGroup)
	for _, f := range fields {
		b.WriteByte('|')
		b.WriteString(canonicalPath(f.FieldPath))
		b.WriteByte(' ')
		b.WriteString(f.mode())
	}
	return b.String()
}

// mode renders a field's kind as the explain plan does: ASC, DESC,
// CONTAINS or VECTOR<dimension>.
func (f IndexField) mode() string {
	switch {
	case f.VectorConfig != nil:
		return fmt.Sprintf("VECTOR<%d>", f.VectorConfig.Dimension)
	case f.ArrayConfig != "":
		return "CONTAINS"
	case f.Order == "DESCENDING":
		return "DESC"
	}
	return "ASC"
}

// properties renders an index's fields as Firestore's explain plan names
// them, e.g. "(city ASC, population DESC, __name__ DESC)".
func (d IndexDef) properties() string {
	parts := make([]string, len(d.Fields))
	for i, f := range d.Fields {
		parts[i] = f.FieldPath + " " + f.mode()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// MergeFieldOverrides returns declared with the single-field indexes of add
// it lacks added (to the override of the same field, or to a new one that
// also keeps the field's automatic indexes), and how many indexes were
// added.
func MergeFieldOverrides(declared, add []FieldOverride) ([]FieldOverride, int) {
	out := make([]FieldOverride, len(declared))
	for i, o := range declared {
		out[i] = o
		out[i].Indexes = slices.Clone(o.Indexes)
	}
	added := 0
	for _, a := range add {
		for _, ix := range a.Indexes {
			i := slices.IndexFunc(out, func(o FieldOverride) bool {
				return o.CollectionGroup == a.CollectionGroup && canonicalPath(o.FieldPath) == canonicalPath(a.FieldPath)
			})
			if i < 0 {
				out = append(out, FieldOverride{CollectionGroup: a.CollectionGroup, FieldPath: a.FieldPath, Indexes: slices.Clone(automaticIndexes)})
				i = len(out) - 1
			}
			if slices.Contains(out[i].Indexes, ix) {
				continue
			}
			out[i].Indexes = append(out[i].Indexes, ix)
			added++
		}
	}
	return out, added
}

// MergeIndexDefs returns declared with the definitions of add it lacks
// appended (a definition is lacking when no declared one has its key),
// and how many were appended.
func MergeIndexDefs(declared, add []IndexDef) ([]IndexDef, int) {
	keys := map[string]bool{}
	for _, d := range declared {
		keys[d.indexKey()] = true
	}
	out := append([]IndexDef{}, declared...)
	for _, d := range add {
		if k := d.indexKey(); !keys[k] {
			keys[k] = true
			out = append(out, d)
		}
	}
	return out, len(out) - len(declared)
}

package firestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// IndexFile is firestore.indexes.json: the composite (and vector) indexes a
// project declares, and its single-field overrides (read, not acted on).
type IndexFile struct {
	Indexes        []IndexDef        `json:"indexes"`
	FieldOverrides []json.RawMessage `json:"fieldOverrides,omitempty"`
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
	return f, nil
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
	fmt.Fprintf(&b, "%s|%s", scope, d.CollectionGroup)
	for _, f := range fields {
		path, _ := ParseFieldPath(f.FieldPath)
		fmt.Fprintf(&b, "|%s %s", path, f.mode())
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

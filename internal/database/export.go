package database

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/identity"
)

// ExportFolder is the database's folder in an export, in firebase-tools'
// layout and loupe's alike: one {namespace}.json per namespace, the
// namespace's data in export format (with priorities).
const ExportFolder = "database_export"

// Export writes every namespace that holds data into root/database_export.
func (e *Engine) Export(root string) error {
	dir := filepath.Join(root, ExportFolder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("database export: %w", err)
	}
	for _, ns := range e.Namespaces() {
		data := append(e.Root(ns).ExportJSON(), '\n')
		if err := atomicfile.Write(filepath.Join(dir, ns+".json"), data, ""); err != nil {
			return fmt.Errorf("database export %s: %w", ns, err)
		}
	}
	return nil
}

// Import replaces every namespace's data with the export at
// root/database_export (no folder: nothing changes). Imported data fires no
// triggers.
func (e *Engine) Import(ctx context.Context, root string) error {
	dir := filepath.Join(root, ExportFolder)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("database import: %w", err)
	}
	data := map[string]*Node{}
	for _, ent := range entries {
		name, ok := strings.CutSuffix(ent.Name(), ".json")
		if !ok || ent.IsDir() {
			continue
		}
		if err := CheckNamespace(name); err != nil {
			return fmt.Errorf("database import: %s: %w", ent.Name(), err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			return fmt.Errorf("database import: %w", err)
		}
		n, err := ParseJSON(raw, nil, nil)
		if err != nil {
			return fmt.Errorf("database import: %s: %w", ent.Name(), err)
		}
		data[name] = n
	}
	names := e.Namespaces()
	for name := range data {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if i > 0 && names[i-1] == name {
			continue
		}
		value := any(nil)
		if n, ok := data[name]; ok {
			value = n
		}
		if _, err := e.Write(ctx, Write{NS: name, Op: OpSet, Value: value, Caller: identity.Owner, Import: true}); err != nil {
			return fmt.Errorf("database import %s: %w", name, err)
		}
	}
	return nil
}

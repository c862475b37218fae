package app

import (
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/firestore"
	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
)

// firestoreIndexes declares to fs the indexes file firebase.json names for
// each database (the object form's is the (default) database's): with
// EnforceIndexes a query needing an undeclared composite index fails as in
// production; without, each such index is logged once. The file is read as
// firebase-tools reads it (comments and a byte-order mark allowed). A file
// that does not exist or does not parse declares no index, with a warning
// (firebase-tools' emulators never read it); under Strict one that does not
// parse is a configuration error.
func (a *App) firestoreIndexes(fs *firestoreemu.Service) error {
	cfg := a.opts.Config
	logger := a.opts.Logger.With("service", "firestore")
	byDatabase := map[string]firestore.IndexFile{}
	for _, entry := range cfg.FirestoreConfigs {
		if entry.Indexes == "" {
			continue
		}
		db := entry.Database
		if db == "" {
			db = config.DefaultDatabase
		}
		path := cfg.Path(entry.Indexes)
		data, err := os.ReadFile(path)
		if errors.Is(err, iofs.ErrNotExist) {
			logger.Warn("Firestore indexes file named in firebase.json does not exist: no indexes are declared for the database", "file", path, "database", db)
			continue
		}
		if err != nil {
			return &ConfigError{fmt.Errorf("firestore indexes: %w", err)}
		}
		file, err := firestore.ParseIndexFile(config.JSONC(data))
		if err != nil && a.opts.Strict {
			return &ConfigError{fmt.Errorf("%s: %w", path, err)}
		}
		if err != nil {
			logger.Warn("Firestore indexes file named in firebase.json does not parse: no indexes are declared for the database (--strict makes this an error)",
				"file", path, "database", db, "err", err)
			continue
		}
		merged := byDatabase[db]
		merged.Indexes = append(merged.Indexes, file.Indexes...)
		merged.FieldOverrides = append(merged.FieldOverrides, file.FieldOverrides...)
		byDatabase[db] = merged
	}
	fs.Engine.DeclareIndexes(byDatabase, a.opts.EnforceIndexes, func(m firestore.MissingIndex) {
		var def []byte
		if m.Index != nil {
			def, _ = json.Marshal(m.Index)
		} else {
			def, _ = json.Marshal(m.FieldOverride)
		}
		logger.Warn("a query needs an index firestore.indexes.json does not declare (production refuses it; `loupe indexes missing --write` adds it)",
			"database", m.Database, "index", string(def), "create", m.Link)
	})
	return nil
}

// firestoreEditions declares to fs the edition firebase.json gives each
// database (emulators.firestore.edition, or a database's own entry).
func (a *App) firestoreEditions(fs *firestoreemu.Service) {
	byID := map[string]firestore.Edition{}
	for id, ed := range a.opts.Config.FirestoreEditions() {
		byID[id] = firestore.EditionStandard
		if ed == config.EditionEnterprise {
			byID[id] = firestore.EditionEnterprise
		}
	}
	fs.Engine.SetEditions(byID)
}

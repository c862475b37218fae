package app

import (
	"context"
	"log/slog"
	"time"

	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/loupe-dev/loupe/internal/storage"
)

// This file is where rules meet the services: the rules files firebase.json
// names are loaded into the rule sets Firestore and Storage consult, and
// watched for edits.

// rulesReloadInterval is how often rules files are checked for changes.
const rulesReloadInterval = 500 * time.Millisecond

// firestoreRules loads firebase.json's Firestore rules file into fs.
func (a *App) firestoreRules(ctx context.Context, fs *firestoreemu.Service) error {
	cfg := a.opts.Config
	if cfg.Firestore == nil || cfg.Firestore.Rules == "" {
		return nil
	}
	return watchRules(ctx, cfg.Path(cfg.Firestore.Rules), &fs.Rules, a.opts.Logger)
}

// storageRules gives st its rules guard: firebase.json's Storage rules file,
// replaced by PUT /internal/setRules, reading Firestore (for firestore.get in
// rules) when fs runs.
func (a *App) storageRules(ctx context.Context, st *storage.Service, fs *firestoreemu.Service) error {
	cfg := a.opts.Config
	g := &guard.Storage{Rules: &guard.Ruleset{}, ProjectDB: "projects/" + a.opts.Project + "/databases/(default)"}
	if fs != nil {
		g.Firestore = fs.Engine
	}
	if cfg.Storage != nil && cfg.Storage.Rules != "" {
		if err := watchRules(ctx, cfg.Path(cfg.Storage.Rules), g.Rules, a.opts.Logger); err != nil {
			return err
		}
	}
	st.SetAuthorizer(g)
	st.OnSetRules = func(source, name string) error {
		rs, err := rules.Compile(source, name)
		if err == nil {
			g.Rules.Set(rs)
		}
		return err
	}
	return nil
}

// watchRules loads a rules file into holder and keeps it current while ctx
// lives: a change that compiles replaces the rules; one that does not is
// logged with its line and column, and the last good rules stay in force.
func watchRules(ctx context.Context, path string, holder *guard.Ruleset, logger *slog.Logger) error {
	w, err := rules.NewWatcher(path)
	if err != nil {
		return err
	}
	holder.Set(w.Ruleset())
	go w.Run(ctx, rulesReloadInterval, func(err error) {
		if err != nil {
			logger.Error("rules not reloaded; the last good rules stay in force", "file", path, "err", err)
			return
		}
		holder.Set(w.Ruleset())
		logger.Info("rules reloaded", "file", path)
	})
	return nil
}

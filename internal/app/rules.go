package app

import (
	"context"

	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/guard"
	storageemu "github.com/loupe-dev/loupe/internal/storage/emulator"
)

// This file is where rules meet the services: one owner (internal/guard)
// loads the rules files firebase.json names, keeps them current, serves the
// rules endpoints, and hands Firestore and Storage their authorizers.

// rules builds the rules owner with firebase.json's rules files loaded.
func (a *App) rules(ctx context.Context) (*guard.Rules, error) {
	owner := guard.New(a.opts.Logger.With("service", "rules"), a.requests)
	if a.opts.Enabled("storage") {
		warning, err := a.opts.Config.ResolveStorageTargets(a.opts.Project)
		if err != nil {
			return nil, err
		}
		if warning != "" {
			a.opts.Logger.Warn(warning)
		}
	}
	if err := owner.LoadConfig(ctx, a.opts.Config, a.opts.Enabled, a.opts.Strict); err != nil {
		return nil, err
	}
	return owner, nil
}

// storageRules gives st its authorizer, reading Firestore (for
// firestore.get() in rules) when fs runs.
func (a *App) storageRules(owner *guard.Rules, st *storageemu.Service, fs *firestoreemu.Service) {
	g := owner.StorageAuthorizer(nil, a.opts.Project)
	if fs != nil {
		g.Firestore = fs.Engine
	}
	st.SetAuthorizer(g)
}

package app

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/console"
	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/server"
)

// defaultUIPort is the console's own port when firebase.json configures
// emulators but names no ui port, as for firebase-tools' Emulator UI.
const defaultUIPort = 4000

// consolePort is emulators.ui.port from firebase.json: the default when an
// emulators block exists and the ui is not disabled, 0 without one.
func consolePort(cfg *config.Firebase) int {
	if len(cfg.Emulators) == 0 {
		return 0
	}
	ui, ok := cfg.Emulators["ui"]
	switch {
	case ok && ui.Enabled != nil && !*ui.Enabled:
		return 0
	case ok && ui.Port != 0:
		return ui.Port
	}
	return defaultUIPort
}

// console builds the console, told about the services built so far (hosting
// comes after it, as it answers every path left) and the server it exports
// and imports with. Under strict credentials it serves nothing and has no port.
func (a *App) console(services []server.Service) server.Service {
	o := a.opts
	if !o.StrictCredentials {
		a.uiPort = consolePort(o.Config)
	}
	opts := console.Options{
		Strict:    o.StrictCredentials,
		Started:   time.Now(),
		ProjectID: o.Project,
		URL:       func() string { return a.server.URL() },
		Port:      func(service string) int { return a.server.Port(service) },
		Env: func() []console.EnvVar {
			var vars []console.EnvVar
			for _, v := range a.ServingEnv(false) {
				vars = append(vars, console.EnvVar{Name: v.Name, Value: v.Value})
			}
			return vars
		},
		UIPort: a.uiPort,
		Logger: o.Logger.With("service", "console"),
		Export: func(ctx context.Context, dir string) error { return a.server.Export(ctx, dir) },
		Import: func(ctx context.Context, dir string) error { return a.server.Import(ctx, dir) },
	}
	if !o.InMemory {
		opts.DataDir = o.DataDir
	}
	for _, svc := range services {
		if fs, ok := svc.(*firestoreemu.Service); ok {
			opts.Firestore = fs.Engine
		}
		opts.Services = append(opts.Services, svc.Name())
	}
	return console.New(opts)
}

// ConsoleURLs are where the console answers once the app listens: the main
// port, and the ui port when it could be bound. None in strict mode.
func (a *App) ConsoleURLs() []string {
	if a.opts.StrictCredentials {
		return nil
	}
	urls := []string{a.server.URL() + console.Prefix + "/"}
	if a.uiPort != 0 && a.server.Port("ui") == a.uiPort {
		urls = append(urls, fmt.Sprintf("http://%s%s/", net.JoinHostPort(a.opts.Host, fmt.Sprint(a.uiPort)), console.Prefix))
	}
	return urls
}

package app

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/console"
	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/functions"
	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/logring"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
)

// defaultUIPort is the console's own port when firebase.json configures
// emulators but names no ui port, as for firebase-tools' Emulator UI.
const defaultUIPort = 4000

// consolePort is emulators.ui.port from firebase.json: the default when an
// emulators block exists and the ui is not disabled (isDefault), 0 without
// one.
func consolePort(cfg *config.Firebase) (port int, isDefault bool) {
	if len(cfg.Emulators) == 0 {
		return 0, false
	}
	ui, ok := cfg.Emulators["ui"]
	switch {
	case ok && ui.Enabled != nil && !*ui.Enabled:
		return 0, false
	case ok && ui.Port != 0:
		return int(ui.Port), false
	}
	return defaultUIPort, true
}

// console builds the console, told about the services built so far (hosting
// comes after it, as it answers every path left) and the server it exports
// and imports with. Under strict credentials it serves nothing and has no port.
func (a *App) console(services []server.Service) server.Service {
	o := a.opts
	if !o.StrictCredentials {
		a.uiPort, a.uiPortDefault = consolePort(o.Config)
	}
	opts := console.Options{
		Strict:    o.StrictCredentials,
		Started:   time.Now(),
		ProjectID: o.Project,
		URL:       func() string { return a.server.URL() },
		Port:      func(service string) int { return a.server.Port(service) },
		Env: func() []console.EnvVar {
			var vars []console.EnvVar
			for _, v := range a.MainServingEnv(false) {
				vars = append(vars, console.EnvVar{Name: v.Name, Value: v.Value})
			}
			return vars
		},
		Exports: func() string { return ShellExports(a.MainServingEnv(false)) },
		State:   a.serviceState(services),
		Logs:    a.logs,
		UIPort:  a.ownUIPort,
		Logger:  o.Logger.With("service", "console"),
		Export:  func(ctx context.Context, dir string) error { return a.server.Export(ctx, dir) },
		Import:  func(ctx context.Context, dir string) error { return a.server.Import(ctx, dir) },
	}
	if !o.InMemory {
		opts.DataDir = o.DataDir
	}
	a.requests.Observe(a.logDecision)
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
	if port := a.ownUIPort(); port != 0 {
		urls = append(urls, fmt.Sprintf("http://%s%s/", net.JoinHostPort(a.opts.Host, fmt.Sprint(port)), console.Prefix))
	}
	return urls
}

// ownUIPort is the console's own port once bound, 0 when it has none.
func (a *App) ownUIPort() int {
	if a.uiPort == 0 {
		return 0
	}
	port, own := a.server.OwnPort("ui")
	if !own {
		return 0
	}
	return port
}

// serviceState tells the console each service's state: functions building,
// crashed or failed; a port firebase.json names that could not be bound; a
// rules file it names that does not exist.
func (a *App) serviceState(services []server.Service) func(string) console.State {
	var owner *guard.Rules
	var fn *functions.Service
	for _, svc := range services {
		switch s := svc.(type) {
		case *guard.Rules:
			owner = s
		case *functions.Service:
			fn = s
		}
	}
	ports := extraPorts(a.opts)
	return func(name string) console.State {
		if name == "functions" && fn != nil {
			switch st, detail := fn.State(); st {
			case "building":
				return console.State{State: console.Building, Detail: detail}
			case "exited":
				return console.State{State: console.Crashed, Detail: detail}
			case "failed":
				return console.State{State: console.Failed, Detail: detail}
			}
		}
		for _, sp := range ports {
			if _, own := a.server.OwnPort(name); sp.Service == name && sp.Port != 0 && !own {
				return console.State{State: console.Degraded,
					Detail: fmt.Sprintf("port %d could not be bound: %s answers on the main port %d only", sp.Port, name, a.server.Port(name))}
			}
		}
		if owner != nil {
			if files := owner.MissingFiles()[name]; len(files) > 0 {
				for i, f := range files {
					if rel, err := filepath.Rel(a.opts.Config.Dir, f); err == nil && filepath.IsLocal(rel) {
						files[i] = rel // as firebase.json names it
					}
				}
				return console.State{State: console.Degraded,
					Detail: fmt.Sprintf("rules file %s does not exist: %s runs open, allowing every request, until it appears", strings.Join(files, ", "), name)}
			}
		}
		return console.State{State: console.Running}
	}
}

// logDecision puts a one-line summary of a client request the request log
// recorded (a rules decision, an Auth call's error, a call passed through,
// a stream once it ended) in the Logs tab, under service rules (Auth calls
// under auth, forwarded ones under passthrough); the full entry stays in
// Requests.
func (a *App) logDecision(e requestlog.Entry) {
	service, level := "rules", logring.Info
	switch {
	case e.PassThrough:
		service = "passthrough"
	case e.Service == "auth":
		service = "auth"
	}
	switch e.Outcome {
	case requestlog.Denied:
		level = logring.Warn
	case requestlog.Error:
		level = logring.Error
	}
	msg := fmt.Sprintf("%s %s %s %s", e.Service, e.Method, e.Path, e.Outcome)
	if e.Rules != nil && e.Rules.Line > 0 {
		msg += fmt.Sprintf(" by line %d of %s", e.Rules.Line, filepath.Base(e.Rules.File))
	} else if e.Rules != nil && e.Outcome == requestlog.Denied {
		msg += ": no allow of " + filepath.Base(e.Rules.File) + " granted it"
	}
	payload := map[string]any{"request": e.ID, "status": e.Status}
	if e.Caller != nil {
		payload["uid"] = e.Caller.UID
	}
	if e.Message != "" {
		payload["message"] = e.Message
	}
	a.logs.Add(logring.Entry{Time: e.Time, Level: level, Service: service, Message: msg, Payload: payload})
}

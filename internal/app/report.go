package app

import (
	"github.com/loupe-dev/loupe/internal/functions"
)

// ServiceAddr is a running service and the host:port where it answers.
type ServiceAddr struct {
	// Name is firebase-tools' name of the emulator (firestore, auth, hub,
	// ui for the console, …), or loupe's for the services it adds
	// (messaging).
	Name string
	Addr string
	// Site names a hosting site after the first (its site or target).
	Site string
}

// Services lists the running services, each at its own port when it has
// one, else at the main port: what the start-up report shows. Valid after
// Listen.
func (a *App) Services() []ServiceAddr {
	var out []ServiceAddr
	for _, e := range a.hubEmulators() {
		out = append(out, ServiceAddr{Name: e.Name, Addr: hostPort(e.Host, e.Port)})
	}
	if a.opts.Enabled("hosting") {
		for i := 1; i < len(a.opts.Config.Hosting); i++ {
			out = append(out, ServiceAddr{Name: "hosting", Site: a.opts.Config.Hosting[i].Name(),
				Addr: hostPort(a.opts.Host, a.server.Port(hostingSitePort(i)))})
		}
	}
	if a.opts.Enabled("messaging") {
		out = append(out, ServiceAddr{Name: "messaging", Addr: hostPort(a.opts.Host, a.server.Port("messaging"))})
	}
	return out
}

// FunctionsFailures lists the functions codebases that do not run: after
// Started, those that failed to load.
func (a *App) FunctionsFailures() []functions.Failure {
	if a.functions == nil {
		return nil
	}
	return a.functions.Failures()
}

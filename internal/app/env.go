package app

import (
	"net"
	"strconv"
	"strings"

	"github.com/loupe-dev/loupe/internal/rates"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/stripe"
)

// EnvVar is one environment variable.
type EnvVar struct{ Name, Value string }

// Env is the environment `firebase emulators:exec` gives a script, for a
// loupe whose services answer at addr(service) ("host:port"): the
// emulatorHosts variables, GCLOUD_PROJECT and FIREBASE_CONFIG (the last
// only when the caller's environment lacks it, which hasConfig reports:
// server.ProjectFirebaseConfig, as the functions get it, so that
// initializeApp() writes where their triggers listen).
func Env(o *Options, addr func(service string) string, hasConfig bool) []EnvVar {
	vars := append(emulatorHosts(o, addr), EnvVar{"GCLOUD_PROJECT", o.Project})
	if !hasConfig {
		vars = append(vars, EnvVar{"FIREBASE_CONFIG", server.ProjectFirebaseConfig(o.Project).JSON()})
	}
	return vars
}

// emulatorHosts are the variables that lead the SDKs to the services at
// addr(service), as firebase-tools sets them for emulators:exec's script
// and for every function: each running service's *_EMULATOR_HOST variables
// (CLOUD_TASKS_EMULATOR_HOST and CLOUD_EVENTARC_EMULATOR_HOST with
// functions) and FIREBASE_EMULATOR_HUB.
func emulatorHosts(o *Options, addr func(service string) string) []EnvVar {
	var vars []EnvVar
	if o.Enabled("firestore") {
		a := addr("firestore")
		vars = append(vars, EnvVar{"FIRESTORE_EMULATOR_HOST", a}, EnvVar{"FIREBASE_FIRESTORE_EMULATOR_ADDRESS", a})
	}
	if o.Enabled("database") {
		vars = append(vars, EnvVar{"FIREBASE_DATABASE_EMULATOR_HOST", addr("database")})
	}
	if o.Enabled("auth") {
		vars = append(vars, EnvVar{"FIREBASE_AUTH_EMULATOR_HOST", addr("auth")})
	}
	if o.Enabled("storage") {
		a := addr("storage")
		// The Cloud Storage client libraries want the scheme.
		vars = append(vars, EnvVar{"FIREBASE_STORAGE_EMULATOR_HOST", a}, EnvVar{"STORAGE_EMULATOR_HOST", "http://" + a})
	}
	if o.Enabled("pubsub") {
		vars = append(vars, EnvVar{"PUBSUB_EMULATOR_HOST", addr("pubsub")})
	}
	if o.Enabled("functions") && len(o.Config.Functions) > 0 {
		// The Admin SDK's task queues reach loupe's Cloud Tasks API, its
		// Eventarc channels loupe's Eventarc Publishing API.
		vars = append(vars, EnvVar{"CLOUD_TASKS_EMULATOR_HOST", addr("functions")},
			EnvVar{"CLOUD_EVENTARC_EMULATOR_HOST", "http://" + addr("eventarc")})
	}
	return append(vars, EnvVar{"FIREBASE_EMULATOR_HUB", addr("hub")})
}

// hostPort joins a host and a port, bracketing IPv6 addresses; a wildcard
// host (0.0.0.0, ::) becomes the loopback address a client can connect to.
func hostPort(host string, port int) string {
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// MainEnv is Env with every service at the main port, which answers for all
// of them: what `loupe serve --print-env` prints before anything listens.
func MainEnv(o *Options, hasConfig bool) []EnvVar {
	a := hostPort(o.Host, o.Port)
	return Env(o, func(string) string { return a }, hasConfig)
}

// MainServingEnv is MainEnv for a listening app: every service at the main
// port it bound (what --print-env prints for a loupe on that port).
func (a *App) MainServingEnv(hasConfig bool) []EnvVar {
	addr := hostPort(a.opts.Host, a.server.Port(""))
	return Env(&a.opts, func(string) string { return addr }, hasConfig)
}

// ServingEnv is Env for a listening app: each service at the port where it
// answers (its official port when bound, else the main port).
func (a *App) ServingEnv(hasConfig bool) []EnvVar {
	return Env(&a.opts, a.servingAddr, hasConfig)
}

// servingAddr is where service answers: its official port when bound, else
// the main port.
func (a *App) servingAddr(service string) string {
	return hostPort(a.opts.Host, a.server.Port(service))
}

// workerHosts are the emulatorHosts variables of the listening app as
// KEY=VALUE, the ones ServingEnv gives `loupe exec`'s command.
func (a *App) workerHosts() []string {
	var env []string
	for _, v := range emulatorHosts(&a.opts, a.servingAddr) {
		env = append(env, v.Name+"="+v.Value)
	}
	return env
}

// ShellExports is vars as POSIX shell export lines, each value single-quoted
// for eval "$(…)": what `loupe serve --print-env` prints, and what the
// console's "Copy the exports" copies.
func ShellExports(vars []EnvVar) string {
	var b strings.Builder
	for _, v := range vars {
		b.WriteString("export " + v.Name + "='" + strings.ReplaceAll(v.Value, "'", `'\''`) + "'\n")
	}
	return b.String()
}

// outsideEnv is what the functions are told of the services outside
// Firebase they call: the operator's Stripe key and rate service when
// Options names them, else the key and addresses of loupe's stand-ins at
// loupeURL. It is added after the codebase's .env files, so it wins.
func outsideEnv(o *Options, loupeURL string) []string {
	var e []string
	if o.StripeSecretKey != "" {
		e = append(e, "STRIPE_SECRET_KEY="+o.StripeSecretKey)
	} else {
		e = append(e, stripe.FunctionEnv(loupeURL)...)
	}
	if o.RatesUpstreamURL != "" {
		e = append(e, "RATES_UPSTREAM_URL="+o.RatesUpstreamURL)
	} else {
		e = append(e, rates.FunctionEnv(loupeURL)...)
	}
	return e
}

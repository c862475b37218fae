// Package app is loupe's composition root: from one Options value it builds
// every service `loupe serve` runs, wires them together (rules into Firestore
// and Storage, Firestore into functions triggers, functions into hosting
// rewrites, the Stripe stand-in into the functions' environment), and runs
// them on one server until its context ends.
//
// The CLI parses flags into Options and calls New, Listen and Run; nothing
// else builds services.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	authemu "github.com/loupe-dev/loupe/internal/auth/emulator"
	"github.com/loupe-dev/loupe/internal/config"
	databaseemu "github.com/loupe-dev/loupe/internal/database/emulator"
	"github.com/loupe-dev/loupe/internal/exports"
	"github.com/loupe-dev/loupe/internal/firestore"
	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/functions"
	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/hosting"
	"github.com/loupe-dev/loupe/internal/hub"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/logring"
	"github.com/loupe-dev/loupe/internal/messaging"
	"github.com/loupe-dev/loupe/internal/passthrough"
	pubsubemu "github.com/loupe-dev/loupe/internal/pubsub/emulator"
	"github.com/loupe-dev/loupe/internal/rates"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
	storageemu "github.com/loupe-dev/loupe/internal/storage/emulator"
	"github.com/loupe-dev/loupe/internal/stripe"
)

// ServiceNames are the services loupe serves, in start order; hosting is last
// because it answers every path no other service claimed.
var ServiceNames = []string{"firestore", "database", "auth", "storage", "pubsub", "messaging", "functions", "hosting"}

// Options say what to serve and where. The zero value of each field is a
// sensible default except Config, which is required.
type Options struct {
	// Project is the default project id.
	Project string
	// Host is the address to listen on; Port the main port (0: a free one).
	Host string
	Port int
	// DataDir is where data persists, one folder per service; ignored when
	// InMemory.
	DataDir  string
	InMemory bool
	// Config is the parsed firebase.json.
	Config *config.Firebase
	// Only names the services to run; empty means all of ServiceNames.
	Only []string
	// Import is an export folder loaded at start, replacing stored data: in
	// loupe's layout, a firebase emulators:export folder or a Firestore
	// managed export.
	Import string
	// HubPort is the Emulator Hub's port; nil means emulators.hub.port from
	// firebase.json, else 4400 when firebase.json has an emulators block,
	// else none (the hub's routes answer on every port all the same).
	HubPort *int
	// StrictPorts makes a taken official-emulator port an error instead of
	// a warning.
	StrictPorts bool
	// PortSearch is how many ports after a taken Port to try before failing.
	PortSearch int
	// ExportOnExit is a folder an export is written to at shutdown, or "".
	ExportOnExit string
	// ForceExport lets ExportOnExit write into a folder that holds other
	// files and no export (--force); the export still replaces only its own
	// entries.
	ForceExport bool
	// ExportFormat is ExportOnExit's layout (exports.FormatLoupe or
	// exports.FormatFirebase); "" means Firebase's when Import is a firebase
	// emulators:export folder, else loupe's.
	ExportFormat string
	// StrictCredentials refuses the owner credential, unsigned tokens and the
	// admin endpoints without the admin credential.
	StrictCredentials bool
	// AdminPort is strict mode's admin port on 127.0.0.1 (0: a free one).
	AdminPort int
	// AllowOrigins are origins of pages, besides this machine's, that may
	// call loupe (--allow-origin); firebase.json's emulators.cors adds more.
	AllowOrigins []string
	// Strict makes a rules file that firebase.json names and that does not
	// exist an error (otherwise a warning, and that service runs open).
	Strict bool
	// EnforceIndexes refuses Firestore queries that need a composite index
	// firestore.indexes.json does not declare, as production does.
	EnforceIndexes bool
	// HistoryBudget bounds the bytes of old Firestore document versions kept
	// for reads at a past read time (0: the engine's default).
	HistoryBudget int64
	// IdleTimeout closes connections whose request body, or whose wait for
	// the next request, is idle this long (0: server.DefaultIdleTimeout).
	IdleTimeout time.Duration
	// RunSchedules runs scheduled functions on their schedules, besides
	// on demand.
	RunSchedules bool
	// StripeSecretKey is the operator's Stripe key (the CLI reads
	// STRIPE_SECRET_KEY): the functions get it and talk to Stripe. "" runs
	// loupe's Stripe stand-in and gives the functions its key and address.
	StripeSecretKey string
	// RatesUpstreamURL is the exchange-rate service the functions ask (the
	// CLI reads RATES_UPSTREAM_URL). "" runs loupe's dated rate table and
	// gives the functions its address.
	RatesUpstreamURL string
	// TempDir is the temporary folder (the CLI reads it as os.TempDir
	// does, from TMPDIR): the Emulator Hub writes its locator file
	// hub-<project>.json there, where firebase-tools looks for it, and
	// export and import paths given over HTTP may lie in it. "" means
	// os.TempDir().
	TempDir string
	// PassThrough are services loupe forwards instead of emulating (auth,
	// storage), to production or to Upstream (host:port of an emulator).
	PassThrough []string
	// HostingSites are the hosting sites or targets to serve (--only
	// hosting:NAME); empty serves every site of firebase.json.
	HostingSites []string
	Upstream     string
	// Logger receives every service's log; nil means slog.Default().
	Logger *slog.Logger
}

// Enabled reports whether the service called name runs (a service passed
// through does not).
func (o *Options) Enabled(name string) bool {
	return (len(o.Only) == 0 || slices.Contains(o.Only, name)) && !slices.Contains(o.PassThrough, name)
}

// App is a built, not yet serving, set of services on one server.
type App struct {
	opts   Options
	server *server.Server
	lock   *os.File
	// emulators are the services built, by firebase-tools' emulator names.
	emulators []string
	// functionsSettled is closed once the functions process runs or failed;
	// nil without functions.
	functionsSettled <-chan struct{}
	// functions is the functions service, nil without functions.
	functions *functions.Service
	// imported is Import converted to loupe's layout, until Run ends.
	imported *exports.Prepared
	uiPort   int // the console's own port, 0 for none
	// uiPortDefault says firebase.json names no ui port (uiPort is 4000).
	uiPortDefault bool
	creds         identity.Credentials
	// logs holds every service's recent log records (the console's Logs tab).
	logs *logring.Ring
	// requests is the request log every service records client requests
	// in, pass-through included (the console's Requests tab).
	requests *requestlog.Log
}

// New builds and wires the enabled services. Rules files named in
// firebase.json are loaded now and watched for changes while ctx lives.
func New(ctx context.Context, opts Options) (*App, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// Every service's logger derives from this one: their records reach the ring too.
	logs := logring.New(logring.DefaultCapacity)
	opts.Logger = slog.New(logring.NewHandler(logs, opts.Logger.Handler()))
	opts, err := checkConfig(opts)
	if err != nil {
		return nil, err
	}
	a := &App{opts: opts, logs: logs, requests: requestlog.New(requestlog.DefaultCapacity)}
	if !opts.InMemory {
		var err error
		if a.lock, err = lockDataDir(opts.DataDir); err != nil {
			return nil, err
		}
		if err := checkDataFormat(opts.DataDir); err != nil {
			a.unlock()
			return nil, err
		}
	}
	creds := identity.Local.WarnTo(opts.Logger)
	if opts.StrictCredentials {
		key, err := signingKey(opts)
		if err != nil {
			a.unlock()
			return nil, err
		}
		creds = identity.Strict(key)
		if err := writeAdminToken(opts, creds); err != nil {
			a.unlock()
			return nil, err
		}
	}
	if opts.Import != "" {
		p, err := exports.Prepare(opts.Import, opts.Project)
		if err != nil {
			a.unlock()
			return nil, err
		}
		for _, n := range p.Notes {
			opts.Logger.Warn(n)
		}
		if opts.ExportFormat == "" && p.Layout == exports.LayoutEmulator {
			opts.ExportFormat = exports.FormatFirebase
		}
		a.imported = p
	}
	a.creds = creds
	origins, err := allowedOrigins(opts)
	if err != nil {
		a.unlock()
		return nil, err
	}
	services, err := a.build(ctx, creds)
	if err != nil {
		a.closeImport()
		a.unlock()
		return nil, err
	}
	ports := extraPorts(opts)
	if a.uiPort != 0 {
		ports = append(ports, server.ServicePort{Service: "ui", Port: a.uiPort, Default: a.uiPortDefault})
	}
	a.server = server.New(server.Options{
		Host:         opts.Host,
		Port:         opts.Port,
		PortSearch:   opts.PortSearch,
		ExtraPorts:   ports,
		StrictPorts:  opts.StrictPorts,
		ExportOnExit: opts.ExportOnExit,
		ExportFormat: opts.ExportFormat,
		ForceExport:  opts.ForceExport,
		Formats:      exports.Converter{Project: opts.Project, Warn: func(msg string) { opts.Logger.Warn(msg) }},
		ProjectID:    opts.Project,
		Logger:       opts.Logger,
		Credentials:  creds,
		DataRoots:    dataRoots(opts),
		AdminPort:    opts.AdminPort,
		AllowOrigins: origins,
		IdleTimeout:  opts.IdleTimeout,
	}, services)
	return a, nil
}

// Listen binds the main port and the official-emulator ports, and warns
// when loupe is reachable from other machines without strict credentials.
func (a *App) Listen() error {
	if err := a.server.Listen(); err != nil {
		return err
	}
	if server.ListensBeyondThisMachine(a.opts.Host) && !a.opts.StrictCredentials {
		a.opts.Logger.Warn("loupe is reachable from other machines, and anyone who reaches it can act as the owner or any user: "+
			"its owner credential and unsigned tokens are for local use only; add --strict-credentials to refuse them", "host", a.opts.Host)
	}
	return nil
}

// URL is the base URL of the main port; valid after Listen.
func (a *App) URL() string { return a.server.URL() }

// AdminURL is strict mode's admin port, where the Admin SDKs' owner
// credential is the admin ("" in local mode); valid after Listen.
func (a *App) AdminURL() string { return a.server.AdminURL() }

// HubAddr is the Emulator Hub's own host:port, the value for
// FIREBASE_EMULATOR_HUB, and false when it has no port of its own. Valid
// after Listen.
func (a *App) HubAddr() (string, bool) {
	port, own := a.server.OwnPort("hub")
	return hostPort(a.opts.Host, port), own
}

// DatabaseAddr is the Realtime Database's own host:port, the value for
// FIREBASE_DATABASE_EMULATOR_HOST, and false when it has no port of its own.
// Valid after Listen.
func (a *App) DatabaseAddr() (string, bool) {
	port, own := a.server.OwnPort("database")
	return hostPort(a.opts.Host, port), own
}

// Ready is closed once Run serves every service.
func (a *App) Ready() <-chan struct{} { return a.server.Ready() }

// Started waits until Run serves every service and the functions process,
// when there is one, runs or has failed to start (it builds in the
// background): what firebase emulators:exec waits for before its script.
func (a *App) Started(ctx context.Context) error {
	for _, c := range []<-chan struct{}{a.Ready(), a.functionsSettled} {
		if c == nil {
			continue
		}
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Routes lists the HTTP patterns every service registered.
func (a *App) Routes() []server.Route { return a.server.Routes() }

// Credentials is the app's credential policy (local or strict mode).
func (a *App) Credentials() identity.Credentials { return a.creds }

// Handler is the root handler of every service, for tests that serve the
// app in process: Open, then Handler, then Close, instead of Listen and Run.
func (a *App) Handler() http.Handler { return a.server.Handler() }

// Open opens the services (loading Import) without binding any port.
func (a *App) Open(ctx context.Context) error { return a.server.Open(ctx) }

// Close closes the services of an app opened with Open.
func (a *App) Close() error {
	defer a.unlock()
	defer a.closeImport()
	return a.server.Close()
}

// Run serves until ctx is done, then stops every service (exporting first
// when ExportOnExit is set).
func (a *App) Run(ctx context.Context) error {
	defer a.unlock()
	defer a.closeImport()
	return a.server.Run(ctx)
}

// closeImport removes the converted copy of Import, if any.
func (a *App) closeImport() {
	if a.imported != nil {
		_ = a.imported.Close()
		a.imported = nil
	}
}

// importDir is the folder in loupe's layout the services load, or "".
func (a *App) importDir() string {
	if a.imported == nil {
		return ""
	}
	return a.imported.Dir
}

func (a *App) unlock() {
	if a.lock != nil {
		a.lock.Close()
		a.lock = nil
	}
}

// build constructs the enabled services, each with its environment, and
// wires them to one another.
func (a *App) build(ctx context.Context, creds identity.Credentials) ([]server.Service, error) {
	o, cfg := a.opts, a.opts.Config
	env := func(name string) server.Env {
		e := server.Env{ProjectID: o.Project, ImportDir: a.importDir(), Config: cfg,
			Logger: o.Logger.With("service", name), Credentials: creds}
		if !o.InMemory {
			e.DataDir = filepath.Join(o.DataDir, name)
		}
		return e
	}
	selfURL := func() string { return a.server.URL() }
	// The request log answers whichever services run, even none of its own.
	services := []server.Service{a.requests}
	var owner *guard.Rules
	if o.Enabled("firestore") || o.Enabled("storage") || o.Enabled("database") {
		var err error
		if owner, err = a.rules(ctx); err != nil {
			return nil, err
		}
		services = append(services, owner)
	}
	var fs *firestoreemu.Service
	if o.Enabled("firestore") {
		var err error
		if fs, err = firestoreemu.New(env("firestore")); err != nil {
			return nil, err
		}
		fs.Engine.SetAuthorizer(owner.FirestoreAuthorizer(fs.Engine))
		fs.Engine.SetHistoryBudget(o.HistoryBudget)
		if err := a.firestoreIndexes(fs); err != nil {
			return nil, err
		}
		a.firestoreEditions(fs)
		services = append(services, fs)
	}
	var db *databaseemu.Service
	if o.Enabled("database") {
		var err error
		if db, err = databaseemu.New(env("database")); err != nil {
			return nil, err
		}
		db.OwnPort = func() (int, bool) { return a.server.OwnPort("database") }
		db.StrictIndexes = o.EnforceIndexes
		db.Rules = owner
		db.Engine.SetAuthorizer(owner.DatabaseAuthorizer())
		owner.OnDatabaseRules(db.RulesChanged)
		services = append(services, db)
	}
	var authSvc *authemu.Service
	if o.Enabled("auth") {
		s, err := authemu.New(env("auth"))
		if err != nil {
			return nil, err
		}
		s.Requests = a.requests // Auth calls join the rules decisions in the request log
		authSvc = s
		services = append(services, s)
	}
	var storageSvc *storageemu.Service
	if o.Enabled("storage") {
		st, err := storageemu.New(env("storage"))
		if err != nil {
			return nil, err
		}
		a.storageRules(owner, st, fs)
		storageSvc = st
		services = append(services, st)
	}
	var pubsubSvc *pubsubemu.Service
	if o.Enabled("pubsub") {
		ps, err := pubsubemu.New(env("pubsub"))
		if err != nil {
			return nil, err
		}
		pubsubSvc = ps
		services = append(services, ps)
	}
	if o.Enabled("messaging") {
		services = append(services, messaging.New(creds))
	}
	var resolve hosting.FunctionProxy
	var trig hub.TriggerSwitch
	if o.Enabled("functions") && len(cfg.Functions) > 0 {
		var engine *firestore.Engine
		if fs != nil {
			engine = fs.Engine
		}
		fn, err := functions.New(env("functions"), engine, selfURL)
		if err != nil {
			return nil, &ConfigError{err}
		}
		resolve, trig, a.functionsSettled, a.functions = fn.Serve, fn, fn.Settled(), fn
		fn.PublicURL = func() string {
			if port, own := a.server.OwnPort("functions"); own {
				return "http://" + hostPort(o.Host, port)
			}
			return selfURL()
		}
		if authSvc != nil {
			authSvc.SetFunctions(fn.Blocking(), fn)
		}
		if storageSvc != nil {
			storageSvc.SetPublisher(fn)
		}
		if db != nil {
			db.SetPublisher(fn)
			fn.DatabaseHost = func() string { return a.servingAddr("database") }
		}
		if pubsubSvc != nil {
			pubsubSvc.Engine.SetPublisher(fn)
			fn.EnsureTopics = pubsubSvc.Engine.EnsureTopics
		}
		fn.RunSchedules = o.RunSchedules
		services = append(services, fn)
		if o.StripeSecretKey == "" {
			// No Stripe keys: the payments function talks to loupe's stand-in.
			services = append(services, stripe.New(env("stripe"), func(w http.ResponseWriter, r *http.Request) bool { return fn.Serve(w, r, "") }))
		}
		if o.RatesUpstreamURL == "" {
			// The rates function's upstream is loupe's dated rate table.
			services = append(services, rates.New(env("rates")))
		}
		fn.ExtraEnv = func() []string { return outsideEnv(&o, selfURL()) }
		fn.EmulatorHosts = a.workerHosts
	}
	services = append(services, hub.New(hub.Options{
		Project:   o.Project,
		TempDir:   o.TempDir,
		Emulators: a.hubEmulators,
		OwnPort:   func() (int, bool) { return a.server.OwnPort("hub") },
		Triggers:  trig,
		Export: func(ctx context.Context, dir string, only []string) error {
			dir, err := a.server.ConfinedPath(dir)
			if err != nil {
				return err
			}
			return a.server.ExportServices(ctx, dir, exports.FormatFirebase, only, false)
		},
		Logger: o.Logger.With("service", "hub"),
	}))
	if len(o.PassThrough) > 0 {
		pt, err := a.passThrough()
		if err != nil {
			return nil, &ConfigError{err}
		}
		services = append(services, pt)
	}
	services = append(services, a.console(services))
	if o.Enabled("hosting") {
		if public := cfg.PublicDir(); public != "" {
			if _, err := os.Stat(public); errors.Is(err, iofs.ErrNotExist) {
				o.Logger.Warn("Hosting public folder named in firebase.json does not exist: hosting serves no files until it does", "service", "hosting", "folder", public)
			}
		}
		h, err := hosting.New(hosting.Options{
			Sites:      hostingSites(cfg),
			SiteOf:     a.hostingSiteOf,
			InitConfig: initConfig(o.Project),
			Functions:  resolve,
		})
		if err != nil {
			return nil, &ConfigError{err}
		}
		services = append(services, h)
	}
	for _, svc := range services {
		if slices.Contains(emulatorNames, svc.Name()) {
			a.emulators = append(a.emulators, svc.Name())
		}
	}
	return services, nil
}

// emulatorNames are the services firebase-tools has an emulator of, by its
// names for them; the hub lists only these (and the console, as "ui").
var emulatorNames = []string{"firestore", "database", "auth", "storage", "pubsub", "functions", "hosting", "hub"}

// hubEmulators is what the hub's GET /emulators lists: each running
// emulator at the port where it answers, as firebase-tools lists it. With
// functions run Eventarc and Cloud Tasks (firebase-tools starts both beside
// them), Eventarc at its own port when firebase.json names one and Cloud
// Tasks where CLOUD_TASKS_EMULATOR_HOST leads, the functions' port. The
// console is its Emulator UI, "ui", unless strict credentials turn it off.
// Those firebase-tools runs as child processes (Firestore, the Realtime
// Database, Pub/Sub) have a pid, loupe's; Hosting's other sites' ports are
// its reservedPorts.
func (a *App) hubEmulators() []hub.Emulator {
	names := a.emulators
	if slices.Contains(names, "functions") {
		names = append(slices.Clip(names), "eventarc", "tasks")
	}
	if !a.opts.StrictCredentials {
		names = append(slices.Clip(names), "ui")
	}
	address := a.bindAddress()
	family := "IPv4"
	if strings.Contains(address, ":") {
		family = "IPv6"
	}
	var out []hub.Emulator
	for _, name := range names {
		port := a.server.Port(name)
		if name == "tasks" {
			port = a.server.Port("functions")
		}
		host, _, _ := net.SplitHostPort(hostPort(address, port))
		e := hub.Emulator{Name: name, Host: host, Port: port, Listen: []hub.Listen{{Address: address, Port: port, Family: family}}}
		switch name {
		case "firestore", "database", "pubsub":
			e.PID = os.Getpid()
		case "hosting":
			for i := 1; i < len(a.opts.Config.Hosting); i++ {
				e.ReservedPorts = append(e.ReservedPorts, a.server.Port(hostingSitePort(i)))
			}
		}
		out = append(out, e)
	}
	return out
}

// bindAddress is the IP address loupe listens on: --host when it is one
// (0.0.0.0 stays 0.0.0.0, as firebase-tools reports it), else the address
// the host name was bound to.
func (a *App) bindAddress() string {
	switch h := a.opts.Host; {
	case h == "":
		return "0.0.0.0"
	case net.ParseIP(h) != nil:
		return h
	}
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(a.server.URL(), "http://"))
	return host
}

// extraPorts lists the official-emulator ports firebase.json gives the
// enabled services and the hub's, in a stable order; firebase-tools'
// default ports, where loupe binds them, are marked Default.
func extraPorts(o Options) []server.ServicePort {
	var ports []server.ServicePort
	hasEmulators := len(o.Config.Emulators) > 0
	for _, name := range ServiceNames {
		e, ok := o.Config.Emulators[name]
		switch {
		case !o.Enabled(name):
		case ok && e.Port != 0:
			ports = append(ports, server.ServicePort{Service: name, Port: int(e.Port)})
		case name == "database" && hasEmulators:
			// The SDKs' connectDatabaseEmulator calls name 9000 more often
			// than firebase.json does.
			ports = append(ports, server.ServicePort{Service: name, Port: defaultDatabasePort, Default: true})
		case name == "pubsub" && hasEmulators:
			// PUBSUB_EMULATOR_HOST is most often firebase-tools' 8085.
			ports = append(ports, server.ServicePort{Service: name, Port: defaultPubSubPort, Default: true})
		case name == "functions" && hasEmulators && len(o.Config.Functions) > 0:
			// connectFunctionsEmulator calls name firebase-tools' 5001.
			ports = append(ports, server.ServicePort{Service: name, Port: defaultFunctionsPort, Default: true})
		}
	}
	// Each hosting site after the first answers on a port of its own, as
	// firebase-tools serves them: the hosting port + 4 + its index, or the
	// next free one.
	if o.Enabled("hosting") {
		base := defaultHostingPort
		if e, ok := o.Config.Emulators["hosting"]; ok && e.Port != 0 {
			base = int(e.Port)
		}
		for i := 1; i < len(o.Config.Hosting); i++ {
			ports = append(ports, server.ServicePort{Service: hostingSitePort(i), Port: base + 4 + i, Default: true})
		}
	}
	// Eventarc is served with the functions, on its own port when
	// firebase.json names one (firebase-tools starts it beside them).
	if e, ok := o.Config.Emulators["eventarc"]; ok && e.Port != 0 && o.Enabled("functions") && len(o.Config.Functions) > 0 {
		ports = append(ports, server.ServicePort{Service: "eventarc", Port: int(e.Port)})
	}
	switch hubEntry, ok := o.Config.Emulators["hub"]; {
	case o.HubPort != nil:
		ports = append(ports, server.ServicePort{Service: "hub", Port: *o.HubPort})
	case ok && hubEntry.Port != 0:
		ports = append(ports, server.ServicePort{Service: "hub", Port: int(hubEntry.Port)})
	case hasEmulators:
		ports = append(ports, server.ServicePort{Service: "hub", Port: defaultHubPort, Default: true})
	}
	return ports
}

// defaultFunctionsPort is the functions emulator's port in firebase-tools.
const defaultFunctionsPort = 5001

// defaultPubSubPort is the Pub/Sub emulator's port in firebase-tools.
const defaultPubSubPort = 8085

// defaultHostingPort is the Hosting emulator's port in firebase-tools.
const defaultHostingPort = 5000

// defaultHubPort is the Emulator Hub's port in firebase-tools.
const defaultHubPort = 4400

// defaultDatabasePort is the Realtime Database emulator's port in
// firebase-tools.
const defaultDatabasePort = 9000

// ConfigError is a mistake in firebase.json found while building services
// (a hosting public folder that does not exist, say).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// signingKey is strict mode's token key: kept in the data dir so that tokens
// outlive a restart, or new for each run in memory.
// allowedOrigins are --allow-origin's and firebase.json's emulators.cors
// origins, normalised; a value that is not an origin is a ConfigError.
func allowedOrigins(o Options) ([]string, error) {
	var out []string
	for _, origin := range append(slices.Clone(o.AllowOrigins), o.Config.CORS...) {
		norm, ok := server.NormalizeOrigin(origin)
		if !ok {
			return nil, &ConfigError{fmt.Errorf("%q is not an origin: give scheme, host and port, as in https://app.example:3000", origin)}
		}
		out = append(out, norm)
	}
	return out, nil
}

// dataRoots are the folders export and import paths given over HTTP must
// lie in: the project folder, the data dir and the temp folder.
func dataRoots(o Options) []string {
	roots := []string{o.TempDir}
	if o.TempDir == "" {
		roots[0] = os.TempDir()
	}
	if o.Config != nil && o.Config.Dir != "" {
		roots = append(roots, o.Config.Dir)
	}
	if !o.InMemory {
		roots = append(roots, o.DataDir)
	}
	for i, r := range roots {
		if abs, err := filepath.Abs(r); err == nil {
			roots[i] = abs
		}
	}
	return roots
}

// writeAdminToken keeps strict mode's admin credential in
// <data-dir>/admin-token (mode 0600), for clients that present it as their
// access token; with --in-memory there is none (use the admin port).
func writeAdminToken(o Options, creds identity.Credentials) error {
	if o.InMemory {
		return nil
	}
	path := filepath.Join(o.DataDir, "admin-token")
	if err := atomicfile.Write(path, []byte(creds.AdminToken()+"\n"), ""); err != nil {
		return fmt.Errorf("strict credentials: write the admin token: %w", err)
	}
	return os.Chmod(path, 0o600)
}

func signingKey(o Options) ([]byte, error) {
	key := make([]byte, 32)
	if o.InMemory {
		_, err := rand.Read(key)
		return key, err
	}
	path := filepath.Join(o.DataDir, "signing.key")
	if data, err := os.ReadFile(path); err == nil && len(data) == len(key) {
		return data, nil
	}
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("strict credentials: %w", err)
	}
	if err := atomicfile.Write(path, key, ""); err != nil {
		return nil, fmt.Errorf("strict credentials: write %s: %w", path, err)
	}
	return key, os.Chmod(path, 0o600)
}

func hostingSites(cfg *config.Firebase) []hosting.SiteOptions {
	var sites []hosting.SiteOptions
	for _, h := range cfg.Hosting {
		public := ""
		if h.Public != "" {
			public = cfg.Path(h.Public)
		}
		sites = append(sites, hosting.SiteOptions{Public: public, Rewrites: h.Rewrites})
	}
	return sites
}

// hostingSitePort is the port service name of the site after the first at
// index i (firebase.json's hosting array): each has a port of its own.
func hostingSitePort(i int) string { return "hosting-site-" + strconv.Itoa(i) }

// hostingSiteOf is the index of the hosting site a request is for: the
// site whose own port it came to, else the first.
func (a *App) hostingSiteOf(r *http.Request) int {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return 0
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return 0
	}
	for i := 1; i < len(a.opts.Config.Hosting); i++ {
		if p, bound := a.server.OwnPort(hostingSitePort(i)); bound && p == tcp.Port {
			return i
		}
	}
	return 0
}

// initConfig is what /__/firebase/init.json answers locally: the project's
// web configuration, as Firebase Hosting answers it in production, with
// the database and bucket of server.ProjectFirebaseConfig (as
// firebase-tools' hosting emulator constructs it), which the functions and
// `loupe exec`'s command use too.
func initConfig(project string) map[string]string {
	fc := server.ProjectFirebaseConfig(project)
	return map[string]string{
		"projectId":         project,
		"apiKey":            "demo-api-key",
		"authDomain":        project + ".firebaseapp.com",
		"databaseURL":       fc.DatabaseURL,
		"storageBucket":     fc.StorageBucket,
		"messagingSenderId": "000000000000",
		"appId":             "1:000000000000:web:0000000000000000",
	}
}

// passThrough builds the forwarder of the services loupe passes through,
// which records its calls in the request log, and logs where each service
// goes.
func (a *App) passThrough() (*passthrough.Service, error) {
	o := a.opts
	pt, err := passthrough.New(passthrough.Options{Services: o.PassThrough, Upstream: o.Upstream, Project: o.Project, Credentials: a.creds, Log: a.requests,
		Logger: o.Logger.With("service", "passthrough")})
	if err != nil {
		return nil, err
	}
	for _, name := range o.PassThrough {
		o.Logger.Info("passing "+name+" through (not emulated): its requests go, with the caller's credentials, to "+pt.Destination(name),
			"service", name)
	}
	return pt, nil
}

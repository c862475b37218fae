package cli

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/auth"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/console"
	firestoreemu "github.com/loupe-dev/loupe/internal/firestore/emulator"
	"github.com/loupe-dev/loupe/internal/functions"
	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/hosting"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/messaging"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
	"github.com/loupe-dev/loupe/internal/stripe"
	"github.com/spf13/cobra"
)

// ServeOptions are the flags of `loupe serve`.
type ServeOptions struct {
	Project      string
	Host         string
	Port         int
	DataDir      string
	InMemory     bool
	ConfigPath   string
	configSet    bool
	Only         []string
	Import       string
	ExportOnExit string
	Verbose      bool
	// StrictCredentials refuses the owner credential and unsigned tokens.
	StrictCredentials bool

	Stdout, Stderr io.Writer
}

// serviceNames are the services loupe serves, in start order; hosting is last
// because it answers every path no other service claimed.
var serviceNames = []string{"firestore", "auth", "storage", "messaging", "functions", "hosting"}

// NewCmdServe builds `loupe serve`. runF replaces the run function in tests.
func NewCmdServe(runF func(context.Context, *ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the app and every emulated Firebase service on one port",
		Args: func(cmd *cobra.Command, args []string) error {
			// --export-on-exit takes an optional folder, also as the next word.
			if len(args) == 1 && opts.ExportOnExit == "." {
				opts.ExportOnExit = args[0]
				return nil
			}
			return noArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			opts.configSet = cmd.Flags().Changed("config")
			if err := opts.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if runF != nil {
				return runF(ctx, opts)
			}
			return runServe(ctx, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Project, "project", "demo-loupe", "default project id")
	f.StringVar(&opts.Host, "host", "127.0.0.1", "address to listen on")
	f.IntVar(&opts.Port, "port", 8080, "port for every service (0 picks a free one)")
	f.StringVar(&opts.DataDir, "data-dir", ".loupe/data", "folder where data persists")
	f.BoolVar(&opts.InMemory, "in-memory", false, "keep data in memory only")
	f.StringVar(&opts.ConfigPath, "config", "firebase.json", "firebase.json to read")
	f.StringSliceVar(&opts.Only, "only", nil, "serve only these services (comma-separated: "+strings.Join(serviceNames, ",")+")")
	f.StringVar(&opts.Import, "import", "", "load an export (emulator-data layout) at start, replacing stored data")
	f.StringVar(&opts.ExportOnExit, "export-on-exit", "", "write an export to this folder at shutdown (default: the --import folder)")
	f.Lookup("export-on-exit").NoOptDefVal = "."
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "log debug detail")
	f.BoolVar(&opts.StrictCredentials, "strict-credentials", false, "refuse the owner credential, unsigned and mock tokens and the /emulator/v1 admin endpoints (for a loupe others can reach)")
	return cmd
}

func (o *ServeOptions) validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return usageErrorf("--port %d is out of range", o.Port)
	}
	for _, name := range o.Only {
		if !slices.Contains(serviceNames, name) {
			return usageErrorf("--only: unknown service %q (known: %s)", name, strings.Join(serviceNames, ", "))
		}
	}
	if o.ExportOnExit == "." {
		if o.Import == "" {
			return usageErrorf("--export-on-exit needs a folder when there is no --import")
		}
		o.ExportOnExit = o.Import
	}
	if o.Import != "" {
		if info, err := os.Stat(o.Import); err != nil || !info.IsDir() {
			return usageErrorf("--import %s is not a folder", o.Import)
		}
	}
	return nil
}

func (o *ServeOptions) enabled(name string) bool {
	return len(o.Only) == 0 || slices.Contains(o.Only, name)
}

func runServe(ctx context.Context, o *ServeOptions) error {
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := config.Load(o.ConfigPath, o.configSet)
	if err != nil {
		return &UsageError{err}
	}
	if o.StrictCredentials {
		key, err := signingKey(o)
		if err != nil {
			return err
		}
		identity.RequireSignedTokens(key)
	}
	var srv *server.Server
	services, err := buildServices(ctx, o, cfg, logger, func() string { return srv.URL() })
	if err != nil {
		return err
	}
	ports := map[string]int{}
	for name, entry := range cfg.Emulators {
		if o.enabled(name) {
			ports[name] = entry.Port
		}
	}
	delete(ports, "ui")
	uiPort := consolePort(cfg)
	if uiPort != 0 && !o.StrictCredentials {
		ports["ui"] = uiPort
	}
	services = addConsole(services, o, cfg, uiPort, logger, func() *server.Server { return srv })
	srv = server.New(server.Options{
		Host:         o.Host,
		Port:         o.Port,
		ServicePorts: ports,
		ExportOnExit: o.ExportOnExit,
		ProjectID:    o.Project,
		Logger:       logger,
		Strict:       o.StrictCredentials,
	}, services)
	if err := srv.Listen(); err != nil {
		return err
	}
	if !isLoopback(o.Host) && !o.StrictCredentials {
		logger.Warn("loupe is reachable from other machines, and anyone who reaches it can act as the owner or any user: "+
			"its owner credential and unsigned tokens are for local use only; add --strict-credentials to refuse them", "host", o.Host)
	}
	fmt.Fprintf(o.Stdout, "Loupe is running at %s\n", srv.URL())
	if !o.StrictCredentials {
		fmt.Fprintf(o.Stdout, "Console: %s%s/\n", srv.URL(), console.Prefix)
		if uiPort != 0 && srv.Serves(uiPort) {
			fmt.Fprintf(o.Stdout, "Console: http://%s%s/\n", net.JoinHostPort(o.Host, fmt.Sprint(uiPort)), console.Prefix)
		}
	}
	return srv.Run(ctx)
}

// defaultUIPort is the console's own port when firebase.json configures
// emulators but names no ui port, as firebase-tools' Emulator UI.
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

// addConsole puts the console before hosting (which answers every path
// left), told about the services and the server it exports and imports with.
func addConsole(services []server.Service, o *ServeOptions, cfg *config.Firebase, uiPort int, logger *slog.Logger, srv func() *server.Server) []server.Service {
	opts := console.Options{
		Strict:    o.StrictCredentials,
		Started:   time.Now(),
		ProjectID: o.Project,
		URL:       func() string { return srv().URL() },
		UIPort:    uiPort,
		Logger:    logger.With("service", "console"),
		Export:    func(ctx context.Context, dir string) error { return srv().Export(ctx, dir) },
		Import:    func(ctx context.Context, dir string) error { return srv().Import(ctx, dir) },
	}
	if !o.InMemory {
		opts.DataDir = o.DataDir
	}
	at := len(services)
	for i, svc := range services {
		if fs, ok := svc.(*firestoreemu.Service); ok {
			opts.Firestore = fs.Engine
		}
		if svc.Name() == "hosting" {
			at = i
			continue
		}
		opts.Services = append(opts.Services, console.ServiceInfo{Name: svc.Name(), Port: cfg.Emulators[svc.Name()].Port})
	}
	return slices.Insert(services, at, server.Service(console.New(opts)))
}

// isLoopback reports whether host is an address only this machine reaches.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// signingKey is strict mode's token key: kept in the data dir so that tokens
// outlive a restart, or new for each run with --in-memory.
func signingKey(o *ServeOptions) ([]byte, error) {
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

// buildServices constructs the enabled services with their environments.
func buildServices(ctx context.Context, o *ServeOptions, cfg *config.Firebase, logger *slog.Logger, selfURL func() string) ([]server.Service, error) {
	env := func(name string) server.Env {
		e := server.Env{ProjectID: o.Project, ImportDir: o.Import, Config: cfg, Logger: logger.With("service", name)}
		if !o.InMemory {
			e.DataDir = filepath.Join(o.DataDir, name)
		}
		return e
	}
	var services []server.Service
	var fs *firestoreemu.Service
	if o.enabled("firestore") {
		var err error
		if fs, err = firestoreemu.New(env("firestore")); err != nil {
			return nil, err
		}
		if cfg.Firestore != nil && cfg.Firestore.Rules != "" {
			if err := watchRules(ctx, cfg.Path(cfg.Firestore.Rules), &fs.Rules, logger); err != nil {
				return nil, err
			}
		}
		services = append(services, fs)
	}
	if o.enabled("auth") {
		a, err := auth.New(env("auth"))
		if err != nil {
			return nil, err
		}
		services = append(services, a)
	}
	if o.enabled("storage") {
		st, err := storage.New(env("storage"))
		if err != nil {
			return nil, err
		}
		g := &guard.Storage{Rules: &guard.Ruleset{}, ProjectDB: "projects/" + o.Project + "/databases/(default)"}
		if fs != nil {
			g.Firestore = fs.Engine
		}
		if cfg.Storage != nil && cfg.Storage.Rules != "" {
			if err := watchRules(ctx, cfg.Path(cfg.Storage.Rules), g.Rules, logger); err != nil {
				return nil, err
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
		services = append(services, st)
	}
	if o.enabled("messaging") {
		services = append(services, messaging.New())
	}
	var resolve hosting.FunctionResolver
	if o.enabled("functions") && fs != nil && cfg.Functions != nil && cfg.Functions.Source != "" {
		fn := functions.New(env("functions"), cfg.Functions.Source, fs.Engine, selfURL)
		resolve = fn.Resolve
		services = append(services, fn)
		if os.Getenv("STRIPE_SECRET_KEY") == "" {
			// No Stripe keys: the payments function talks to loupe's stand-in.
			services = append(services, stripe.New(func() (*url.URL, bool) { return fn.Resolve("") }))
			fn.ExtraEnv = func() []string { return stripe.FunctionEnv(selfURL()) }
		}
	}
	if o.enabled("hosting") {
		h, err := hosting.New(hosting.Options{
			Public:     cfg.PublicDir(),
			InitConfig: initConfig(o.Project),
			Rewrites:   rewrites(cfg),
			Functions:  resolve,
		})
		if err != nil {
			return nil, &UsageError{err}
		}
		services = append(services, h)
	}
	return services, nil
}

// rulesReloadInterval is how often rules files are checked for changes.
const rulesReloadInterval = 500 * time.Millisecond

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

func rewrites(cfg *config.Firebase) []config.Rewrite {
	if cfg.Hosting == nil {
		return nil
	}
	return cfg.Hosting.Rewrites
}

// initConfig is what /__/firebase/init.json answers locally: the demo project's
// web configuration, as Firebase Hosting answers it in production.
func initConfig(project string) map[string]string {
	return map[string]string{
		"projectId":         project,
		"apiKey":            "demo-api-key",
		"authDomain":        project + ".firebaseapp.com",
		"storageBucket":     project + ".appspot.com",
		"messagingSenderId": "000000000000",
		"appId":             "1:000000000000:web:0000000000000000",
	}
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/exports"
	"github.com/loupe-dev/loupe/internal/passthrough"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ServeOptions are the flags of `loupe serve`.
type ServeOptions struct {
	Project    string
	Host       string
	Port       int
	DataDir    string
	InMemory   bool
	ConfigPath string
	configSet  bool
	Only       []string
	// HostingSites are the hosting sites or targets --only names
	// (hosting:NAME); set by resolveOnly.
	HostingSites []string
	Import       string
	ExportOnExit string
	// ExportFormat is --export-on-exit's layout: "loupe", "firebase", or ""
	// for the layout of --import.
	ExportFormat string
	// ForceExport lets --export-on-exit write into a folder that holds other files.
	ForceExport bool
	Verbose     bool
	// StrictCredentials refuses the owner credential and unsigned tokens.
	StrictCredentials bool
	// StrictPorts makes a taken official-emulator port an error.
	StrictPorts bool
	// AdminPort is strict mode's admin port (0: a free one).
	AdminPort int
	// AllowOrigins are pages of other hosts that may call loupe.
	AllowOrigins []string
	// HubPort is the Emulator Hub's port, when --hub-port was given.
	HubPort    int
	hubPortSet bool
	portSet    bool
	projectSet bool
	// Strict makes firebase.json's warnings (a rules file that does not exist) errors.
	Strict bool
	// PrintEnv prints the variables that point the SDKs at this loupe, and
	// exits without serving.
	PrintEnv bool
	// EnforceIndexes refuses queries needing an undeclared composite index.
	EnforceIndexes bool
	// PassThrough are services forwarded instead of emulated, to
	// production or to Upstream (host:port).
	PassThrough []string
	Upstream    string
	// HistoryBudget is the MiB of old Firestore document versions kept for
	// reads at a past read time.
	HistoryBudget int
	// IdleTimeout closes a request whose body sends nothing for this long.
	IdleTimeout time.Duration
	// RunSchedules runs scheduled functions on their schedules.
	RunSchedules bool
	// StripeSecretKey, RatesUpstreamURL, tempDir and hasFirebaseConfig
	// come from the environment (STRIPE_SECRET_KEY, RATES_UPSTREAM_URL,
	// TMPDIR, FIREBASE_CONFIG), read once in complete.
	StripeSecretKey   string
	RatesUpstreamURL  string
	tempDir           string
	hasFirebaseConfig bool
	// getenv reads the environment: os.Getenv when nil, or a test's own.
	getenv func(string) string
	// firebaseTools holds firebase-tools' own flags under the emulators:*
	// commands, which also take firebase-tools' defaults; nil under serve
	// and exec.
	firebaseTools *FirebaseToolsOptions
	// notes are warnings about the flags, logged once the log exists.
	notes []string

	Stdout, Stderr io.Writer
}

// defaultProject is the project when neither --project nor .firebaserc
// names one.
const defaultProject = "demo-loupe"

// NewCmdServe builds `loupe serve`. runF replaces the run function in tests.
func NewCmdServe(runF func(context.Context, *ServeOptions) error) *cobra.Command {
	return newCmdServe(runF, os.Getenv, true)
}

// Serve runs `loupe serve args…` in this process as the binary runs it (the
// same flags, checks and start-up lines) until ctx ends, which stops it as
// SIGTERM stops the binary: the data is on disk when Serve returns. What the
// command prints goes to stdout and its log to stderr; getenv stands for
// the environment serve reads (STRIPE_SECRET_KEY, RATES_UPSTREAM_URL,
// FIREBASE_CONFIG, and TMPDIR for the temporary folder). It catches no signal, so that a test process can run
// several loupes side by side (loupetest.Start).
func Serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	cmd := newCmdServe(nil, getenv, false)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{err} })
	return cmd.ExecuteContext(ctx)
}

// newCmdServe builds `loupe serve` reading the environment through getenv;
// with catchSignals, SIGINT and SIGTERM stop it.
func newCmdServe(runF func(context.Context, *ServeOptions) error, getenv func(string) string, catchSignals bool) *cobra.Command {
	opts := &ServeOptions{getenv: getenv}
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
			if err := opts.complete(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			if catchSignals {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return runServe(ctx, opts)
		},
	}
	opts.bind(cmd.Flags())
	cmd.Flags().BoolVar(&opts.PrintEnv, "print-env", false, "print the environment variables (export NAME=value) that point the SDKs at this loupe's main port, and exit")
	return cmd
}

// bind adds the flags that say what to serve and where.
func (o *ServeOptions) bind(f *pflag.FlagSet) {
	f.StringVarP(&o.Project, "project", "P", defaultProject, "default project id, or an alias .firebaserc names (default: .firebaserc's default project, as firebase-tools picks it, else demo-loupe)")
	f.StringVar(&o.Host, "host", "127.0.0.1", "address to listen on")
	f.IntVar(&o.Port, "port", 8080, "main port, where every service answers (0 picks a free one)")
	f.StringVar(&o.DataDir, "data-dir", ".loupe/data", "folder where data persists")
	f.BoolVar(&o.InMemory, "in-memory", false, "keep data in memory only")
	f.StringVarP(&o.ConfigPath, "config", "c", "firebase.json", "firebase.json to read (default: the one in this folder or the nearest parent folder holding one, as firebase-tools finds it)")
	f.StringSliceVar(&o.Only, "only", nil, "serve only these services (comma-separated: "+strings.Join(app.ServiceNames, ",")+")")
	f.StringVar(&o.Import, "import", "", "load an export at start, replacing stored data (loupe's layout, a firebase emulators:export folder or a gcloud firestore export)")
	f.StringVar(&o.ExportOnExit, "export-on-exit", "", "write an export to this folder at shutdown (default: the --import folder)")
	f.StringVar(&o.ExportFormat, "export-format", "", "layout of --export-on-exit: loupe or firebase (default: firebase when --import is a firebase emulators:export, else loupe)")
	f.Lookup("export-on-exit").NoOptDefVal = "."
	f.BoolVar(&o.ForceExport, "force", false, "let --export-on-exit write into a folder that holds other files and no export (only the export's own entries are replaced)")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "log debug detail")
	f.BoolVar(&o.StrictCredentials, "strict-credentials", false, "refuse the owner credential, unsigned and mock tokens and the /emulator/v1 admin endpoints (for a loupe others can reach)")
	f.IntVar(&o.AdminPort, "admin-port", 0, "with --strict-credentials: the port of 127.0.0.1 where the Admin SDKs' owner credential is the admin (0 picks a free one)")
	f.StringArrayVar(&o.AllowOrigins, "allow-origin", nil, "under --strict-credentials, let pages at this origin (https://app.example:3000) call loupe besides this machine's (default mode answers every page, as the official emulators); repeatable (also firebase.json emulators.cors)")
	f.IntVar(&o.HubPort, "hub-port", 0, "Emulator Hub port; 0 picks a free one (default: emulators.hub.port in firebase.json, or 4400 when it has an emulators block, else none)")
	f.BoolVar(&o.Strict, "strict", false, "fail to start when a rules file named in firebase.json does not exist or has warnings (default: warn, and run that service open or with the file)")
	f.BoolVar(&o.EnforceIndexes, "enforce-indexes", false, "refuse Firestore queries that need a composite index firestore.indexes.json does not declare, as production does")
	f.IntVar(&o.HistoryBudget, "history-budget", 64, "MiB of old Firestore document versions kept for reads at a past read time (up to an hour back, as production); past it the oldest go first")
	f.DurationVar(&o.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close a connection whose request body sends nothing, or that waits for its next request, this long (as Google's front end closes idle uploads)")
	f.BoolVar(&o.RunSchedules, "run-schedules", false, "run scheduled functions (onSchedule, pubsub.schedule) on their schedules in their time zones (default: only on demand, as firebase-tools runs them)")
	f.StringSliceVar(&o.PassThrough, "pass-through", nil, "forward these services (auth, database, firestore, storage) to production instead of emulating them, with the caller's credentials (default: firebase.json emulators.passThrough)")
	f.StringVar(&o.Upstream, "upstream", "", "with --pass-through: forward to the emulator at HOST:PORT (another loupe) instead of production")
	f.BoolVar(&o.StrictPorts, "strict-ports", false, "fail to start when an official emulator port from firebase.json is taken (default: warn, and serve that service on the main port)")
}

// complete takes the output streams and which flags were set from cmd, and
// validates the flags.
func (o *ServeOptions) complete(cmd *cobra.Command) error {
	o.Stdout, o.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	o.configSet = cmd.Flags().Changed("config")
	o.hubPortSet = cmd.Flags().Changed("hub-port")
	o.portSet = cmd.Flags().Changed("port")
	o.projectSet = cmd.Flags().Changed("project")
	getenv := o.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	o.StripeSecretKey = getenv("STRIPE_SECRET_KEY")
	o.RatesUpstreamURL = getenv("RATES_UPSTREAM_URL")
	o.tempDir = tempDir(getenv)
	o.hasFirebaseConfig = getenv("FIREBASE_CONFIG") != ""
	if debug := cmd.Flags().Lookup("debug"); debug != nil && debug.Value.String() == "true" {
		o.Verbose = true
	}
	if ft := o.firebaseTools; ft != nil {
		if err := ft.validate(); err != nil {
			return err
		}
		if ft.InspectFunctions != "" {
			o.notes = append(o.notes, "--inspect-functions: loupe does not run the functions under the Node inspector; they run as without it")
		}
	}
	return o.validate()
}

func (o *ServeOptions) validate() error {
	for flag, port := range map[string]int{"--port": o.Port, "--hub-port": o.HubPort, "--admin-port": o.AdminPort} {
		if port < 0 || port > 65535 {
			return usageErrorf("%s %d is out of range", flag, port)
		}
	}
	if o.IdleTimeout <= 0 {
		return usageErrorf("--idle-timeout %v: give a positive duration", o.IdleTimeout)
	}
	if o.HistoryBudget < 1 {
		return usageErrorf("--history-budget %d: give at least 1 (MiB)", o.HistoryBudget)
	}
	if o.PrintEnv && o.Port == 0 {
		return usageErrorf("--print-env needs a fixed --port")
	}
	if err := o.resolveOnly(); err != nil {
		return err
	}
	for _, name := range o.PassThrough {
		if !slices.Contains(passthrough.Services, name) {
			return usageErrorf("--pass-through: loupe forwards %s, not %q", strings.Join(passthrough.Services, " and "), name)
		}
	}
	if o.ExportOnExit == "." {
		if o.Import == "" {
			return usageErrorf("--export-on-exit needs a folder when there is no --import")
		}
		o.ExportOnExit = o.Import
	}
	if o.Import != "" && o.Import == o.ExportOnExit {
		if _, err := os.Stat(o.Import); errors.Is(err, fs.ErrNotExist) {
			// As firebase-tools: the first run of --import d --export-on-exit
			// has nothing to import yet, and writes d at exit.
			o.Import = ""
		}
	}
	if o.Import != "" {
		if info, err := os.Stat(o.Import); err != nil || !info.IsDir() {
			return usageErrorf("--import %s is not a folder", o.Import)
		}
	}
	if o.ExportFormat != "" && o.ExportFormat != exports.FormatLoupe && o.ExportFormat != exports.FormatFirebase {
		return usageErrorf("--export-format %q: known formats are %s and %s", o.ExportFormat, exports.FormatLoupe, exports.FormatFirebase)
	}
	return nil
}

// appOptions reads firebase.json and turns the flags into app options.
func (o *ServeOptions) appOptions() (app.Options, error) {
	path := o.ConfigPath
	if !o.configSet {
		path = config.Locate(".")
	}
	cfg, err := config.Load(path, o.configSet)
	if err != nil {
		return app.Options{}, &UsageError{err}
	}
	flagProject := ""
	if o.projectSet {
		flagProject = o.Project
	}
	o.Project = cfg.ProjectFor(flagProject, defaultProject)
	level := slog.LevelInfo
	if o.Verbose {
		level = slog.LevelDebug
	}
	var hubPort *int
	if o.hubPortSet {
		hubPort = &o.HubPort
	}
	if l, ok := o.firebaseTools.level(); ok {
		level = l
	}
	logger := slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: level}))
	for _, n := range o.notes {
		logger.Warn(n)
	}
	opts := app.Options{
		HubPort:           hubPort,
		Project:           o.Project,
		Host:              o.Host,
		Port:              o.Port,
		DataDir:           o.DataDir,
		InMemory:          o.InMemory,
		Config:            cfg,
		Only:              o.Only,
		HostingSites:      o.HostingSites,
		Import:            o.Import,
		ExportOnExit:      o.ExportOnExit,
		ExportFormat:      o.ExportFormat,
		ForceExport:       o.ForceExport,
		StrictCredentials: o.StrictCredentials,
		AdminPort:         o.AdminPort,
		AllowOrigins:      o.AllowOrigins,
		EnforceIndexes:    o.EnforceIndexes,
		HistoryBudget:     int64(o.HistoryBudget) << 20,
		IdleTimeout:       o.IdleTimeout,
		StrictPorts:       o.StrictPorts,
		RunSchedules:      o.RunSchedules,
		PortSearch:        o.portSearch(),
		Strict:            o.Strict,
		StripeSecretKey:   o.StripeSecretKey,
		RatesUpstreamURL:  o.RatesUpstreamURL,
		TempDir:           o.tempDir,
		PassThrough:       firstSet(o.PassThrough, cfg.PassThrough),
		Upstream:          o.Upstream,
		Logger:            logger,
	}
	o.firebaseTools.defaults(&opts)
	return opts, nil
}

// tempDir is the temporary folder as os.TempDir finds it, but with TMPDIR
// read through getenv: for the binary, os.TempDir() itself.
func tempDir(getenv func(string) string) string {
	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
		if dir := getenv("TMPDIR"); dir != "" {
			return dir
		}
	}
	return os.TempDir()
}

// portSearch is how many ports after the default main port serve may try
// when that one is taken: none for a --port the user chose or with
// --strict-ports, so scripts that point at a port never reach another.
func (o *ServeOptions) portSearch() int {
	if o.portSet || o.StrictPorts {
		return 0
	}
	return 10
}

// newApp builds and binds the app the flags describe.
func (o *ServeOptions) newApp(ctx context.Context) (*app.App, error) {
	opts, err := o.appOptions()
	if err != nil {
		return nil, err
	}
	a, err := app.New(ctx, opts)
	var cfgErr *app.ConfigError
	if errors.As(err, &cfgErr) {
		return nil, &UsageError{err}
	}
	if err != nil {
		return nil, err
	}
	return a, a.Listen()
}

func runServe(ctx context.Context, o *ServeOptions) error {
	if o.PrintEnv {
		opts, err := o.appOptions()
		if err != nil {
			return err
		}
		return printEnv(o.Stdout, app.MainEnv(&opts, o.hasFirebaseConfig))
	}
	a, err := o.newApp(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "Loupe is running at %s\n", a.URL())
	if u := a.AdminURL(); u != "" {
		fmt.Fprintf(o.Stdout, "Admin port (the Admin SDKs' owner credential is the admin here, on this machine only): %s\n", u)
	}
	for _, u := range a.ConsoleURLs() {
		fmt.Fprintf(o.Stdout, "Console: %s\n", u)
	}
	if hub, ok := a.HubAddr(); ok {
		fmt.Fprintf(o.Stdout, "Emulator Hub: FIREBASE_EMULATOR_HUB=%s\n", hub)
	}
	if db, ok := a.DatabaseAddr(); ok {
		fmt.Fprintf(o.Stdout, "Realtime Database: FIREBASE_DATABASE_EMULATOR_HOST=%s\n", db)
	}
	// The report waits for every service and the functions' first load;
	// waiting ends with Run.
	waitCtx, stopWaiting := context.WithCancel(ctx)
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		if a.Started(waitCtx) == nil {
			printReport(o.Stdout, a)
		}
	}()
	err = a.Run(ctx)
	stopWaiting()
	<-reported
	return err
}

// printEnv writes vars as POSIX shell export lines, for eval "$(…)".
func printEnv(w io.Writer, vars []app.EnvVar) error {
	_, err := io.WriteString(w, app.ShellExports(vars))
	return err
}

// resolveOnly reads --only as firebase-tools does: "functions:name" names
// the service before the colon, "hosting:NAME" also the site or target to
// serve (HostingSites), and a firebase-tools
// emulator loupe does not run is left out with a warning; any other name
// is a mistake.
func (o *ServeOptions) resolveOnly() error {
	var only []string
	for _, name := range o.Only {
		name, qualifier, _ := strings.Cut(name, ":")
		if name == "hosting" && qualifier != "" && !slices.Contains(o.Only, "hosting") && !slices.Contains(o.HostingSites, qualifier) {
			o.HostingSites = append(o.HostingSites, qualifier)
		}
		switch why, known := firebaseToolsEmulators[name]; {
		case slices.Contains(app.ServiceNames, name):
			if !slices.Contains(only, name) {
				only = append(only, name)
			}
		case known:
			o.notes = append(o.notes, fmt.Sprintf("--only %s: not starting it: %s", name, why))
		default:
			return usageErrorf("--only: unknown service %q (known: %s)", name, strings.Join(app.ServiceNames, ", "))
		}
	}
	if len(o.Only) > 0 && len(only) == 0 {
		return usageErrorf("--only %s: no emulator loupe runs is named (known: %s)", strings.Join(o.Only, ","), strings.Join(app.ServiceNames, ", "))
	}
	o.Only = only
	return nil
}

// firstSet is flag when the flag was given, else the configuration's value.
func firstSet(flag, config []string) []string {
	if len(flag) > 0 {
		return flag
	}
	return config
}

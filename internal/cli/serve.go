package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/loupe-dev/loupe/internal/config"
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
	f.StringSliceVar(&opts.Only, "only", nil, "serve only these services (comma-separated: "+strings.Join(app.ServiceNames, ",")+")")
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
		if !slices.Contains(app.ServiceNames, name) {
			return usageErrorf("--only: unknown service %q (known: %s)", name, strings.Join(app.ServiceNames, ", "))
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
	a, err := app.New(ctx, app.Options{
		Project:           o.Project,
		Host:              o.Host,
		Port:              o.Port,
		DataDir:           o.DataDir,
		InMemory:          o.InMemory,
		Config:            cfg,
		Only:              o.Only,
		Import:            o.Import,
		ExportOnExit:      o.ExportOnExit,
		StrictCredentials: o.StrictCredentials,
		Logger:            logger,
	})
	var cfgErr *app.ConfigError
	if errors.As(err, &cfgErr) {
		return &UsageError{err}
	}
	if err != nil {
		return err
	}
	if err := a.Listen(); err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "Loupe is running at %s\n", a.URL())
	for _, u := range a.ConsoleURLs() {
		fmt.Fprintf(o.Stdout, "Console: %s\n", u)
	}
	return a.Run(ctx)
}

package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/loupe-dev/loupe/internal/config"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/loupe-dev/loupe/internal/exports"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FirebaseToolsOptions are the flags of firebase-tools' emulators:start and
// emulators:exec that loupe serve's flags do not already cover, with
// firebase-tools' meanings.
type FirebaseToolsOptions struct {
	// LogVerbosity is DEBUG, INFO, QUIET or SILENT.
	LogVerbosity string
	// InspectFunctions is --inspect-functions: "" when not given, "true"
	// without a port, else the port. Accepted; loupe runs no inspector.
	InspectFunctions string
	// UI starts the console on its own port under emulators:exec, which
	// otherwise runs without it.
	UI bool
	// exec is set for emulators:exec.
	exec bool
}

// logVerbosities maps firebase-tools' --log-verbosity to the level of
// loupe's log: QUIET keeps warnings and errors, SILENT nothing.
var logVerbosities = map[string]slog.Level{
	"DEBUG":  slog.LevelDebug,
	"INFO":   slog.LevelInfo,
	"QUIET":  slog.LevelWarn,
	"SILENT": slog.LevelError + 4,
}

// firebaseToolsEmulators are the names firebase-tools' --only takes for
// emulators loupe does not run: each is left out with a warning, as
// firebase-tools leaves out one that firebase.json does not configure.
var firebaseToolsEmulators = map[string]string{
	"eventarc":    "loupe serves Eventarc with functions",
	"dataconnect": "loupe does not emulate Data Connect",
	"apphosting":  "loupe does not emulate App Hosting",
	"extensions":  "loupe does not emulate Extensions",
	"tasks":       "loupe serves Cloud Tasks with functions",
	"ui":          "the console runs with every service",
	"hub":         "the Emulator Hub always runs",
	"logging":     "loupe's log is its standard error",
}

// bindFirebaseTools adds firebase-tools' flags of emulators:start and
// emulators:exec (--ui only to exec, as there).
func (f *FirebaseToolsOptions) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.LogVerbosity, "log-verbosity", "", "One of: DEBUG, INFO, QUIET, SILENT (default INFO; QUIET keeps warnings and errors)")
	fs.StringVar(&f.InspectFunctions, "inspect-functions", "", "accepted for firebase-tools' scripts; loupe does not run the functions under the Node inspector")
	fs.Lookup("inspect-functions").NoOptDefVal = "true"
	if f.exec {
		fs.BoolVar(&f.UI, "ui", false, "run the console on its own port (emulators.ui.port) too; it always answers at /_/console/ on the main port")
	}
}

// validate checks the values as firebase-tools checks them.
func (f *FirebaseToolsOptions) validate() error {
	if _, ok := logVerbosities[strings.ToUpper(f.LogVerbosity)]; f.LogVerbosity != "" && !ok {
		return usageErrorf("--log-verbosity %q: one of DEBUG, INFO, QUIET, SILENT", f.LogVerbosity)
	}
	if p := f.InspectFunctions; p != "" && p != "true" {
		if n, err := strconv.Atoi(p); err != nil || n < 1024 || n > 65535 {
			return usageErrorf("%q is not a valid port for debugging, please pass an integer between 1024 and 65535 or true for a dynamic port", p)
		}
	}
	return nil
}

// level is the log level --log-verbosity asks for, and whether it asked
// (never under serve and exec, where f is nil).
func (f *FirebaseToolsOptions) level() (slog.Level, bool) {
	if f == nil {
		return 0, false
	}
	l, ok := logVerbosities[strings.ToUpper(f.LogVerbosity)]
	return l, ok
}

// defaults gives the app firebase-tools' defaults where the flags and
// firebase.json leave them open (nothing under serve and exec, where f is
// nil): exports in firebase-tools' layout, an Emulator Hub with a port of
// its own so that emulators:export finds it (a free one when firebase.json
// names none), and under emulators:exec no console port without --ui.
func (f *FirebaseToolsOptions) defaults(opts *app.Options) {
	if f == nil {
		return
	}
	if opts.ExportFormat == "" {
		opts.ExportFormat = exports.FormatFirebase
	}
	cfg := opts.Config
	if _, ok := cfg.Emulators["hub"]; opts.HubPort == nil && !ok {
		opts.HubPort = new(int)
	}
	if f.exec && !f.UI && len(cfg.Emulators) > 0 {
		ui := cfg.Emulators["ui"]
		ui.Enabled = new(bool)
		cfg.Emulators["ui"] = ui
	}
}

// takeOptionalValues moves the values of --export-on-exit [dir] and
// --inspect-functions [port] that pflag left among the arguments (a flag
// with an optional value takes it only as --flag=value) back into the
// flags, keeping at least keep arguments.
func (o *ServeOptions) takeOptionalValues(args []string, keep int) []string {
	for len(args) > keep {
		switch {
		case o.ExportOnExit == ".":
			o.ExportOnExit, args = args[0], args[1:]
		case o.firebaseTools.InspectFunctions == "true" && isDigits(args[0]):
			o.firebaseTools.InspectFunctions, args = args[0], args[1:]
		default:
			return args
		}
	}
	return args
}

func isDigits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}

// firebaseToolsExit gives an error of an emulators:* command
// firebase-tools' exit status: 1 for every failure of its own (a usage
// mistake included), the script's status for emulators:exec.
func firebaseToolsExit(err error) error {
	var usage *UsageError
	if errors.As(err, &usage) {
		return errors.New(err.Error())
	}
	return err
}

// newFirebaseToolsCmd builds one emulators:* command: serve's flags and
// firebase-tools' own, in memory unless --data-dir, exiting as
// firebase-tools exits. args are the arguments left after the flags.
func newFirebaseToolsCmd(use, short string, nargs int, exec bool, run func(cmd *cobra.Command, o *ServeOptions, args []string) error) *cobra.Command {
	opts := &ServeOptions{getenv: os.Getenv, firebaseTools: &FirebaseToolsOptions{exec: exec}}
	var rest []string
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		GroupID: groupEmulator,
		Args: func(cmd *cobra.Command, args []string) error {
			rest = opts.takeOptionalValues(args, nargs)
			switch {
			case len(rest) > nargs && exec:
				return fmt.Errorf("too many arguments: give the script as one quoted word (usage: %s)", cmd.UseLine())
			case len(rest) > nargs:
				return fmt.Errorf("too many arguments (usage: %s)", cmd.UseLine())
			case len(rest) < nargs:
				return fmt.Errorf("missing the script (usage: %s)", cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("data-dir") {
				opts.InMemory = true
			}
			if err := opts.complete(cmd); err != nil {
				return firebaseToolsExit(err)
			}
			return firebaseToolsExit(run(cmd, opts, rest))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	opts.bind(cmd.Flags())
	opts.firebaseTools.bind(cmd.Flags())
	dataDir := cmd.Flags().Lookup("data-dir")
	dataDir.Usage, dataDir.DefValue = "folder where data persists (default: in memory, as firebase-tools keeps it)", ""
	return cmd
}

// NewCmdEmulatorsStart builds `loupe emulators:start`, what `firebase
// emulators:start` is: serve every service until stopped (SIGINT or
// SIGTERM), exporting with --export-on-exit.
func NewCmdEmulatorsStart() *cobra.Command {
	return newFirebaseToolsCmd("emulators:start", "Serve every emulated service until stopped, as firebase emulators:start (its flags, in memory)", 0, false,
		func(cmd *cobra.Command, o *ServeOptions, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, o)
		})
}

// NewCmdEmulatorsExec builds `loupe emulators:exec SCRIPT`, what
// `firebase emulators:exec` is: serve, run SCRIPT through the shell with
// the services' environment, stop, and exit with the script's status.
func NewCmdEmulatorsExec() *cobra.Command {
	return newFirebaseToolsCmd("emulators:exec SCRIPT", "Start the emulated services, run a script through the shell, stop, and exit with its status, as firebase emulators:exec", 1, true,
		func(cmd *cobra.Command, o *ServeOptions, args []string) error {
			e := &ExecOptions{ServeOptions: *o, Command: shellCommand(args[0]), Script: args[0], Stdin: cmd.InOrStdin()}
			return runExec(cmd.Context(), e)
		})
}

// shellCommand runs script through the system's shell, as Node's spawn
// with shell: true (firebase-tools' runScript) does.
func shellCommand(script string) []string {
	if runtime.GOOS == "windows" {
		return []string{"cmd.exe", "/d", "/s", "/c", script}
	}
	return []string{"/bin/sh", "-c", script}
}

// firebaseToolsGlobalFlags adds, hidden, firebase-tools' global switches a
// package.json script may put before the command (firebase --debug
// emulators:exec …), so that loupe finds the command after them:
// --debug logs debug detail, the others change nothing (loupe never
// prompts).
func firebaseToolsGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.Bool("debug", false, "log debug detail (firebase-tools' --debug)")
	f.Bool("non-interactive", false, "accepted: loupe never prompts")
	f.BoolP("interactive", "i", false, "accepted: loupe never prompts")
	for _, name := range []string{"debug", "non-interactive", "interactive"} {
		_ = f.MarkHidden(name)
	}
}

// EmulatorsExportOptions are the flags and folder of `loupe emulators:export`.
type EmulatorsExportOptions struct {
	Project string
	Only    []string
	Force   bool
	Dir     string
}

// NewCmdEmulatorsExport builds `loupe emulators:export DIR`, what `firebase
// emulators:export` is: find the emulators running for --project through
// the Emulator Hub's locator file, and have them write an export to DIR.
func NewCmdEmulatorsExport() *cobra.Command {
	opts := &EmulatorsExportOptions{}
	cmd := &cobra.Command{
		Use:     "emulators:export DIR",
		Short:   "Have the running emulators write an export to DIR, as firebase emulators:export",
		GroupID: groupEmulator,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("usage: %s", cmd.UseLine())
			}
			opts.Dir = args[0]
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The project as serve picks it: the flag (or an alias of
			// .firebaserc), else .firebaserc's default.
			flag := ""
			if cmd.Flags().Changed("project") {
				flag = opts.Project
			}
			if cfg, err := config.Load(config.Locate("."), false); err == nil {
				opts.Project = cfg.ProjectFor(flag, defaultProject)
			}
			return runEmulatorsExport(cmd.Context(), opts, cmd.OutOrStdout(), tempDir(os.Getenv))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	f := cmd.Flags()
	f.StringVarP(&opts.Project, "project", "P", defaultProject, "the project whose running emulators export (default: .firebaserc's default project, else demo-loupe)")
	f.StringSliceVar(&opts.Only, "only", nil, "export only these emulators (comma-separated)")
	f.BoolVarP(&opts.Force, "force", "f", false, "overwrite any export data in the target directory")
	return cmd
}

// runEmulatorsExport asks the hub of o.Project, found through its locator
// file in tmp, to export into o.Dir, with firebase-tools' checks and
// messages.
func runEmulatorsExport(ctx context.Context, o *EmulatorsExportOptions, out io.Writer, tmp string) error {
	locatorFile := filepath.Join(tmp, "hub-"+o.Project+".json")
	data, err := os.ReadFile(locatorFile)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("did not find any running emulators for project %s", o.Project)
	}
	if err != nil {
		return err
	}
	var locator struct{ Origins []string }
	if err := json.Unmarshal(data, &locator); err != nil || len(locator.Origins) == 0 {
		return fmt.Errorf("the emulator hub's locator file %s is not one: %v", locatorFile, err)
	}
	origin := locator.Origins[0]
	noReply := fmt.Errorf("the emulator hub for %s did not respond to a status check. If this error continues try shutting down all running emulators and deleting the file %s", o.Project, locatorFile)
	statusCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if req, err := http.NewRequestWithContext(statusCtx, http.MethodGet, origin+"/", nil); err != nil {
		return noReply
	} else if resp, err := http.DefaultClient.Do(req); err != nil {
		return noReply
	} else {
		resp.Body.Close()
	}
	fmt.Fprintf(out, "Found running emulator hub for project %s at %s\n", o.Project, origin)
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(out, "Creating export directory %s\n", dir)
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 && !o.Force {
		return errors.New("export already exists in the target directory, re-run with --force to overwrite")
	}
	fmt.Fprintf(out, "Exporting data to: %s\n", dir)
	var targets []string
	for _, name := range o.Only {
		name, _, _ = strings.Cut(name, ":")
		targets = append(targets, name)
	}
	body, _ := json.Marshal(map[string]any{"path": dir, "initiatedBy": "emulators:export", "targets": targets})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, origin+"/_admin/export", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("export request failed, see emulator logs for more information: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var answer struct{ Message string }
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&answer)
		return fmt.Errorf("export request failed, see emulator logs for more information: %s", cmp.Or(answer.Message, resp.Status))
	}
	fmt.Fprintln(out, "Export complete")
	return nil
}

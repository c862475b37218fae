package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/spf13/cobra"
)

// ExecOptions are the flags and command of `loupe exec`.
type ExecOptions struct {
	ServeOptions
	// Command is the program to run and its arguments.
	Command []string
	// Script is emulators:exec's script, which Command runs through the
	// shell; "" under exec.
	Script string
	Stdin  io.Reader
}

// ExitStatusError carries the exit status of the command `loupe exec` ran,
// which becomes loupe's own.
type ExitStatusError struct {
	Code int
	Err  error
}

func (e *ExitStatusError) Error() string { return e.Err.Error() }
func (e *ExitStatusError) Unwrap() error { return e.Err }

// NewCmdExec builds `loupe exec`, what `firebase emulators:exec` is: serve,
// run a command against the running services, stop, and exit with the
// command's status. runF replaces the run function in tests.
func NewCmdExec(runF func(context.Context, *ExecOptions) error) *cobra.Command {
	opts := &ExecOptions{}
	cmd := &cobra.Command{
		Use:   "exec [flags] -- COMMAND [ARG...]",
		Short: "Start the emulated services, run a command against them, stop, and exit with its status",
		Long: "Start every emulated service (in memory, on a free main port, unless told otherwise), wait until\n" +
			"they are ready, run COMMAND with the *_EMULATOR_HOST variables, FIREBASE_EMULATOR_HUB and GCLOUD_PROJECT\n" +
			"set as firebase emulators:exec sets them, then stop (exporting with --export-on-exit) and exit with\n" +
			"COMMAND's status.",
		Args: func(cmd *cobra.Command, args []string) error {
			// Flags end at the first word that is not one, so "--" after
			// it is still here. --export-on-exit takes an optional folder,
			// also as the next word: the word before "--".
			if opts.ExportOnExit == "." && len(args) > 1 && args[1] == "--" {
				opts.ExportOnExit, args = args[0], args[1:]
			}
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			if len(args) == 0 {
				return usageErrorf("usage: %s", cmd.UseLine())
			}
			opts.Command = args
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("data-dir") {
				opts.InMemory = true
			}
			opts.Stdin = cmd.InOrStdin()
			if err := opts.complete(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runExec(cmd.Context(), opts)
		},
	}
	cmd.Flags().SetInterspersed(false)
	opts.bind(cmd.Flags())
	opts.Port = 0
	cmd.Flags().Lookup("port").DefValue = "0"
	cmd.Flags().Lookup("data-dir").Usage = "folder where data persists (default: in memory)"
	return cmd
}

func runExec(ctx context.Context, o *ExecOptions) error {
	a, err := o.newApp(ctx)
	if err != nil {
		return err
	}
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- a.Run(serveCtx) }()
	// Until the command runs, an interrupt stops loupe as it stops serve.
	startCtx, stopWaiting := signal.NotifyContext(serveCtx, os.Interrupt, syscall.SIGTERM)
	started := make(chan error, 1)
	go func() { started <- a.Started(startCtx) }()
	select {
	case err := <-started:
		stopWaiting()
		if err != nil {
			stopServing()
			if serveErr := <-served; serveErr != nil {
				fmt.Fprintf(o.Stderr, "loupe: %v\n", serveErr)
			}
			// As a shell reports a command ended by SIGINT.
			return &ExitStatusError{Code: 130, Err: errors.New("interrupted before the command started")}
		}
	case err := <-served:
		stopWaiting()
		return err
	}
	printReport(o.Stdout, a)
	if failed := a.FunctionsFailures(); o.Strict && len(failed) > 0 {
		stopServing()
		if serveErr := <-served; serveErr != nil {
			fmt.Fprintf(o.Stderr, "loupe: %v\n", serveErr)
		}
		return fmt.Errorf("functions codebase %q failed to load, and --strict runs the command only when every codebase loads", failed[0].Codebase)
	}
	runErr := o.run(a)
	stopServing()
	serveErr := <-served
	var status *ExitStatusError
	switch {
	case errors.As(runErr, &status) && serveErr != nil:
		fmt.Fprintf(o.Stderr, "loupe: %v\n", serveErr)
		return runErr
	case runErr != nil:
		return runErr
	default:
		return serveErr
	}
}

// run runs the command with the services' environment, passing on the
// signals loupe gets, and returns its exit status as an ExitStatusError
// unless it is 0.
func (o *ExecOptions) run(a *app.App) error {
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Env = withEnv(os.Environ(), a.ServingEnv(o.hasFirebaseConfig))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		// As a shell answers a command it cannot run.
		return &ExitStatusError{Code: 127, Err: err}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return err
	}
	code := exit.ExitCode()
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal()) // as a shell reports it
	}
	if o.Script != "" {
		return &ExitStatusError{Code: code, Err: fmt.Errorf("script %q exited with code %d", o.Script, code)}
	}
	return &ExitStatusError{Code: code, Err: fmt.Errorf("%s exited with status %d", strings.Join(o.Command, " "), code)}
}

// withEnv is environ with vars set, replacing any earlier values.
func withEnv(environ []string, vars []app.EnvVar) []string {
	out := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(vars, func(v app.EnvVar) bool { return v.Name == name })
	})
	for _, v := range vars {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

// Package cli holds loupe's cobra commands. Each command is an options struct,
// a NewCmdX constructor that binds flags, and a run function that does the work,
// so flag parsing and behaviour are tested apart.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loupe-dev/loupe/internal/version"
	"github.com/spf13/cobra"
)

// UsageError is a mistake in how a command was called (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf builds a UsageError.
func usageErrorf(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ExitCode maps an error from Execute to the process exit code:
// 0 success, 2 bad usage, the command's status for loupe exec, 1 anything
// else.
func ExitCode(err error) int {
	var usage *UsageError
	var status *ExitStatusError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return 2
	case errors.As(err, &status):
		return status.Code
	default:
		return 1
	}
}

// NewRootCmd builds the loupe command tree writing to stdout and stderr.
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "loupe",
		Short:         "Loupe: Firebase's emulators in one binary, and the video feedback marketplace built on them",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Get().String(),
	}
	root.SetVersionTemplate("loupe version {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{err} })
	root.AddGroup(&cobra.Group{ID: groupEmulator, Title: "Emulator commands:"}, &cobra.Group{ID: groupApp, Title: "The marketplace app:"})
	for _, c := range []*cobra.Command{NewCmdServe(nil), NewCmdExec(nil), NewCmdEmulatorsStart(), NewCmdEmulatorsExec(), NewCmdEmulatorsExport(), NewCmdData(), NewCmdRules(), NewCmdIndexes(nil), NewCmdFunctions(), NewCmdMail(), NewCmdMessages(), NewCmdVersion()} {
		c.GroupID = groupEmulator
		root.AddCommand(c)
	}
	firebaseToolsGlobalFlags(root)
	root.AddCommand(newCmdApp())
	root.SetHelpCommand(newCmdHelp())
	root.InitDefaultCompletionCmd()
	rejectUnknownSubcommands(root)
	return root
}

// Command groups of loupe --help, in the order it lists them: the
// emulator's commands first, then the marketplace's.
const (
	groupEmulator = "emulator"
	groupApp      = "app"
)

func init() {
	// Help lists commands in the order they were added (the emulator's
	// most used first), not alphabetically.
	cobra.EnableCommandSorting = false
}

// newCmdApp builds `loupe app`, the group of the marketplace's admin
// commands (users' roles and mentors, categories, requests, notifications).
func newCmdApp() *cobra.Command {
	app := &cobra.Command{Use: "app", Short: "Administer the marketplace app: users, categories, requests, notifications", GroupID: groupApp}
	app.AddCommand(NewCmdUsers(), NewCmdCategories(), NewCmdRequests(), NewCmdNotify())
	return app
}

// newCmdHelp builds `loupe help [COMMAND…]`: the command's help, or a usage
// error for a command that does not exist.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return usageErrorf("no help for %q: no such command", strings.Join(args, " "))
			}
			return cmd.Help()
		},
	}
}

// rejectUnknownSubcommands makes every command group (a command with
// subcommands and no work of its own) answer an unknown subcommand with a
// usage error, and print its help when called bare.
func rejectUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// exactArgs requires n positional arguments, as a usage error otherwise.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("usage: %s", cmd.UseLine())
		}
		return nil
	}
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

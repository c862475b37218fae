package cli

import (
	"errors"
	"fmt"

	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/spf13/cobra"
)

// NewCmdRules builds `loupe rules check FILE`: parse and check a rules file,
// reporting a syntax or check error at file:line:col (exit 1), else each
// warning of the check phase as file:line:col: [W] message, then what the
// file holds. Warnings fail the check only with --strict, as they fail
// `loupe serve --strict`.
func NewCmdRules() *cobra.Command {
	cmd := &cobra.Command{Use: "rules", Short: "Work with security rules files"}
	var strict bool
	check := &cobra.Command{
		Use:   "check FILE",
		Short: "Check that a rules file parses and compiles, and report its warnings",
		Args:  exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			rs, err := guard.Load(args[0])
			var perr *rules.ParseError
			if errors.As(err, &perr) {
				return fmt.Errorf("%s:%d:%d: %s", perr.File, perr.Line, perr.Col, perr.Msg)
			}
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			for _, i := range rs.Issues {
				if _, err := fmt.Fprintf(out, "%s:%d:%d: [%s] %s\n", args[0], i.Line, i.Col, i.Severity, i.Msg); err != nil {
					return err
				}
			}
			if strict && len(rs.Issues) > 0 {
				return fmt.Errorf("%s: %d warning(s), refused under --strict", args[0], len(rs.Issues))
			}
			_, err = fmt.Fprintf(out, "%s: rules_version %s, service %s: ok\n", args[0], rs.Version, rs.Service)
			return err
		},
	}
	check.Flags().BoolVar(&strict, "strict", false, "fail on warnings too, as loupe serve --strict refuses such a file")
	cmd.AddCommand(check)
	return cmd
}

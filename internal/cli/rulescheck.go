package cli

import (
	"errors"
	"fmt"

	"github.com/loupe-dev/loupe/internal/guard"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/spf13/cobra"
)

// NewCmdRules builds `loupe rules check FILE`: parse and check a rules file,
// reporting the first error at file:line:col (exit 1) or what it holds.
func NewCmdRules() *cobra.Command {
	cmd := &cobra.Command{Use: "rules", Short: "Work with security rules files"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Check that a rules file parses and compiles",
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
			_, err = fmt.Fprintf(c.OutOrStdout(), "%s: rules_version %s, service %s: ok\n", args[0], rs.Version, rs.Service)
			return err
		},
	})
	return cmd
}

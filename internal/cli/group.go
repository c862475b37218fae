package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// adminGroup builds a command group whose subcommands share the targeting
// flags and get connected Admin SDK clients and a printer.
type adminGroup struct {
	cmd    *cobra.Command
	target TargetOptions
}

func newAdminGroup(use, short string) *adminGroup {
	g := &adminGroup{cmd: &cobra.Command{Use: use, Short: short}}
	bindTarget(g.cmd, &g.target)
	return g
}

// add registers a subcommand whose work is f.
func (g *adminGroup) add(sub *cobra.Command, f func(ctx context.Context, a *admin, p printer, args []string) error) *cobra.Command {
	sub.RunE = func(c *cobra.Command, args []string) error {
		a, err := g.target.connect(c.Context())
		if err != nil {
			return err
		}
		defer a.Close()
		return f(c.Context(), a, printer{out: c.OutOrStdout(), json: g.target.JSON}, args)
	}
	g.cmd.AddCommand(sub)
	return sub
}

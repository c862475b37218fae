package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdData builds `loupe data export|import DIR`, run against a running loupe.
func NewCmdData() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "data", Short: "Export or import all data of a running loupe (emulator-data layout)"}
	bindTarget(cmd, &target)
	for _, op := range []struct{ name, short, verb string }{
		{"export", "Write every service's data to DIR", "exported to"},
		{"import", "Replace every service's data with the export in DIR", "imported from"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use:   op.name + " DIR",
			Short: op.short,
			Args:  exactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				dir, err := absPath(args[0])
				if err != nil {
					return err
				}
				client, err := target.emulatorOnly(c.Context(), "data "+op.name)
				if err != nil {
					return err
				}
				var out struct {
					Path string `json:"path"`
				}
				if err := client.do(c.Context(), "POST", "/emulator/v1/"+op.name, map[string]string{"path": dir}, &out); err != nil {
					return err
				}
				p := printer{out: c.OutOrStdout(), json: target.JSON}
				return p.done(op.verb+" "+out.Path, out)
			},
		})
	}
	return cmd
}

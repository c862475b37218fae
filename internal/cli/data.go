package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdData builds `loupe data export|import DIR`, run against a running loupe.
func NewCmdData() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "data", Short: "Export or import all data of a running loupe (loupe's layout, firebase emulators:export, or gcloud firestore export)"}
	bindTarget(cmd, &target)
	for _, op := range []struct{ name, short, verb string }{
		{"export", "Write every service's data to DIR", "exported to"},
		{"import", "Replace every service's data with the export in DIR (any layout loupe reads)", "imported from"},
	} {
		var format string
		var force bool
		sub := &cobra.Command{
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
				body := map[string]any{"path": dir}
				if format != "" {
					body["format"] = format
				}
				if force {
					body["force"] = true
				}
				if err := client.do(c.Context(), "POST", "/emulator/v1/"+op.name, body, &out); err != nil {
					return err
				}
				p := printer{out: c.OutOrStdout(), json: target.JSON}
				return p.done(op.verb+" "+out.Path, out)
			},
		}
		if op.name == "export" {
			sub.Flags().StringVar(&format, "format", "loupe", "layout to write: loupe, or firebase (what firebase emulators:start --import reads)")
			sub.Flags().BoolVar(&force, "force", false, "write into DIR even when it holds other files and no export (only the export's own entries are replaced; nothing else is touched)")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

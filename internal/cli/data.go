package cli

import (
	"os"
	"path/filepath"

	"github.com/loupe-dev/loupe/internal/server"
	"github.com/spf13/cobra"
)

// NewCmdData builds `loupe data export|import DIR`, run against a running loupe.
func NewCmdData() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "data", Short: "Export or import all data of a running loupe (loupe's layout, firebase emulators:export, or gcloud firestore export), or pull a slice of a project into it"}
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
				body := map[string]any{"path": dir}
				if format != "" {
					body["format"] = format
				}
				if force {
					body["force"] = true
				}
				call := func(path string) error {
					body["path"] = path
					return client.do(c.Context(), "POST", "/emulator/v1/"+op.name, body, nil)
				}
				err = call(dir)
				if err != nil && err.Error() == server.ErrOutsideRoots.Error() {
					// loupe takes paths over HTTP only in the project
					// folder, its data dir and the temp folder: this
					// command, the user's own, moves the files itself.
					err = staged(op.name, dir, force, call)
				}
				if err != nil {
					return err
				}
				p := printer{out: c.OutOrStdout(), json: target.JSON}
				return p.done(op.verb+" "+dir, map[string]string{"path": dir})
			},
		}
		if op.name == "export" {
			sub.Flags().StringVar(&format, "format", "loupe", "layout to write: loupe, or firebase (what firebase emulators:start --import reads)")
			sub.Flags().BoolVar(&force, "force", false, "write into DIR even when it holds other files and no export (only the export's own entries are replaced; nothing else is touched)")
		}
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(newCmdPull(&target))
	return cmd
}

// staged runs an export or import of dir through a folder in the temp
// folder: loupe exports there and the export is moved into dir by
// server.MoveExport's rules, or dir is copied there and imported.
func staged(op, dir string, force bool, call func(path string) error) error {
	tmp, err := os.MkdirTemp("", "loupe-data-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if op == "export" {
		out := filepath.Join(tmp, "export")
		if err := call(out); err != nil {
			return err
		}
		return server.MoveExport(out, dir, force)
	}
	in := filepath.Join(tmp, "import")
	if err := server.CopyTree(dir, in); err != nil {
		return err
	}
	return call(in)
}

package cli

import (
	"fmt"

	"github.com/loupe-dev/loupe/internal/version"
	"github.com/spf13/cobra"
)

// NewCmdVersion builds `loupe version`: the version, commit and Go version,
// as `loupe --version` prints them.
func NewCmdVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print loupe's version, the commit it was built from and its Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "loupe version %s\n", version.Get())
			return err
		},
	}
}

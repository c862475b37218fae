package cli

import (
	"github.com/spf13/cobra"
)

// NewCmdMail builds `loupe mail list`: the e-mails a local loupe captured
// (password resets, verifications) with their action links.
func NewCmdMail() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "mail", Short: "Read the e-mails a local loupe captured"}
	bindTarget(cmd, &target)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List captured e-mails with their links",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			client, err := target.emulatorOnly(c.Context(), "mail list")
			if err != nil {
				return err
			}
			var out struct {
				OOBCodes []struct {
					Email       string `json:"email"`
					RequestType string `json:"requestType"`
					OOBLink     string `json:"oobLink"`
				} `json:"oobCodes"`
			}
			if err := client.do(c.Context(), "GET", "/emulator/v1/projects/"+client.project+"/oobCodes", nil, &out); err != nil {
				return err
			}
			rows := [][]string{}
			for _, m := range out.OOBCodes {
				rows = append(rows, []string{m.Email, m.RequestType, m.OOBLink})
			}
			return printer{out: c.OutOrStdout(), json: target.JSON}.table([]string{"TO", "TYPE", "LINK"}, rows, out.OOBCodes)
		},
	})
	return cmd
}

package cli

import (
	"encoding/json"
	"time"

	"github.com/spf13/cobra"
)

// NewCmdMessages builds `loupe messages list`: the push messages a local
// loupe's FCM stand-in was asked to send.
func NewCmdMessages() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "messages", Short: "Read the push inbox of a local loupe"}
	bindTarget(cmd, &target)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List sent push messages",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			client, err := target.emulatorOnly(c.Context(), "messages list")
			if err != nil {
				return err
			}
			var out struct {
				Messages []struct {
					Name    string          `json:"name"`
					Token   string          `json:"token,omitempty"`
					Topic   string          `json:"topic,omitempty"`
					Message json.RawMessage `json:"message"`
					SentAt  time.Time       `json:"sentAt"`
				} `json:"messages"`
			}
			if err := client.do(c.Context(), "GET", "/emulator/v1/projects/"+client.project+"/messaging/messages", nil, &out); err != nil {
				return err
			}
			rows := [][]string{}
			for _, m := range out.Messages {
				var body struct {
					Notification struct{ Title, Body string } `json:"notification"`
				}
				_ = json.Unmarshal(m.Message, &body)
				to := m.Topic
				if m.Token != "" {
					to = m.Token
					if len(to) > 16 {
						to = to[:16] + "…"
					}
				}
				rows = append(rows, []string{m.SentAt.Format(time.RFC3339), to, body.Notification.Title, body.Notification.Body})
			}
			return printer{out: c.OutOrStdout(), json: target.JSON}.table([]string{"SENT", "TO", "TITLE", "BODY"}, rows, out.Messages)
		},
	})
	return cmd
}

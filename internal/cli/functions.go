package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// NewCmdFunctions builds `loupe functions status` and `loupe functions
// events`: the local functions process and its trigger delivery log.
func NewCmdFunctions() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "functions", Short: "Inspect the functions a local loupe runs"}
	bindTarget(cmd, &target)
	type attempt struct {
		EventID   string        `json:"eventId"`
		Trigger   string        `json:"trigger"`
		Document  string        `json:"document"`
		Type      string        `json:"type"`
		Attempt   int           `json:"attempt"`
		Status    int           `json:"status"`
		Error     string        `json:"error,omitempty"`
		Delivered bool          `json:"delivered"`
		At        time.Time     `json:"at"`
		Duration  time.Duration `json:"durationNs"`
	}
	type state struct {
		State  string    `json:"state"`
		Detail string    `json:"detail,omitempty"`
		URL    string    `json:"url,omitempty"`
		Events []attempt `json:"events"`
	}
	fetch := func(c *cobra.Command, name string) (*state, error) {
		client, err := target.emulatorOnly(c.Context(), name)
		if err != nil {
			return nil, err
		}
		var out state
		return &out, client.do(c.Context(), "GET", "/emulator/v1/functions", nil, &out)
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Show whether the functions process is building, running or failed",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := fetch(c, "functions status")
			if err != nil {
				return err
			}
			summary := struct {
				State  string `json:"state"`
				Detail string `json:"detail,omitempty"`
				URL    string `json:"url,omitempty"`
			}{st.State, st.Detail, st.URL}
			return printer{out: c.OutOrStdout(), json: target.JSON}.table([]string{"STATE", "URL", "DETAIL"},
				[][]string{{st.State, st.URL, firstLine(st.Detail)}}, summary)
		},
	})
	var failedOnly bool
	events := &cobra.Command{
		Use:   "events",
		Short: "List trigger deliveries, oldest first: each attempt with its status and duration",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := fetch(c, "functions events")
			if err != nil {
				return err
			}
			rows, shown := [][]string{}, []attempt{}
			for _, a := range st.Events {
				if failedOnly && a.Delivered {
					continue
				}
				result := "delivered"
				if !a.Delivered {
					result = "failed"
					if a.Error != "" {
						result += ": " + firstLine(a.Error)
					}
				}
				shown = append(shown, a)
				rows = append(rows, []string{a.At.Format(time.RFC3339Nano), a.Trigger, a.Document,
					a.Type[strings.LastIndex(a.Type, ".")+1:], strconv.Itoa(a.Attempt), statusText(a.Status), result,
					a.Duration.Round(10 * time.Microsecond).String()})
			}
			return printer{out: c.OutOrStdout(), json: target.JSON}.table(
				[]string{"AT", "TRIGGER", "DOCUMENT", "EVENT", "ATTEMPT", "STATUS", "RESULT", "DURATION"}, rows, shown)
		},
	}
	events.Flags().BoolVar(&failedOnly, "failed", false, "only attempts that failed")
	cmd.AddCommand(events)
	return cmd
}

func statusText(code int) string {
	if code == 0 {
		return "-"
	}
	return strconv.Itoa(code)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

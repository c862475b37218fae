package cli

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
	"github.com/spf13/cobra"
)

// NewCmdFunctions builds `loupe functions status` and `loupe functions
// events`: the local functions process and its trigger delivery log.
func NewCmdFunctions() *cobra.Command {
	var target TargetOptions
	cmd := &cobra.Command{Use: "functions", Short: "Inspect the functions a local loupe runs"}
	bindTarget(cmd, &target)
	type state struct {
		State string `json:"state"`
		// Paused tells that background triggers are switched off.
		Paused bool   `json:"paused"`
		Detail string `json:"detail,omitempty"`
		URL    string `json:"url,omitempty"`
		// Exit is the latest time the process ended by itself.
		Exit *struct {
			At     time.Time `json:"at"`
			Code   *int      `json:"code,omitempty"`
			Signal string    `json:"signal,omitempty"`
		} `json:"exit,omitempty"`
		Restarts  int        `json:"restarts"`
		RestartAt *time.Time `json:"restartAt,omitempty"`
		Build     struct {
			State string    `json:"state"`
			At    time.Time `json:"at"`
		} `json:"build"`
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Show whether the functions process is building, running, exited or failed, its restarts, and whether triggers are paused",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			client, err := target.emulatorOnly(c.Context(), "functions status")
			if err != nil {
				return err
			}
			var st state
			if err := client.do(c.Context(), "GET", "/emulator/v1/functions", nil, &st); err != nil {
				return err
			}
			delivery := "on"
			if st.Paused {
				delivery = "paused"
			}
			lastExit := "-"
			if e := st.Exit; e != nil {
				how := e.Signal
				if e.Code != nil {
					how = "exit " + strconv.Itoa(*e.Code)
				}
				lastExit = how + " at " + e.At.Local().Format(time.TimeOnly)
			}
			return printer{out: c.OutOrStdout(), json: target.JSON}.table(
				[]string{"STATE", "TRIGGERS", "BUILD", "RESTARTS", "LAST EXIT", "URL", "DETAIL"},
				[][]string{{st.State, delivery, cmp.Or(st.Build.State, "-"), strconv.Itoa(st.Restarts), lastExit, cmp.Or(st.URL, "-"),
					summary(st.Detail)}}, st)
		},
	})
	cmd.AddCommand(newCmdFunctionsEvents(&target))
	return cmd
}

// newCmdFunctionsEvents builds `loupe functions events`: the trigger
// delivery log (GET /emulator/v1/functions/events), one row per attempt.
func newCmdFunctionsEvents(target *TargetOptions) *cobra.Command {
	var failedOnly bool
	var trigger, document string
	events := &cobra.Command{
		Use:   "events",
		Short: "List trigger deliveries, oldest first: each attempt with its status, latency and duration",
		Long: "List the trigger delivery log of a local loupe, oldest first. LATENCY is the time from the\n" +
			"commit to the start of the attempt; DURATION is how long the function took to answer.",
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			client, err := target.emulatorOnly(c.Context(), "functions events")
			if err != nil {
				return err
			}
			q := url.Values{}
			if trigger != "" {
				q.Set("trigger", trigger)
			}
			if document != "" {
				q.Set("resource", strings.Trim(document, "/"))
			}
			if failedOnly {
				q.Set("failed", "true")
			}
			var out struct {
				Events []triggers.Attempt `json:"events"`
			}
			if err := client.do(c.Context(), "GET", "/emulator/v1/functions/events?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			rows := [][]string{}
			for _, a := range out.Events {
				result := "delivered"
				if !a.Delivered {
					result = "failed"
					if a.Error != "" {
						result += ": " + firstLine(a.Error)
					}
				}
				rows = append(rows, []string{a.At.Format(time.RFC3339Nano), a.Trigger, a.Resource,
					a.Type[strings.LastIndex(a.Type, ".")+1:], strconv.Itoa(a.Attempt), statusText(a.Status), result,
					a.Latency.Round(10 * time.Microsecond).String(), a.Duration.Round(10 * time.Microsecond).String()})
			}
			return printer{out: c.OutOrStdout(), json: target.JSON}.table(
				[]string{"AT", "TRIGGER", "DOCUMENT", "EVENT", "ATTEMPT", "STATUS", "RESULT", "LATENCY", "DURATION"}, rows, out.Events)
		},
	}
	events.Flags().BoolVar(&failedOnly, "failed", false, "only attempts that failed")
	events.Flags().StringVar(&trigger, "trigger", "", "only this trigger's deliveries (e.g. comment-counters)")
	events.Flags().StringVar(&document, "document", "", "only this document's events (e.g. feedbackRequests/r1)")
	return events
}

func statusText(code int) string {
	if code == 0 {
		return "-"
	}
	return strconv.Itoa(code)
}

// summary is the first line of a multi-line detail, and the first
// compiler error after it when that line only introduces a build's output.
func summary(detail string) string {
	first, rest, _ := strings.Cut(detail, "\n")
	if !strings.HasSuffix(first, ":") {
		return first
	}
	for _, line := range strings.Split(rest, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			return first + " " + line
		}
	}
	return first
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

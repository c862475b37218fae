package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/loupe-dev/loupe/internal/app"
)

// serviceTitles are the start-up report's names of the services, as
// firebase-tools titles its emulators.
var serviceTitles = map[string]string{
	"auth": "Authentication", "functions": "Functions", "firestore": "Firestore", "database": "Database",
	"hosting": "Hosting", "pubsub": "Pub/Sub", "storage": "Storage", "hub": "Emulator Hub", "ui": "Console",
	"messaging": "Messaging (FCM)", "eventarc": "Eventarc", "tasks": "Cloud Tasks",
}

// readyLine is what firebase-tools prints once every emulator is ready;
// tools and people wait for it.
const readyLine = "All emulators ready! It is now safe to connect your app."

// reportDetailLines bounds the lines of a failed codebase's error the
// report repeats (the whole of it is in GET /emulator/v1/functions).
const reportDetailLines = 8

// printReport writes the start-up report of a started app: a table of
// every service and where it answers, the console, each functions codebase
// that failed to load with its error, and the ready line.
func printReport(w io.Writer, a *app.App) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Emulator\tHost:Port")
	for _, s := range a.Services() {
		title := serviceTitles[s.Name]
		if s.Site != "" {
			title += " (" + s.Site + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\n", title, s.Addr)
	}
	_ = tw.Flush()
	for _, u := range a.ConsoleURLs() {
		fmt.Fprintf(w, "View the console at %s\n", u)
	}
	for _, f := range a.FunctionsFailures() {
		lines := strings.Split(f.Detail, "\n")
		if len(lines) > reportDetailLines {
			lines = append(lines[:reportDetailLines], "… (the rest: GET /emulator/v1/functions)")
		}
		fmt.Fprintf(w, "Functions codebase %q (%s) failed to load; its functions do not run:\n    %s\n", f.Codebase, f.Source, strings.Join(lines, "\n    "))
	}
	fmt.Fprintln(w, readyLine)
}

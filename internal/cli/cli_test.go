package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/spf13/cobra"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{usageErrorf("bad"), 2},
		{&ExitStatusError{Code: 7, Err: errors.New("x exited with status 7")}, 7},
		{errors.New("boom"), 1},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// run executes the command tree in process and returns what it printed.
func run(args ...string) (stdout string, err error) {
	var out, errOut bytes.Buffer
	root := NewRootCmd(&out, &errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), err
}

// TestRoot_UsageErrorsExit2WithOneLine: unknown commands and every kind of
// bad call are usage errors (exit 2) whose message is one line; a group
// called bare prints its help.
func TestRoot_UsageErrorsExit2WithOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "loupe"`},
		{[]string{"app", "users", "frobnicate"}, `unknown command "frobnicate" for "loupe app users"`},
		{[]string{"functions", "bogus", "--json"}, `unknown command "bogus" for "loupe functions"`},
		{[]string{"app", "users", "get"}, "usage: loupe app users get UID [flags]"},
		{[]string{"app", "users", "list", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"serve", "extra"}, `loupe serve takes no arguments, got "extra"`},
		{[]string{"serve", "--port", "70000"}, "--port 70000 is out of range"},
		{[]string{"serve", "--hub-port", "-1"}, "--hub-port -1 is out of range"},
		{[]string{"serve", "--only", "firestore,nope"}, `--only: unknown service "nope" (known: firestore, database, auth, storage, pubsub, messaging, functions, hosting)`},
		{[]string{"serve", "--print-env", "--port", "0"}, "--print-env needs a fixed --port"},
		{[]string{"serve", "--export-on-exit"}, "--export-on-exit needs a folder when there is no --import"},
		{[]string{"exec"}, "usage: loupe exec [flags] -- COMMAND [ARG...]"},
		{[]string{"help", "app", "users", "frobnicate"}, `no help for "app users frobnicate": no such command`},
		{[]string{"users", "list"}, `unknown command "users" for "loupe"`},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "loupe completion"`},
		{[]string{"exec", "--only", "nope", "--", "true"}, `--only: unknown service "nope" (known: firestore, database, auth, storage, pubsub, messaging, functions, hosting)`},
	} {
		_, err := run(tc.args...)
		if ExitCode(err) != 2 || err == nil || err.Error() != tc.want {
			t.Errorf("loupe %s: exit %d, %v; want exit 2, %q", strings.Join(tc.args, " "), ExitCode(err), err, tc.want)
		}
	}
	for _, args := range [][]string{{"app"}, {"app", "users"}, {"help", "app", "users"}, {"completion"}} {
		out, err := run(args...)
		if err != nil || !strings.Contains(out, "Available Commands:") {
			t.Errorf("loupe %s: %v, printed %q; want its help", strings.Join(args, " "), err, out)
		}
	}
}

// TestServe_FlagsBecomeOptions: what `loupe serve` passes to its run
// function.
func TestServe_FlagsBecomeOptions(t *testing.T) {
	imp := t.TempDir()
	for _, tc := range []struct {
		args       []string
		exportTo   string
		hubPortSet bool
	}{
		{[]string{"--import", imp, "--export-on-exit"}, imp, false},
		{[]string{"--export-on-exit", "out"}, "out", false},
		{[]string{"--export-on-exit=out", "--hub-port", "0"}, "out", true},
	} {
		var got *ServeOptions
		cmd := NewCmdServe(func(_ context.Context, o *ServeOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("serve %v: %v", tc.args, err)
		}
		if got.ExportOnExit != tc.exportTo || got.hubPortSet != tc.hubPortSet || got.Port != 8080 || got.InMemory {
			t.Errorf("serve %v: export-on-exit %q, hub port set %v, port %d, in memory %v; want %q, %v, 8080, false",
				tc.args, got.ExportOnExit, got.hubPortSet, got.Port, got.InMemory, tc.exportTo, tc.hubPortSet)
		}
		if got.tempDir != os.TempDir() {
			t.Errorf("serve %v: temp folder %q, want os.TempDir() %q", tc.args, got.tempDir, os.TempDir())
		}
	}
	// Serve in a test reads TMPDIR through its getenv: the temp folder,
	// where the hub writes its locator file, is that loupe's own.
	var got *ServeOptions
	tmp := t.TempDir()
	cmd := newCmdServe(func(_ context.Context, o *ServeOptions) error { got = o; return nil },
		func(name string) string { return map[string]string{"TMPDIR": tmp}[name] }, false)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if opts, err := got.appOptions(); err != nil || opts.TempDir != tmp {
		t.Errorf("serve with TMPDIR=%s: app temp folder %q (%v)", tmp, opts.TempDir, err)
	}
}

// TestExec_FlagsAndCommand: `loupe exec` runs in memory on a free port
// unless told otherwise, and everything after its flags is the command.
func TestExec_FlagsAndCommand(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		command  []string
		exportTo string
		inMemory bool
	}{
		{[]string{"node", "--test", "a.mjs"}, []string{"node", "--test", "a.mjs"}, "", true},
		{[]string{"--only", "firestore", "--", "node", "--test"}, []string{"node", "--test"}, "", true},
		{[]string{"--export-on-exit", "out", "--", "sh", "-c", "exit 3"}, []string{"sh", "-c", "exit 3"}, "out", true},
		{[]string{"--data-dir", "d", "--", "true"}, []string{"true"}, "", false},
	} {
		var got *ExecOptions
		cmd := NewCmdExec(func(_ context.Context, o *ExecOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("exec %v: %v", tc.args, err)
		}
		if !reflect.DeepEqual(got.Command, tc.command) || got.ExportOnExit != tc.exportTo || got.InMemory != tc.inMemory || got.Port != 0 {
			t.Errorf("exec %v: command %q, export-on-exit %q, in memory %v, port %d; want %q, %q, %v, 0",
				tc.args, got.Command, got.ExportOnExit, got.InMemory, got.Port, tc.command, tc.exportTo, tc.inMemory)
		}
	}
}

func TestPrintEnv_QuotesForTheShell(t *testing.T) {
	var out bytes.Buffer
	if err := printEnv(&out, []app.EnvVar{{Name: "A", Value: "plain"}, {Name: "B", Value: `it's {"x":1}`}}); err != nil {
		t.Fatal(err)
	}
	if want := "export A='plain'\nexport B='it'\\''s {\"x\":1}'\n"; out.String() != want {
		t.Errorf("printEnv wrote %q, want %q", out.String(), want)
	}
}

func TestWithEnv_ReplacesEarlierValues(t *testing.T) {
	got := withEnv([]string{"PATH=/bin", "FIRESTORE_EMULATOR_HOST=old:1", "X=y=z"}, []app.EnvVar{{Name: "FIRESTORE_EMULATOR_HOST", Value: "new:2"}})
	if want := []string{"PATH=/bin", "X=y=z", "FIRESTORE_EMULATOR_HOST=new:2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("withEnv = %q, want %q", got, want)
	}
}

// TestEmulatorsExec_FlagsAsFirebaseTools: emulators:exec reads
// firebase-tools' flags as firebase-tools does: an optional value as the
// next word, the script as one word anywhere among the flags, --only's
// name:target, and firebase-tools' emulators loupe does not run left out.
func TestEmulatorsExec_FlagsAsFirebaseTools(t *testing.T) {
	imp := t.TempDir()
	for _, tc := range []struct {
		args                 []string
		script, exportTo     string
		inspect, logLevel    string
		only                 []string
		importFrom, notePart string
	}{
		{args: []string{"npm test"}, script: "npm test"},
		{args: []string{"--export-on-exit", "./out", "npm test", "--only", "functions:hello,firestore,eventarc"},
			script: "npm test", exportTo: "./out", only: []string{"functions", "firestore"}, notePart: "--only eventarc: not starting it"},
		{args: []string{"--inspect-functions", "9229", "npm test"}, script: "npm test", inspect: "9229", notePart: "--inspect-functions"},
		{args: []string{"--inspect-functions", "npm test", "--log-verbosity", "quiet"}, script: "npm test", inspect: "true", logLevel: "quiet"},
		{args: []string{"--import", "./missing", "--export-on-exit", "npm test"}, script: "npm test", exportTo: "./missing"},
		{args: []string{"--import", imp, "--export-on-exit", "npm test"}, script: "npm test", exportTo: imp, importFrom: imp},
	} {
		var got *ServeOptions
		var gotArgs []string
		cmd := newFirebaseToolsCmd("emulators:exec SCRIPT", "", 1, true, func(_ *cobra.Command, o *ServeOptions, args []string) error {
			got, gotArgs = o, args
			return nil
		})
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("emulators:exec %q: %v", tc.args, err)
		}
		ft := got.firebaseTools
		if !reflect.DeepEqual(gotArgs, []string{tc.script}) || got.ExportOnExit != tc.exportTo || got.Import != tc.importFrom ||
			ft.InspectFunctions != tc.inspect || ft.LogVerbosity != tc.logLevel || !got.InMemory || (tc.only != nil && !reflect.DeepEqual(got.Only, tc.only)) {
			t.Errorf("emulators:exec %q: script %q, export %q, import %q, inspect %q, verbosity %q, only %q, in memory %v",
				tc.args, gotArgs, got.ExportOnExit, got.Import, ft.InspectFunctions, ft.LogVerbosity, got.Only, got.InMemory)
		}
		if tc.notePart != "" && !strings.Contains(strings.Join(got.notes, "\n"), tc.notePart) {
			t.Errorf("emulators:exec %q: notes %q, want one with %q", tc.args, got.notes, tc.notePart)
		}
	}
}

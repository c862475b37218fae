package config_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestCorpus_LoupeStartsWhereFirebaseToolsStarts starts `loupe serve` on
// each folder of testdata/corpus: firebase.json shapes real projects use,
// written from firebase-tools' JSON schema (schema/firebase-config.json,
// 14.27) and Google's public samples (comments as `firebase init` writes
// them, byte-order marks, functions blocks without source, arrays of
// codebases, hosting arrays with targets and regex rewrites, empty blocks,
// every emulators key, extensions/dataconnect/apphosting blocks, rules
// without semicolons). firebase-tools 14.27 starts on each (checked with
// `firebase emulators:exec` on a folder with a byte-order mark, comments,
// "functions": {}, a hosting array of targets and a string port, --only
// auth; and its src/config.ts, firebaseConfigValidate.ts, rc.ts and
// emulator/controller.ts read side by side for the rest). Each folder may
// hold:
//   - args: more flags, one a line (--only names what the folder starts);
//   - want: lines loupe's log must show, one a line;
//   - get: "PATH STATUS TEXT" lines: a GET and what it must answer.
//
// In firebase.json, PORT_n becomes a free port (the corpus writes them as
// strings, "port": "PORT_0", which firebase-tools reads with parseInt).
func TestCorpus_LoupeStartsWhereFirebaseToolsStarts(t *testing.T) {
	cases, err := os.ReadDir("testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata/corpus", c.Name()))); err != nil {
				t.Fatal(err)
			}
			config := filepath.Join(dir, "firebase.json")
			fillPorts(t, config)
			inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: config,
				Args: lines(t, filepath.Join(dir, "args")), Env: []string{"TMPDIR=" + t.TempDir()}})
			for _, want := range lines(t, filepath.Join(dir, "want")) {
				if !strings.Contains(inst.Log(), want) {
					t.Errorf("the log lacks %q", want)
				}
			}
			for _, get := range lines(t, filepath.Join(dir, "get")) {
				path, rest, _ := strings.Cut(get, " ")
				status, text, _ := strings.Cut(rest, " ")
				res, err := http.Get(inst.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if strconv.Itoa(res.StatusCode) != status || !strings.Contains(string(body), text) {
					t.Errorf("GET %s: %d %q, want %s with %q", path, res.StatusCode, body, status, text)
				}
			}
		})
	}
}

// lines are the non-empty lines of path, none when it does not exist.
func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// fillPorts replaces PORT_0, PORT_1, … in the file with free ports.
func fillPorts(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(data), "PORT_")
	if n == 0 {
		return
	}
	ports := loupetest.FreePorts(t, n)
	text := string(data)
	for i := n - 1; i >= 0; i-- { // PORT_10 before PORT_1
		text = strings.ReplaceAll(text, fmt.Sprintf("PORT_%d", i), strconv.Itoa(ports[i]))
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

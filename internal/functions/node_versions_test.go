package functions

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
)

// TestSDKBin_RefusesAnOldFirebaseFunctions: a firebase-functions older
// than the emulator discovers is named with firebase-tools' message, not
// taken for a missing one.
func TestSDKBin_RefusesAnOldFirebaseFunctions(t *testing.T) {
	dir := t.TempDir()
	sdk := filepath.Join(dir, "node_modules", "firebase-functions")
	if err := os.MkdirAll(sdk, 0o755); err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]string{
		"3.19.0":               "You are using an old version of firebase-functions SDK (3.19.0). Please update firebase-functions SDK to >=3.20.0",
		"3.20.0":               "firebase-functions is not installed in " + dir,
		functionsSDKDevVersion: "firebase-functions is not installed in " + dir,
	} {
		if err := os.WriteFile(filepath.Join(sdk, "package.json"), []byte(`{"name":"firebase-functions","version":"`+version+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := sdkBin(dir); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("firebase-functions %s: %v, want %q", version, err, want)
		}
	}
}

// TestLogNodeVersion_NamesAMismatchAsFirebaseTools: engines.node (or
// firebase.json's runtime) against the machine's node, in firebase-tools'
// words, a warning when they differ.
func TestLogNodeVersion_NamesAMismatchAsFirebaseTools(t *testing.T) {
	out, err := exec.Command("node", "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		t.Skip("no node on PATH")
	}
	host := strings.TrimSpace(string(out))
	for _, tc := range []struct {
		runtime, engines string
		want             string
	}{
		{"", host, `level=INFO msg="Using node@` + host + ` from host."`},
		{"", "12", `level=WARN msg="Your requested \"node\" version \"12\" doesn't match your global version \"` + host + `\". Using node@` + host + ` from host."`},
		{"nodejs12", host, `Your requested \"node\" version \"12\"`},
		{"", "", ""},
	} {
		var log bytes.Buffer
		cb := &codebase{config: config.Codebase{Runtime: tc.runtime}, logger: slog.New(slog.NewTextHandler(&log, nil))}
		pkg := packageJSON{}
		pkg.Engines.Node = tc.engines
		logNodeVersion(context.Background(), cb, pkg)
		if !strings.Contains(log.String(), tc.want) || (tc.want == "" && log.Len() > 0) {
			t.Errorf("runtime %q, engines.node %q: logged %q, want %q", tc.runtime, tc.engines, log.String(), tc.want)
		}
	}
}

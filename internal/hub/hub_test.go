package hub_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestHub_AsFirebaseToolsServesIt: the hub on its own port lists the
// running emulators, answers its locator at / and writes the locator file
// firebase emulators:export reads, exports the services asked for, and
// refuses the trigger switches when no functions run.
func TestHub_AsFirebaseToolsServesIt(t *testing.T) {
	tmp := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--hub-port", "0", "--only", "firestore,auth,hosting"},
		Env: []string{"TMPDIR=" + tmp}})
	_, emulators := loupetest.Call(t, "GET", inst.URL+"/emulators", "")
	hubInfo, _ := emulators["hub"].(map[string]any)
	if hubInfo == nil {
		t.Fatalf("GET /emulators lists no hub: %v", emulators)
	}
	hubURL := fmt.Sprintf("http://127.0.0.1:%v", hubInfo["port"])
	if hubURL == inst.URL {
		t.Fatalf("the hub has no port of its own: %v", hubInfo)
	}
	code, onHub := loupetest.Call(t, "GET", hubURL+"/emulators", "")
	if code != 200 || !reflect.DeepEqual(onHub, emulators) {
		t.Errorf("GET /emulators on the hub port: %d %v; want what the main port answers, %v", code, onHub, emulators)
	}
	_, port, _ := net.SplitHostPort(inst.Host)
	mainPort, _ := strconv.ParseFloat(port, 64)
	for _, name := range []string{"firestore", "auth", "hosting"} {
		e, _ := emulators[name].(map[string]any)
		listen, _ := e["listen"].([]any)
		if e["name"] != name || e["host"] != "127.0.0.1" || e["port"] != mainPort || e["pid"] == nil || len(listen) != 1 {
			t.Errorf("emulators[%s] = %v, want name, host 127.0.0.1, the main port %v, pid and listen", name, e, mainPort)
		}
	}
	if len(emulators) != 4 {
		t.Errorf("GET /emulators lists %d emulators, want firestore, auth, hosting and hub: %v", len(emulators), emulators)
	}

	code, locator := loupetest.Call(t, "GET", hubURL+"/", "")
	if code != 200 || locator["version"] == nil || locator["port"] != hubInfo["port"] ||
		!reflect.DeepEqual(locator["origins"], []any{hubURL}) {
		t.Errorf("GET / on the hub port = %d %v", code, locator)
	}
	data, err := os.ReadFile(filepath.Join(tmp, "hub-demo-loupe.json"))
	var file map[string]any
	if err != nil || json.Unmarshal(data, &file) != nil || !reflect.DeepEqual(file["origins"], locator["origins"]) || file["pid"] != locator["pid"] {
		t.Errorf("locator file: %v %s; want the locator %v", err, data, locator)
	}

	code, body := loupetest.Call(t, "PUT", hubURL+"/functions/disableBackgroundTriggers", "")
	if code != 400 || body["error"] != "The Cloud Functions emulator is not running." {
		t.Errorf("disableBackgroundTriggers without functions = %d %v", code, body)
	}
	// firebase-tools' enable switch answers its 400 as plain text.
	enable, _ := http.NewRequest("PUT", hubURL+"/functions/enableBackgroundTriggers", nil)
	resp, err := http.DefaultClient.Do(enable)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || string(text) != "The Cloud Functions emulator is not running." {
		t.Errorf("enableBackgroundTriggers without functions = %d %q", resp.StatusCode, text)
	}

	dir := filepath.Join(t.TempDir(), "export")
	req := `{"path":"` + dir + `","initiatedBy":"export","targets":["firestore"]}`
	if code, body := loupetest.Call(t, "POST", hubURL+"/_admin/export", req, "Origin", "http://localhost:3000"); code != 403 {
		t.Errorf("export from a page = %d %v, want 403", code, body)
	}
	if code, body := loupetest.Call(t, "POST", hubURL+"/_admin/export", req); code != 200 || body["message"] != "OK" {
		t.Fatalf("export = %d %v", code, body)
	}
	if _, err := os.Stat(filepath.Join(dir, "firebase-export-metadata.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "auth_export")); !os.IsNotExist(err) {
		t.Errorf("auth was exported though targets named only firestore: %v", err)
	}

	if want := "Emulator Hub: FIREBASE_EMULATOR_HUB=" + strings.TrimPrefix(hubURL, "http://") + "\n"; !strings.Contains(inst.Log(), want) {
		t.Errorf("loupe serve did not print %q:\n%s", want, inst.Log())
	}
	inst.Stop(t)
	if _, err := os.Stat(filepath.Join(tmp, "hub-demo-loupe.json")); !os.IsNotExist(err) {
		t.Errorf("locator file left behind after stop: %v", err)
	}
}

// TestHub_StrictRefusesTheSwitchesAndExport: with --strict-credentials the
// hub still lists emulators but acts on nothing.
func TestHub_StrictRefusesTheSwitchesAndExport(t *testing.T) {
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--strict-credentials"}})
	if code, _ := loupetest.Call(t, "GET", inst.URL+"/emulators", ""); code != 200 {
		t.Errorf("GET /emulators = %d", code)
	}
	for _, path := range []string{"/functions/disableBackgroundTriggers", "/functions/enableBackgroundTriggers", "/_admin/export"} {
		if code, _ := loupetest.Call(t, "PUT", inst.URL+path, `{"path":"/tmp/x"}`); code != 403 {
			t.Errorf("PUT %s = %d, want 403", path, code)
		}
	}
}

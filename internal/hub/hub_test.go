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
	t.Parallel()
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
	mainPort, _ := strconv.Atoi(port)
	hubPort := int(hubInfo["port"].(float64))
	// firebase-tools' EmulatorInfo of each: a pid only for the emulators it
	// runs as a child process (Firestore), and the console as the Emulator UI.
	want := map[string]any{
		"firestore": emulator("firestore", mainPort, os.Getpid()), // loupe runs in the test's process
		"auth":      emulator("auth", mainPort, 0),
		"hosting":   emulator("hosting", mainPort, 0),
		"hub":       emulator("hub", hubPort, 0),
		"ui":        emulator("ui", mainPort, 0),
	}
	if !reflect.DeepEqual(emulators, want) {
		t.Errorf("GET /emulators =\n%v\nwant\n%v", emulators, want)
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

	// firebase emulators:export writes where it is told: here, in loupe's
	// temp folder (paths over HTTP are confined to it, the project folder
	// and the data dir).
	dir := filepath.Join(tmp, "export")
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

// emulator is GET /emulators' entry of an emulator at port on 127.0.0.1, as
// JSON decodes it; pid 0 means none.
func emulator(name string, port, pid int) map[string]any {
	e := map[string]any{"name": name, "host": "127.0.0.1", "port": float64(port),
		"listen": []any{map[string]any{"address": "127.0.0.1", "port": float64(port), "family": "IPv4"}}}
	if pid != 0 {
		e["pid"] = float64(pid)
	}
	return e
}

// TestHub_ListsTheConsoleAtItsUIPort: with emulators.ui.port in firebase.json
// the console answers there and the hub lists it as firebase-tools lists its
// Emulator UI.
func TestHub_ListsTheConsoleAtItsUIPort(t *testing.T) {
	t.Parallel()
	ports := loupetest.FreePorts(t, 2)
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	body := fmt.Sprintf(`{"emulators": {"firestore": {}, "hub": {"port": %d}, "ui": {"port": %d}}}`, ports[0], ports[1])
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg, Args: []string{"--only", "firestore"},
		Env: []string{"TMPDIR=" + t.TempDir()}})
	_, emulators := loupetest.Call(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/emulators", ports[0]), "")
	if want := emulator("ui", ports[1], 0); !reflect.DeepEqual(emulators["ui"], want) {
		t.Errorf("GET /emulators lists ui as %v, want %v", emulators["ui"], want)
	}
	// What is listed there is the console (its page needs the web build; its endpoints do not).
	code, overview := loupetest.Call(t, "GET", fmt.Sprintf("http://127.0.0.1:%d/emulator/v1/overview", ports[1]), "")
	if code != 200 || overview["url"] != inst.URL {
		t.Errorf("the console's overview on the ui port = %d %v", code, overview)
	}
}

// TestHub_StrictRefusesTheSwitchesAndExport: with --strict-credentials the
// hub still lists emulators (without the console, which is off) but acts on
// nothing. Listening on 0.0.0.0, each emulator's host is the address to
// connect to and its listen address the one bound, as firebase-tools says.
func TestHub_StrictRefusesTheSwitchesAndExport(t *testing.T) {
	t.Parallel()
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Args: []string{"--strict-credentials", "--host", "0.0.0.0", "--only", "auth",
		"--hub-port", "0"}, Env: []string{"TMPDIR=" + t.TempDir()}})
	code, emulators := loupetest.Call(t, "GET", inst.URL+"/emulators", "")
	_, port, _ := net.SplitHostPort(inst.Host)
	mainPort, _ := strconv.Atoi(port)
	auth := emulator("auth", mainPort, 0)
	auth["listen"] = []any{map[string]any{"address": "0.0.0.0", "port": float64(mainPort), "family": "IPv4"}}
	if code != 200 || !reflect.DeepEqual(emulators["auth"], auth) || emulators["ui"] != nil {
		t.Errorf("GET /emulators = %d %v; want auth as %v and no ui", code, emulators, auth)
	}
	// The locator's origins are addresses to connect to.
	hubURL := fmt.Sprintf("http://127.0.0.1:%v", emulators["hub"].(map[string]any)["port"])
	if code, locator := loupetest.Call(t, "GET", hubURL+"/", ""); code != 200 || !reflect.DeepEqual(locator["origins"], []any{hubURL}) {
		t.Errorf("GET / on the hub port = %d %v; want the origin %s", code, locator, hubURL)
	}
	for _, call := range []string{"PUT /functions/disableBackgroundTriggers", "PUT /functions/enableBackgroundTriggers", "POST /_admin/export"} {
		method, path, _ := strings.Cut(call, " ")
		if code, _ := loupetest.Call(t, method, inst.URL+path, `{"path":"/tmp/x"}`); code != 403 {
			t.Errorf("%s = %d, want 403", call, code)
		}
	}
}

// TestHub_ListsEventarcAndTasksBesideFunctions: with functions, the hub
// lists Eventarc (at emulators.eventarc.port) and Cloud Tasks (at the
// functions' port, where CLOUD_TASKS_EMULATOR_HOST leads), as firebase-tools
// starts both beside its functions emulator; the Realtime Database and
// Pub/Sub, child processes of firebase-tools, carry a pid; Hosting's second
// site's port is among its reservedPorts.
func TestHub_ListsEventarcAndTasksBesideFunctions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A Go module that does not build: its codebase fails, the functions
	// (and what runs beside them) are served all the same.
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/none\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventarcPort := loupetest.FreePorts(t, 1)[0]
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	body := fmt.Sprintf(`{"functions": {"source": %q}, "hosting": [{"site": "one", "public": %q}, {"site": "two", "public": %q}],
		"emulators": {"eventarc": {"port": %d}, "functions": {"port": 0}, "database": {"port": 0}, "pubsub": {"port": 0}, "hosting": {"port": 0}}}`,
		dir, dir, dir, eventarcPort)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg, Args: []string{"--hub-port", "0", "--only", "functions,database,pubsub,hosting"},
		Env: []string{"TMPDIR=" + t.TempDir()}})
	code, emulators := loupetest.Call(t, "GET", inst.URL+"/emulators", "")
	if code != 200 {
		t.Fatalf("GET /emulators = %d %v", code, emulators)
	}
	functionsPort := int(emulators["functions"].(map[string]any)["port"].(float64))
	for name, want := range map[string]map[string]any{
		"eventarc": emulator("eventarc", eventarcPort, 0),
		"tasks":    emulator("tasks", functionsPort, 0),
	} {
		if !reflect.DeepEqual(emulators[name], want) {
			t.Errorf("GET /emulators lists %s as %v, want %v", name, emulators[name], want)
		}
	}
	for _, name := range []string{"database", "pubsub"} {
		if e, _ := emulators[name].(map[string]any); e == nil || e["pid"] != float64(os.Getpid()) {
			t.Errorf("GET /emulators lists %s as %v, want loupe's pid %d", name, emulators[name], os.Getpid())
		}
	}
	hosting, _ := emulators["hosting"].(map[string]any)
	reserved, _ := hosting["reservedPorts"].([]any)
	if len(reserved) != 1 || reserved[0] == hosting["port"] {
		t.Fatalf("GET /emulators lists hosting as %v, want its second site's port as reservedPorts", hosting)
	}
	if code, _ := loupetest.Call(t, "GET", fmt.Sprintf("http://127.0.0.1:%v/", reserved[0]), ""); code == 0 {
		t.Errorf("nothing answers on hosting's reserved port %v", reserved[0])
	}
}

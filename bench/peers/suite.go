package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// suiteServices are the whole suite of the cold start, as --only names them
// for firebase emulators:start and loupe emulators:start alike.
const suiteServices = "firestore,auth,functions,storage,pubsub"

// suiteFolder writes into dir the project both sides start: a firebase.json
// with every emulator on a free port and the console off, closed Storage
// rules, and functions/, a copy of the functions fixture (JavaScript, with
// triggers of the five services), whose npm packages are those of the peers
// cache (node_modules beside functions/, as the fixtures share theirs).
func (p *peers) suiteFolder(dir, fixture string) error {
	ports, err := freePorts(10)
	if err != nil {
		return err
	}
	emulators := map[string]any{"ui": map[string]any{"enabled": false}}
	for i, name := range []string{"firestore", "auth", "functions", "storage", "pubsub", "eventarc", "tasks", "hub", "logging"} {
		emulators[name] = map[string]any{"host": "127.0.0.1", "port": ports[i]}
	}
	emulators["firestore"].(map[string]any)["websocketPort"] = ports[9]
	config := map[string]any{
		"functions": map[string]any{"source": "functions"},
		"storage":   map[string]any{"rules": "storage.rules"},
		"emulators": emulators,
	}
	if err := writeJSON(filepath.Join(dir, "firebase.json"), config); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "storage.rules"), []byte(closedStorageRules), 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, "functions"), 0o755); err != nil {
		return err
	}
	for _, name := range []string{"index.js", "package.json"} {
		b, err := os.ReadFile(filepath.Join(fixture, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "functions", name), b, 0o644); err != nil {
			return err
		}
	}
	return os.Symlink(p.suite, filepath.Join(dir, "node_modules"))
}

// startSuite starts the whole suite in dir (which suiteFolder fills) on one
// side, with firebase-tools ("official") or loupe, timed until it prints its
// ready line.
func (p *peers) startSuite(dir, fixture, side string) (*emulator, error) {
	if err := p.suiteFolder(dir, fixture); err != nil {
		return nil, err
	}
	if side == "official" {
		return spawn("official-suite", dir, []string{"FIREBASE_EMULATORS_PATH=" + p.emuPath}, "", says(readyLine), 10*time.Minute,
			p.firebase, "emulators:start", "--only", suiteServices, "--project", p.project)
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	return spawn("loupe-suite", dir, nil, "", says(readyLine), 10*time.Minute,
		p.loupe, "emulators:start", "--only", suiteServices, "--project", p.project, "--port", strconv.Itoa(ports[0]))
}

// codelabFolder makes dir a copy of the codelab: links to its files, but
// its firebase.json with every emulator it names on a free port, the Emulator
// Hub's and logging's too, and the console off (firebase-tools would download
// it). Logs and results are written in dir, not in the peers cache.
func (p *peers) codelabFolder(dir string) error {
	link := func(from, to string) error {
		entries, err := os.ReadDir(from)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Name() == "firebase.json" || e.Name() == "functions" {
				continue
			}
			if err := os.Symlink(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := os.Mkdir(filepath.Join(dir, "functions"), 0o755); err != nil {
		return err
	}
	if err := link(p.codelab, dir); err != nil {
		return err
	}
	if err := link(filepath.Join(p.codelab, "functions"), filepath.Join(dir, "functions")); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(p.codelab, "firebase.json"))
	if err != nil {
		return err
	}
	var config map[string]any
	if err := json.Unmarshal(b, &config); err != nil {
		return fmt.Errorf("the codelab's firebase.json: %w", err)
	}
	emulators, _ := config["emulators"].(map[string]any)
	names := []string{"hub", "logging"}
	for name := range emulators {
		names = append(names, name)
	}
	ports, err := freePorts(len(names) + 1)
	if err != nil {
		return err
	}
	ports, websocket := ports[1:], ports[0]
	configured := map[string]any{"ui": map[string]any{"enabled": false}}
	for i, name := range names {
		configured[name] = map[string]any{"host": "127.0.0.1", "port": ports[i]}
	}
	configured["firestore"].(map[string]any)["websocketPort"] = websocket
	config["emulators"] = configured
	return writeJSON(filepath.Join(dir, "firebase.json"), config)
}

// codelabFigures are one run of the codelab's tests: the tests mocha ran,
// those that passed, the hooks (before, after) that failed, and the wall
// time of the whole emulators:exec.
type codelabFigures struct {
	tests, passed, hooksFailed int
	wall                       time.Duration
}

// runCodelab runs the codelab's tests, `npm test` in functions/ as its CI
// runs them (with mocha's xunit reporter added, to count them), under
// emulators:exec of firebase-tools ("official") or loupe, in a copy of the
// codelab in dir.
func (p *peers) runCodelab(dir, side string) (codelabFigures, error) {
	var f codelabFigures
	if err := p.codelabFolder(dir); err != nil {
		return f, err
	}
	results := filepath.Join(dir, "results.xml")
	script := "npm test -- --reporter xunit --reporter-options output=" + results
	name, env, argv := "loupe-codelab", []string(nil), []string{p.loupe, "emulators:exec", "--project", p.project}
	if side == "official" {
		name, env, argv = "official-codelab", []string{"FIREBASE_EMULATORS_PATH=" + p.emuPath}, []string{p.firebase, "emulators:exec", "--project", p.project}
	} else {
		ports, err := freePorts(1)
		if err != nil {
			return f, err
		}
		argv = append(argv, "--port", strconv.Itoa(ports[0]))
	}
	began := time.Now()
	e, err := launch(name, filepath.Join(dir, "functions"), env, append(argv, script)...)
	if err != nil {
		return f, err
	}
	select {
	case <-e.done:
		f.wall = time.Since(began)
		e.log.Close()
	case <-time.After(15 * time.Minute):
		e.stop()
		return f, fmt.Errorf("%s did not end within 15 minutes; its output is in %s", name, e.log.Name())
	}
	b, err := os.ReadFile(results)
	if errors.Is(err, os.ErrNotExist) {
		return f, fmt.Errorf("%s ran no tests (%v); its output is in %s", name, e.err, e.log.Name())
	}
	if err != nil {
		return f, err
	}
	var suite struct {
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b, &suite); err != nil {
		return f, fmt.Errorf("%s: mocha's results: %w", name, err)
	}
	for _, c := range suite.Cases {
		switch {
		case mochaHook.MatchString(c.Name):
			if c.Failure != nil {
				f.hooksFailed++
				fmt.Printf("  %-8s codelab: failed %s\n", side, c.Name)
			}
		case c.Failure != nil:
			f.tests++
			fmt.Printf("  %-8s codelab: failed %s\n", side, c.Name)
		default:
			f.tests++
			f.passed++
		}
	}
	return f, nil
}

// mochaHook matches the title mocha gives a hook's failure.
var mochaHook = regexp.MustCompile(`^"(before|after) (all|each)" hook`)

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

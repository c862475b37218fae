package app

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/loupe-dev/loupe/"

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// goList runs go list -json over patterns (from the module root).
func goList(t *testing.T, patterns ...string) map[string]listed {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", append([]string{"list", "-json"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

// transport reports whether an import path is HTTP or gRPC serving code.
func transport(path string) bool {
	return path == "net/http" || path == "net/http/httptest" || strings.HasPrefix(path, "google.golang.org/grpc")
}

// TestDeps_EnginesHaveNoTransport checks that the engines (Firestore,
// Storage and Auth cores, the rules engine) and every loupe package they
// depend on import no HTTP or gRPC package: transports live in adapters.
// (Firestore's generated message package, firestorepb, carries gRPC client
// stubs; it is not loupe's code and is not checked.)
func TestDeps_EnginesHaveNoTransport(t *testing.T) {
	all := goList(t, "./internal/...")
	for _, engine := range []string{"internal/firestore", "internal/storage", "internal/auth", "internal/rules", "internal/database", "internal/pubsub"} {
		p, ok := all[engine]
		if !ok {
			t.Fatalf("%s not listed", engine)
		}
		for _, dep := range append([]string{p.ImportPath}, p.Deps...) {
			own, ok := all[strings.TrimPrefix(dep, module)]
			if !strings.HasPrefix(dep, module) || !ok {
				continue
			}
			for _, imp := range own.Imports {
				if transport(imp) {
					t.Errorf("engine %s depends on %s, which imports %s", engine, strings.TrimPrefix(dep, module), imp)
				}
			}
		}
	}
}

// shared are the packages every service may use: they belong to no service.
var shared = map[string]bool{
	"errs": true, "httpjson": true, "identity": true, "wal": true, "atomicfile": true, "config": true,
	"server": true, "requestlog": true, "webchannel": true, "triggers": true, "marketplace": true, "logring": true, "ring": true,
	"changes": true, "websocket": true,
}

// wiring are the packages that assemble or exercise every service.
var wiring = map[string]bool{"app": true, "cli": true, "loupetest": true, "reliability": true, "demo": true}

// seams are the imports one service makes of another's package, each
// through the interface or type the design names; any other is a leak.
var seams = map[[2]string]string{
	{"guard", "internal/firestore"}:      "guard implements firestore.Authorizer for the engine",
	{"guard", "internal/storage"}:        "guard implements storage.Authorizer for the engine",
	{"guard", "internal/rules"}:          "guard owns the rules engine and its rule sets",
	{"guard", "internal/database"}:       "guard implements database.Authorizer and database.Indexes for the engine",
	{"guard", "internal/database/rules"}: "guard owns the Realtime Database's rule sets",
	{"functions", "internal/firestore"}:  "Firestore triggers follow the engine's commits (Engine.Subscribe)",
	{"console", "internal/firestore"}:    "the console lists the engine's databases, deletes trees and follows commits (Databases, DeleteTree, Subscribe)",
	{"exports", "internal/firestore"}:    "exports convert the Firestore store's files to and from export formats",
	{"exports", "internal/storage"}:      "exports convert the Storage store's files to and from export formats",
	{"exports", "internal/stripe"}:       "exports check the Stripe stand-in's export file before any service imports",
	{"passthrough", "internal/database"}: "pass-through reads a request's Realtime Database namespace as the engine names them (HostNamespace, CheckNamespace)",
}

// area is the service (or shared or wiring package) a package belongs to:
// its first folder under internal/.
func area(rel string) string {
	rest, ok := strings.CutPrefix(rel, "internal/")
	if !ok {
		return rel
	}
	first, _, _ := strings.Cut(rest, "/")
	return first
}

// TestDeps_ServicesMeetOnlyAtSeams checks that no service package imports
// another service's package except at the seams listed, and that what it
// imports there is the other service's engine, never its adapters.
func TestDeps_ServicesMeetOnlyAtSeams(t *testing.T) {
	all := goList(t, "./internal/...")
	for rel, p := range all {
		from := area(rel)
		if wiring[from] {
			continue
		}
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if a := area(to); a == from || shared[a] {
				continue
			}
			if _, ok := seams[[2]string{from, to}]; !ok {
				t.Errorf("%s imports %s: services meet only through the interfaces their engines name", rel, to)
			}
		}
	}
}

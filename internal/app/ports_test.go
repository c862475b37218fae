package app

import (
	"testing"

	"github.com/loupe-dev/loupe/internal/config"
)

// TestExtraPorts_FunctionsPort: with functions and an emulators block, the
// functions answer on emulators.functions.port, else on firebase-tools' 5001
// (where connectFunctionsEmulator calls look); without an emulators block
// only on the main port.
func TestExtraPorts_FunctionsPort(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       int // 0: no functions port
	}{
		{"default", `{"functions": {"source": "f"}, "emulators": {"auth": {"port": 9099}}}`, 5001},
		{"configured", `{"functions": {"source": "f"}, "emulators": {"functions": {"port": 5999}}}`, 5999},
		{"no emulators block", `{"functions": {"source": "f"}}`, 0},
		{"no functions", `{"emulators": {"auth": {"port": 9099}}}`, 0},
	} {
		cfg, err := config.Parse([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, p := range extraPorts(Options{Config: cfg}) {
			if p.Service == "functions" {
				got = p.Port
			}
		}
		if got != tc.want {
			t.Errorf("%s: functions port %d, want %d", tc.name, got, tc.want)
		}
	}
}

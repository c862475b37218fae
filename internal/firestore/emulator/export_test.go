package emulator

import (
	"net/http"
	"testing"
	"time"
)

// What the external benchmarks (package emulator_test, which start loupe
// through loupetest) use of the channel tests' browser tab.

const TestDB = testDB

// Tab is a browser tab listening to fan/doc over WebChannel.
type Tab = tab

// OpenTab opens a tab on channelURL (see openTab).
func OpenTab(t testing.TB, channelURL string, hc *http.Client) *Tab {
	t.Helper()
	return openTab(t, channelURL, hc, nil)
}

// Next waits for the next value of v the tab sees.
func (tb *tab) Next(t testing.TB) int64 { t.Helper(); return tb.next(t) }

// NextSeen is Next with the time the tab saw the value.
func (tb *tab) NextSeen(t testing.TB) (int64, time.Time) {
	t.Helper()
	s := tb.nextSeen(t)
	return s.v, s.at
}

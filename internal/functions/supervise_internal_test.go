package functions

import (
	"testing"
	"time"
)

func TestRestartDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		last, uptime, want time.Duration
	}{
		{0, 0, time.Second}, // the first exit
		{time.Second, 100 * time.Millisecond, 2 * time.Second}, // doubles while it keeps exiting
		{16 * time.Second, time.Second, 30 * time.Second},      // up to 30 s
		{30 * time.Second, time.Second, 30 * time.Second},
		{30 * time.Second, 30 * time.Second, time.Second}, // a process that stayed up starts the count over
	} {
		if got := restartDelay(tc.last, tc.uptime); got != tc.want {
			t.Errorf("restartDelay(%v, %v) = %v, want %v", tc.last, tc.uptime, got, tc.want)
		}
	}
}

package passthrough

import "time"

// SetUpstreamHeaderTimeout shortens, for a test, how long a passed-through
// HTTP request waits for the upstream's answer to begin (read by New).
func SetUpstreamHeaderTimeout(d time.Duration) (restore func()) {
	old := upstreamHeaderTimeout
	upstreamHeaderTimeout = d
	return func() { upstreamHeaderTimeout = old }
}

// SetRelayTimeouts shortens, for a test, how long a relayed WebSocket's
// write may stall and how long opening one upstream may take.
func SetRelayTimeouts(write, dial time.Duration) (restore func()) {
	w, d := relayWriteTimeout, databaseDialTimeout
	relayWriteTimeout, databaseDialTimeout = write, dial
	return func() { relayWriteTimeout, databaseDialTimeout = w, d }
}

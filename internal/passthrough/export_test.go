package passthrough

import "time"

// SetRelayTimeouts shortens, for a test, how long a relayed WebSocket's
// write may stall and how long opening one upstream may take.
func SetRelayTimeouts(write, dial time.Duration) (restore func()) {
	w, d := relayWriteTimeout, databaseDialTimeout
	relayWriteTimeout, databaseDialTimeout = write, dial
	return func() { relayWriteTimeout, databaseDialTimeout = w, d }
}

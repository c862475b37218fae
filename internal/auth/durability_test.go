package auth_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// TestAuth_KillDuringSignUpsKeepsEveryAcknowledgedOne kills loupe with
// SIGKILL while sign-ups stream in, three times on the same data dir: the
// data dir always opens and every sign-up that got its 200 can sign in.
func TestAuth_KillDuringSignUpsKeepsEveryAcknowledgedOne(t *testing.T) {
	dir := t.TempDir()
	var acked []string
	for round := range 3 {
		inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir})
		before := len(acked)
		var (
			mu   sync.Mutex
			n    atomic.Int64
			stop atomic.Bool
			wg   sync.WaitGroup
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					email := fmt.Sprintf("r%d-%d@loupe.dev", round, n.Add(1))
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, _, err := loupetest.SignUp(ctx, inst.URL, email, "secret1")
					cancel()
					if err == nil {
						mu.Lock()
						acked = append(acked, email)
						mu.Unlock()
					}
				}
			}()
		}
		// Kill only once this round had a sign-up acknowledged, so every
		// restart has new accounts to find.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := len(acked)
			mu.Unlock()
			if got > before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no sign-up acknowledged within a minute", round)
			}
		}
		time.Sleep(time.Duration(150+100*round) * time.Millisecond)
		inst.Kill()
		stop.Store(true)
		wg.Wait()
		t.Logf("round %d: %d sign-ups acknowledged so far", round, len(acked))
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir})
	for _, email := range acked {
		status, out := call(t, inst, idt+"createAuthUri", map[string]any{"identifier": email, "continueUri": "http://localhost"})
		if status != 200 || out["registered"] != true {
			t.Errorf("%s was acknowledged but is gone: %d %v", email, status, out)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no sign-up was acknowledged before the kills")
	}
}

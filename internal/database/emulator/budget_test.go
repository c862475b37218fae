package emulator

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
)

// TestReserveBody_LargeBodiesTakeTurns: large REST write bodies share the
// decoding budget, so that callers sending many at once cannot make loupe
// hold many times their size in decoded data, while small writes never
// wait for it. A body as large as the budget holds all of it: another large
// one waits (here until its caller gives up: 503 Unavailable), a body
// without a Content-Length counts as the largest, a small one goes on; once
// the first is done the others go through.
func TestReserveBody_LargeBodiesTakeTurns(t *testing.T) {
	s := &Service{}
	put := func(size int64, ctx context.Context) error {
		r := httptest.NewRequestWithContext(ctx, "PUT", "/x.json", strings.NewReader(""))
		r.ContentLength = size
		release, err := s.reserveBody(r)
		if err == nil {
			release()
		}
		return err
	}
	waitBriefly := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	first := httptest.NewRequest("PUT", "/first.json", strings.NewReader(""))
	first.ContentLength = decodeBudget
	release, err := s.reserveBody(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{2 << 20, -1} {
		if err := put(size, waitBriefly()); err == nil || errs.KindOf(err) != errs.Unavailable {
			t.Errorf("a body of %d bytes while the budget is taken: %v, want to wait (Unavailable when its caller leaves)", size, err)
		}
	}
	if err := put(64<<10, waitBriefly()); err != nil {
		t.Errorf("a small body waited for the large ones: %v", err)
	}
	release()
	for _, size := range []int64{2 << 20, -1, decodeBudget * 4} {
		if err := put(size, context.Background()); err != nil {
			t.Errorf("a body of %d bytes once the budget is free: %v", size, err)
		}
	}
}

package ring

import (
	"context"
	"slices"
	"testing"
)

// TestRing_KeepsTheNewestAndCountsOnAfterClear adds past the capacity,
// reads newest first, gets by id, clears and adds again.
func TestRing_KeepsTheNewestAndCountsOnAfterClear(t *testing.T) {
	r := New[int64](3)
	for range 5 {
		r.Add(func(id int64) int64 { return id * 10 })
	}
	got, latest := r.After(0, 0, nil)
	if !slices.Equal(got, []int64{50, 40, 30}) || latest != 5 {
		t.Fatalf("After(0) = %v, %d; want [50 40 30], 5", got, latest)
	}
	if got, _ := r.After(3, 1, func(v *int64) bool { return *v != 50 }); !slices.Equal(got, []int64{40}) {
		t.Fatalf("After(3, 1, not 50) = %v, want [40]", got)
	}
	if _, ok := r.Get(2); ok {
		t.Error("Get(2) found an entry that fell off")
	}
	if v, ok := r.Get(4); !ok || v != 40 {
		t.Errorf("Get(4) = %d, %v; want 40, true", v, ok)
	}
	r.Clear()
	if got, latest := r.After(0, 0, nil); len(got) != 0 || latest != 5 {
		t.Fatalf("after Clear: %v, %d; want none, 5", got, latest)
	}
	if _, ok := r.Get(5); ok {
		t.Error("Get(5) found a cleared entry")
	}
	if e := r.Add(func(id int64) int64 { return id }); e != 6 {
		t.Fatalf("first id after Clear = %d, want 6", e)
	}
	if !r.Wait(context.Background(), 5) {
		t.Fatal("Wait(5) with entry 6 recorded = false")
	}
	r.Close()
	if !r.Closed() || r.Wait(context.Background(), 6) {
		t.Fatal("a closed ring still waits")
	}
}

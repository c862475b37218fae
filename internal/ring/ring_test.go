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

// TestRing_UpdatesTakeTheNextRevision: an update changes the entry in
// place, Changed lists it after the entries added before it, and
// WaitChange wakes on it; an entry that fell off cannot be updated.
func TestRing_UpdatesTakeTheNextRevision(t *testing.T) {
	r := New[int64](3)
	for range 3 {
		r.Add(func(id int64) int64 { return id })
	}
	rev := r.Revision()
	woke := make(chan bool)
	go func() { woke <- r.WaitChange(context.Background(), rev) }()
	if v, ok := r.Update(1, func(v *int64) { *v = 100 }); !ok || v != 100 {
		t.Fatalf("Update(1) = %d, %v; want 100, true", v, ok)
	}
	if !<-woke {
		t.Fatal("WaitChange did not report the update")
	}
	r.Add(func(id int64) int64 { return id }) // id 4: entry 1 falls off
	got, now := r.Changed(0, nil)
	if !slices.Equal(got, []int64{2, 3, 4}) || now != 5 {
		t.Errorf("Changed(0) = %v, %d; want [2 3 4], 5", got, now)
	}
	r.Update(2, func(v *int64) { *v = 200 })
	if got, _ := r.Changed(rev, nil); !slices.Equal(got, []int64{4, 200}) {
		t.Errorf("Changed(%d) = %v, want [4 200] (in the order of their changes)", rev, got)
	}
	if _, ok := r.Update(1, func(*int64) {}); ok {
		t.Error("Update(1) changed an entry that fell off")
	}
	if g, _ := r.Get(2); g != 200 {
		t.Errorf("Get(2) = %d after its update, want 200", g)
	}
}

package firestore

import (
	"strconv"
	"testing"
)

func TestRecent_Get(t *testing.T) {
	c := Recent[string, *string]{Max: 8}
	built := 0
	get := func(k string) *string {
		return c.Get(k, func() *string {
			built++
			v := "v" + k
			return &v
		})
	}
	first := get("a")
	if *first != "va" || built != 1 {
		t.Fatalf("first use: %q, built %d", *first, built)
	}
	if again := get("a"); again != first || built != 1 {
		t.Error("the same key was built twice")
	}
	for n := range 3 * 8 { // past the bound it moves on a generation, still right
		k := strconv.Itoa(n)
		if got := get(k); *got != "v"+k {
			t.Fatalf("key %s: %q", k, *got)
		}
	}
	if n := c.Len(); n > 8 {
		t.Errorf("%d entries held, bound 8", n)
	}
}

// TestRecent_KeepsAValueForMaxBuilds: a value built just before the current
// generation filled is still found after Max more values were built (a
// stream a little behind the others finds what they built).
func TestRecent_KeepsAValueForMaxBuilds(t *testing.T) {
	c := Recent[string, int]{Max: 8}
	builds := map[string]int{}
	get := func(k string) int {
		return c.Get(k, func() int { builds[k]++; return len(k) })
	}
	for n := range 5 {
		get(strconv.Itoa(n))
	}
	get("kept")
	for n := range 8 + 1 {
		get("after" + strconv.Itoa(n))
	}
	if get("kept"); builds["kept"] != 1 {
		t.Errorf("built %d times, want once", builds["kept"])
	}
}

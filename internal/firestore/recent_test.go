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
	for n := range 3 * 8 { // past the bound it starts over, still right
		k := strconv.Itoa(n)
		if got := get(k); *got != "v"+k {
			t.Fatalf("key %s: %q", k, *got)
		}
	}
	if n := c.Len(); n > 8 {
		t.Errorf("%d entries held, bound 8", n)
	}
}

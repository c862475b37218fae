package pipeline

import (
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

func decimalOf(v *pb.Value) string {
	return v.GetMapValue().GetFields()["__decimal128__"].GetStringValue()
}

// Decimal128 arithmetic stays within Decimal128's range (past it is an
// infinity or zero), answers quickly, and never panics at the edges.
func TestDecimalExtremes(t *testing.T) {
	big, small := decimalV("1e6000"), decimalV("1e-6000")
	for _, c := range []struct {
		name string
		a, b *pb.Value
		want string
	}{
		{"multiply", big, big, "Infinity"},
		{"divide", decimalV("-1e6000"), small, "-Infinity"},
		{"multiply", small, small, "0E-6176"}, // the smallest exponent, as IEEE 754 decimal arithmetic underflows
		{"add", decimalV("1e999999999"), decimalV("1"), "Infinity"},
		{"subtract", decimalV("1e646456000"), decimalV("1"), "Infinity"},
		{"mod", big, small, "0E-6000"}, // at the smaller exponent
		{"add", big, decimalV("-Infinity"), "-Infinity"},
		{"divide", big, decimalV("Infinity"), "0"},
		{"multiply", decimalV("0"), decimalV("Infinity"), "NaN"},
		{"mod", small, decimalV("Infinity"), "1e-6000"},
	} {
		if got := decimalOf(decimalOp(c.name, c.a, c.b).v); got != c.want {
			t.Errorf("%s(%s, %s) = %s, want %s", c.name, decimalOf(c.a), decimalOf(c.b), got, c.want)
		}
	}
	for _, mode := range []string{"round", "trunc", "ceil", "floor"} {
		for _, places := range []int64{6144, -6144, 0, 1 << 62, -1 << 63} {
			if decimalRound(big, places, mode) == nil || decimalRound(small, places, mode) == nil {
				t.Errorf("%s %d: no result", mode, places)
			}
		}
	}
}

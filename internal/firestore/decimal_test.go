package firestore

import (
	"strings"
	"testing"
)

func dec(t *testing.T, s string) Decimal {
	t.Helper()
	d, ok := ParseDecimal(s)
	if !ok {
		t.Fatalf("ParseDecimal(%q) failed", s)
	}
	return d
}

// Decimal128 keeps its trailing zeros, as IEEE 754-2008 decimal
// arithmetic (MongoDB's) does: 1.50 is stored, added and multiplied as
// 150 × 10⁻², and equals 1.5 in comparisons.
func TestDecimal_TrailingZeros(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1.50", "1.50"}, {"+1.50", "1.50"}, {"0.0", "0.0"}, {"-0", "-0"}, {"00012.3400", "12.3400"},
		{"1.2e3", "1.2E+3"}, {"1200", "1200"}, {"1.2345E+5", "1.2345E+5"}, {"-9.876E-3", "-0.009876"},
		{"2.01e-5", "0.0000201"}, {"1.5E-7", "1.5E-7"}, {"15E-1", "1.5"}, {".5", "0.5"}, {"5.", "5"},
		{"nan", "NaN"}, {"-Infinity", "-Infinity"}, {"inf", "Infinity"},
		{"1234567890123456789012345678901234", "1234567890123456789012345678901234"},
		{"12345678901234567890123456789012345", "1.234567890123456789012345678901234E+34"}, // 35 digits round half to even
		{"12345678901234567890123456789012355", "1.234567890123456789012345678901236E+34"},
		{"1e6145", "Infinity"}, {"1e-6177", "0E-6176"}, {"1e646456000", "Infinity"},
	} {
		if got := dec(t, c.in).String(); got != c.want {
			t.Errorf("ParseDecimal(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "abc", "1 23. 4", "1.2.3", "1e", "1e+-2", "--1", "0x10", "1_000", "e5", "."} {
		if _, ok := ParseDecimal(bad); ok {
			t.Errorf("ParseDecimal(%q) succeeded", bad)
		}
	}
	for _, c := range []struct {
		op, a, b, want string
	}{
		{"add", "1.50", "1", "2.50"},
		{"add", "1.50", "1.50", "3.00"},
		{"add", "0.1", "0.2", "0.3"},
		{"add", "1.000000000000000000000000000000001", "1", "2.000000000000000000000000000000001"},
		{"add", "-0", "-0", "-0"},
		{"add", "-1.5", "1.50", "0.00"},
		{"sub", "1.50", "1.50", "0.00"},
		{"sub", "1.5", "10", "-8.5"},
		{"mul", "1.50", "1.50", "2.2500"},
		{"mul", "1.5", "2.5", "3.75"},
		{"mul", "1e6000", "1e6000", "Infinity"},
		{"mul", "1e-6000", "1e-6000", "0E-6176"},
		{"mul", "0", "Infinity", "NaN"},
		{"quo", "3.00", "1.5", "2.0"},
		{"quo", "3", "1.5", "2"},
		{"quo", "1.50", "3", "0.50"},
		{"quo", "1", "4", "0.25"},
		{"quo", "1", "3", "0.3333333333333333333333333333333333"},
		{"quo", "3", "7", "0.4285714285714285714285714285714286"},
		{"quo", "1", "0", "Infinity"},
		{"quo", "0", "0", "NaN"},
		{"quo", "1E+6000", "1E-6000", "Infinity"},
		{"rem", "7.50", "2", "1.50"},
		{"rem", "-7", "2", "-1"},
		{"rem", "1e6000", "1e-6000", "0E-6000"},
		{"rem", "5", "Infinity", "5"},
	} {
		a, b := dec(t, c.a), dec(t, c.b)
		var got Decimal
		switch c.op {
		case "add":
			got = a.Add(b)
		case "sub":
			got = a.Sub(b)
		case "mul":
			got = a.Mul(b)
		case "quo":
			got = a.Quo(b)
		case "rem":
			got, _ = a.Rem(b)
		}
		if got.String() != c.want {
			t.Errorf("%s %s %s = %s, want %s", c.a, c.op, c.b, got, c.want)
		}
	}
	if _, ok := dec(t, "1").Rem(dec(t, "0.00")); ok {
		t.Error("1 rem 0.00 succeeded, want division by zero")
	}
	for _, c := range []struct {
		in   string
		exp  int
		mode string
		want string
	}{
		{"1.5", 0, "round", "2"}, {"2.5", 0, "round", "3"}, {"-2.5", 0, "round", "-3"}, {"1.50", 0, "floor", "1"},
		{"-1.4", 0, "ceil", "-1"}, {"-1.4", 0, "floor", "-2"}, {"0.4285714", -3, "round", "0.429"},
		{"2.500", -1, "round", "2.5"}, {"1.5", -3, "round", "1.5"}, {"1234", 1, "round", "1.23E+3"},
		{"1e-6000", 0, "ceil", "1"}, {"-1e-6000", 0, "trunc", "-0"},
	} {
		if got := dec(t, c.in).Quantize(c.exp, c.mode).String(); got != c.want {
			t.Errorf("%s(%s) at 10^%d = %s, want %s", c.mode, c.in, c.exp, got, c.want)
		}
	}
	// Equal across trailing zeros, exponents and the sign of zero.
	for _, pair := range [][2]string{{"1.50", "1.5"}, {"1.2e3", "1200.000"}, {"0", "-0.00"}, {"Infinity", "inf"}} {
		if dec(t, pair[0]).Cmp(dec(t, pair[1])) != 0 {
			t.Errorf("%s and %s differ", pair[0], pair[1])
		}
	}
	if dec(t, "1.50").Cmp(dec(t, "1.500000000000000000000000000000001")) >= 0 || dec(t, "-Infinity").Cmp(dec(t, "-1e6144")) >= 0 {
		t.Error("order of close decimals")
	}
	if got := DecimalFromFloat(0.1).Add(dec(t, "1.50")).String(); got != "1.60" {
		t.Errorf("0.1 (double) + 1.50 = %s, want 1.60", got)
	}
	if s := strings.Repeat("9", 34); dec(t, s).Add(dec(t, "1")).String() != "1.000000000000000000000000000000000E+34" {
		t.Errorf("%s + 1 = %s", s, dec(t, s).Add(dec(t, "1")))
	}
}

// FuzzParseDecimal: any string parses or not without panicking, and a
// parsed Decimal's canonical string reads back as itself.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"1.50", "-0.0", "1.2e3", "1e-6177", "NaN", "-inf", "9999999999999999999999999999999999.5", "1e9999999999999999999", ".", "+", "1e+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseDecimal(s)
		if !ok {
			return
		}
		back, ok := ParseDecimal(d.String())
		if !ok || back.String() != d.String() || !d.IsNaN() && back.Cmp(d) != 0 {
			t.Errorf("%q → %s → %s", s, d, back)
		}
		d.Add(back).Mul(back).Quo(d)
		d.Rem(back)
	})
}

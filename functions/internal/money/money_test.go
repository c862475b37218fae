package money_test

import (
	"testing"

	"github.com/loupe-dev/loupe/functions/internal/money"
)

// TestFormat: symbol first, en-US digits, two decimals when there are cents.
func TestFormat(t *testing.T) {
	for _, c := range []struct {
		amount   float64
		currency string
		want     string
	}{
		{20, "USD", "$20"},
		{133.3, "BRL", "R$133.30"},
		{1234.567, "gbp", "£1,234.57"},
		{3127.4, "JPY", "¥3,127"},
		{1000000, "KRW", "₩1,000,000"},
		{12.05, "XYZ", "XYZ12.05"},
		{0.999, "EUR", "€1"},
	} {
		if got := money.Format(c.amount, c.currency); got != c.want {
			t.Errorf("Format(%v, %s) = %q, want %q", c.amount, c.currency, got, c.want)
		}
	}
}

// TestFormatMinor reads Stripe's smallest units.
func TestFormatMinor(t *testing.T) {
	for _, c := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{3897, "eur", "€38.97"},
		{4500, "USD", "$45"},
		{3127, "jpy", "¥3,127"},
		{13330, "BRL", "R$133.30"},
	} {
		if got := money.FormatMinor(c.minor, c.currency); got != c.want {
			t.Errorf("FormatMinor(%d, %s) = %q, want %q", c.minor, c.currency, got, c.want)
		}
	}
}

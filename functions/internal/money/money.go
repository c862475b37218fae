// Package money writes amounts as the app shows them: the currency's symbol
// first, en-US digits, two decimals whenever there are cents and none for
// whole amounts or currencies without cents (JPY, KRW, …).
package money

import (
	"math"
	"strconv"
	"strings"
)

// symbols are the app's currency symbols (web/src/lib/currency/currencies.ts);
// a code without one shows itself.
var symbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "AUD": "A$", "CAD": "C$", "JPY": "¥", "INR": "₹",
	"CNY": "CN¥", "BRL": "R$", "MXN": "MX$", "SGD": "S$", "HKD": "HK$", "NZD": "NZ$", "CHF": "CHF", "SEK": "kr",
	"NOK": "kr", "DKK": "kr", "PLN": "zł", "CZK": "Kč", "HUF": "Ft", "RON": "lei", "BGN": "лв", "TRY": "₺", "RUB": "₽",
	"UAH": "₴", "ILS": "₪", "AED": "د.إ", "SAR": "﷼", "QAR": "﷼", "EGP": "E£", "ZAR": "R", "NGN": "₦", "KES": "KSh",
	"GHS": "₵", "KRW": "₩", "TWD": "NT$", "THB": "฿", "MYR": "RM", "IDR": "Rp", "PHP": "₱", "VND": "₫", "PKR": "₨",
	"BDT": "৳", "ARS": "AR$", "CLP": "CL$", "COP": "CO$", "PEN": "S/"}

// ZeroDecimal lists the currencies Stripe counts in whole units.
var ZeroDecimal = map[string]bool{"BIF": true, "CLP": true, "DJF": true, "GNF": true, "JPY": true, "KMF": true,
	"KRW": true, "MGA": true, "PYG": true, "RWF": true, "UGX": true, "VND": true, "VUV": true, "XAF": true,
	"XOF": true, "XPF": true}

// FormatMinor writes an amount given in the currency's smallest unit (as
// Stripe charges it): 3897 EUR → "€38.97", 4500 USD → "$45", 3127 JPY → "¥3,127".
func FormatMinor(minor int64, currency string) string {
	code := strings.ToUpper(currency)
	if ZeroDecimal[code] {
		return Format(float64(minor), code)
	}
	return Format(float64(minor)/100, code)
}

// Format writes an amount in whole units of the currency: 133.3 BRL →
// "R$133.30", 20 USD → "$20".
func Format(amount float64, currency string) string {
	code := strings.ToUpper(currency)
	symbol, ok := symbols[code]
	if !ok {
		symbol = code
	}
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	cents := int64(math.Round(amount * 100))
	if ZeroDecimal[code] {
		cents = int64(math.Round(amount)) * 100
	}
	whole := group(strconv.FormatInt(cents/100, 10))
	if cents%100 == 0 {
		return sign + symbol + whole
	}
	return sign + symbol + whole + "." + strconv.FormatInt(100+cents%100, 10)[1:]
}

// group puts commas between thousands: 1234567 → 1,234,567.
func group(digits string) string {
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

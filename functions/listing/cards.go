package listing

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ValidCard reports whether a rate card can be booked and paid: it has a
// label (its duration) and a positive price.
func ValidCard(card map[string]any) bool {
	return strings.TrimSpace(str(card["duration"])) != "" && CardPrice(card) > 0
}

// ValidCards is the cards of a profile that can be booked, in order.
func ValidCards(cards []any) []any {
	out := []any{}
	for _, c := range cards {
		if m, ok := c.(map[string]any); ok && ValidCard(m) {
			out = append(out, m)
		}
	}
	return out
}

// Grace is how much longer than a card's limit a clip may run (encoders
// round a one-minute clip to 60.04 s).
const Grace = 0.5

var (
	units = map[string]float64{"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
		"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
		"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600}
	num   = `(\d+(?:\.\d+)?)`
	unit  = `\s*([a-z]+)?`
	upTo  = regexp.MustCompile(`^(?:up\s+to|under|max(?:imum)?|<=?)\s*` + num + unit + `$`)
	span  = regexp.MustCompile(`^` + num + unit + `\s*(?:-|–|to)\s*` + num + unit + `$`)
	over  = regexp.MustCompile(`^(?:over|more\s+than|>=?)\s*` + num + unit + `$|^` + num + `\s*\+` + unit + `$|^` + num + unit + `\s*\+$`)
	plain = regexp.MustCompile(`^` + num + unit + `$`)
)

// CardLength reads the clip length a rate card's label covers, in seconds:
// "Up to 1 min" (0–60), "1-3 mins" (60–180), "5+ mins" (300–∞), "90 s"
// (0–90); minutes when no unit is given. ok is false for a label that names
// no length, which then fits any clip.
func CardLength(label string) (min, max float64, ok bool) {
	l := strings.ToLower(strings.Join(strings.Fields(label), " "))
	seconds := func(n, u string) (float64, bool) {
		v, err := strconv.ParseFloat(n, 64)
		f, known := units[u]
		if u == "" {
			f, known = 60, true
		}
		return v * f, err == nil && known
	}
	if m := upTo.FindStringSubmatch(l); m != nil {
		hi, ok := seconds(m[1], m[2])
		return 0, hi, ok
	}
	if m := span.FindStringSubmatch(l); m != nil {
		u := m[4]
		if m[2] != "" {
			u = m[2] // "30 s - 2 min"
		}
		lo, ok1 := seconds(m[1], u)
		hi, ok2 := seconds(m[3], m[4])
		return lo, hi, ok1 && ok2 && lo <= hi
	}
	if m := over.FindStringSubmatch(l); m != nil {
		for i := 1; i < len(m); i += 2 {
			if m[i] != "" {
				lo, ok := seconds(m[i], m[i+1])
				return lo, math.Inf(1), ok
			}
		}
	}
	if m := plain.FindStringSubmatch(l); m != nil {
		hi, ok := seconds(m[1], m[2])
		return 0, hi, ok
	}
	return 0, 0, false
}

// Fits reports whether a clip of the given length (seconds) may be booked on
// a card: it is no longer than the card's limit (with Grace). A card whose
// label names no length fits any clip.
func Fits(card map[string]any, seconds float64) bool {
	_, max, ok := CardLength(str(card["duration"]))
	return !ok || seconds <= max+Grace
}

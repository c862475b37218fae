// Package cron reads the schedules of scheduled functions as Cloud
// Scheduler accepts them (firebase-functions passes them through): unix
// cron ("*/5 * * * *", five fields with ranges, lists, steps and month and
// day names) and the App Engine cron syntax ("every 5 minutes",
// "every 2 hours from 09:00 to 17:00", "every day 00:00",
// "every mon,wed 09:30", "1st,3rd monday of sep,oct 17:00",
// "1,15 of month 08:00"), and tells when a schedule next fires in its time
// zone.
//
// Interval schedules ("every N minutes|hours") fire at the multiples of N
// counted from midnight (or from the window's start), which is what App
// Engine's "synchronized" means; loupe treats the plain form the same way,
// so runs are at predictable times.
package cron

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed schedule: the days it fires on and the times of
// day (minutes after midnight, sorted) it fires at on them.
type Schedule struct {
	times []int
	day   func(t time.Time) bool
	loc   *time.Location
}

// horizon bounds the days Next looks ahead (a 29 February schedule fires
// within four years).
const horizon = 5 * 366

// Next is the first time after t at which s fires, in s's zone; zero when
// it never does within five years.
func (s *Schedule) Next(t time.Time) time.Time {
	t = t.In(s.loc)
	y, m, d := t.Date()
	for i := 0; i <= horizon; i++ {
		day := time.Date(y, m, d+i, 0, 0, 0, 0, s.loc)
		if !s.day(day) {
			continue
		}
		for _, mins := range s.times {
			at := time.Date(day.Year(), day.Month(), day.Day(), mins/60, mins%60, 0, 0, s.loc)
			if at.Hour()*60+at.Minute() != mins {
				// A time the clocks skip (DST starts) runs when they resume.
				at = at.Add(time.Hour)
			}
			if at.After(t) {
				return at
			}
		}
	}
	return time.Time{}
}

// Parse reads a schedule in either syntax for the time zone loc.
func Parse(spec string, loc *time.Location) (*Schedule, error) {
	spec = strings.TrimSpace(spec)
	fields := strings.Fields(strings.ToLower(spec))
	if len(fields) == 5 && !slices.Contains(fields, "of") && !strings.HasPrefix(fields[0], "every") {
		s, err := parseUnix(fields)
		if err != nil {
			return nil, fmt.Errorf("schedule %q: %w", spec, err)
		}
		s.loc = loc
		return s, nil
	}
	s, err := parseAppEngine(fields)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	s.loc = loc
	return s, nil
}

var monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

var dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// field is the bounds and names of one unix cron field.
type field struct {
	lo, hi int
	names  map[string]int
}

var unixFields = []field{{0, 59, nil}, {0, 23, nil}, {1, 31, nil}, {1, 12, monthNames}, {0, 7, dayNames}}

// parseUnix reads the five fields of a unix cron schedule.
func parseUnix(fields []string) (*Schedule, error) {
	var sets [5]map[int]bool
	for i, f := range fields {
		set, err := parseField(f, unixFields[i])
		if err != nil {
			return nil, fmt.Errorf("field %d (%s): %w", i+1, f, err)
		}
		sets[i] = set
	}
	if sets[4][7] {
		sets[4][0] = true
	}
	var times []int
	for h := 0; h < 24; h++ {
		for m := 0; m < 60; m++ {
			if sets[1][h] && sets[0][m] {
				times = append(times, h*60+m)
			}
		}
	}
	domAny, dowAny := strings.HasPrefix(fields[2], "*"), strings.HasPrefix(fields[4], "*")
	dom, month, dow := sets[2], sets[3], sets[4]
	day := func(t time.Time) bool {
		if !month[int(t.Month())] {
			return false
		}
		d, w := dom[t.Day()], dow[int(t.Weekday())]
		switch {
		case domAny && dowAny:
			return true
		case domAny:
			return w
		case dowAny:
			return d
		}
		return d || w // both restricted: either, as cron does
	}
	return &Schedule{times: times, day: day}, nil
}

// parseField reads one field: *, N, A-B, names, lists and /step.
func parseField(f string, fd field) (map[int]bool, error) {
	set := map[int]bool{}
	for _, part := range strings.Split(f, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("bad step %q", stepText)
			}
			step = n
		}
		lo, hi := fd.lo, fd.hi
		switch {
		case rng == "*":
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = value(a, fd); err != nil {
				return nil, err
			}
			hi = lo
			if isRange {
				if hi, err = value(b, fd); err != nil {
					return nil, err
				}
			} else if hasStep {
				hi = fd.hi
			}
			if hi < lo {
				return nil, fmt.Errorf("range %q runs backwards", rng)
			}
		}
		for v := lo; v <= hi; v += step {
			set[v] = true
		}
	}
	return set, nil
}

func value(s string, fd field) (int, error) {
	if n, ok := fd.names[s]; ok {
		return n, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < fd.lo || n > fd.hi {
		return 0, fmt.Errorf("%q is not a value from %d to %d", s, fd.lo, fd.hi)
	}
	return n, nil
}

// parseAppEngine reads the App Engine cron syntax.
func parseAppEngine(f []string) (*Schedule, error) {
	if len(f) >= 3 && f[0] == "every" {
		if n, err := strconv.Atoi(f[1]); err == nil {
			return parseInterval(n, f[2:])
		}
	}
	if len(f) < 2 {
		return nil, fmt.Errorf("want \"every N minutes\", \"every day HH:MM\" or unix cron")
	}
	at, err := clock(f[len(f)-1])
	if err != nil {
		return nil, err
	}
	f = f[:len(f)-1]
	months := map[int]bool{}
	for m := 1; m <= 12; m++ {
		months[m] = true
	}
	if i := slices.Index(f, "of"); i >= 0 {
		if i != len(f)-2 {
			return nil, fmt.Errorf("want \"of\" followed by months")
		}
		if f[i+1] != "month" {
			if months, err = names(f[i+1], monthNames, 3); err != nil {
				return nil, err
			}
		}
		f = f[:i]
	}
	var day func(time.Time) bool
	switch {
	case len(f) == 1: // "1,15 of month"
		days := map[int]bool{}
		for _, p := range strings.Split(f[0], ",") {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 31 {
				return nil, fmt.Errorf("%q is not a day of the month", p)
			}
			days[n] = true
		}
		day = func(t time.Time) bool { return days[t.Day()] }
	case len(f) == 2:
		ordinals, err := ordinalSet(f[0])
		if err != nil {
			return nil, err
		}
		var weekdays map[int]bool
		if f[1] == "day" {
			if f[0] != "every" {
				return nil, fmt.Errorf("want \"every day\"")
			}
		} else if weekdays, err = names(f[1], dayNames, 3); err != nil {
			return nil, err
		}
		day = func(t time.Time) bool {
			return (weekdays == nil || weekdays[int(t.Weekday())]) && (ordinals == nil || ordinals[(t.Day()-1)/7+1])
		}
	default:
		return nil, fmt.Errorf("want \"every day HH:MM\", \"every monday HH:MM\" or \"1st monday of month HH:MM\"")
	}
	return &Schedule{times: []int{at}, day: func(t time.Time) bool { return months[int(t.Month())] && day(t) }}, nil
}

// parseInterval reads "every N minutes|hours" and what may follow it.
func parseInterval(n int, rest []string) (*Schedule, error) {
	var unit int
	switch rest[0] {
	case "minutes", "minute", "mins", "min":
		unit = 1
	case "hours", "hour", "hrs", "hr":
		unit = 60
	default:
		return nil, fmt.Errorf("%q is not minutes or hours", rest[0])
	}
	every := n * unit
	if n <= 0 || every > 24*60 {
		return nil, fmt.Errorf("every %d %s is not an interval within a day", n, rest[0])
	}
	from, to := 0, 24*60-1
	switch {
	case len(rest) == 1:
	case len(rest) == 2 && rest[1] == "synchronized":
	case len(rest) == 5 && rest[1] == "from" && rest[3] == "to":
		var err error
		if from, err = clock(rest[2]); err != nil {
			return nil, err
		}
		if to, err = clock(rest[4]); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("want \"from HH:MM to HH:MM\" or \"synchronized\" after the interval")
	}
	if to < from {
		to += 24 * 60 // a window across midnight
	}
	var times []int
	for m := from; m <= to; m += every {
		times = append(times, m%(24*60))
	}
	slices.Sort(times)
	times = slices.Compact(times)
	return &Schedule{times: times, day: func(time.Time) bool { return true }}, nil
}

// clock reads HH:MM as minutes after midnight.
func clock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 || len(m) != 2 {
		return 0, fmt.Errorf("%q is not a time of day (HH:MM)", s)
	}
	return hh*60 + mm, nil
}

// names reads a comma-separated list of names, matched by their first
// prefix letters ("mon", "monday", "sept").
func names(list string, known map[string]int, prefix int) (map[int]bool, error) {
	out := map[int]bool{}
	for _, p := range strings.Split(list, ",") {
		if len(p) < prefix {
			return nil, fmt.Errorf("%q is not a name loupe knows", p)
		}
		n, ok := known[p[:prefix]]
		if !ok {
			return nil, fmt.Errorf("%q is not a name loupe knows", p)
		}
		out[n] = true
	}
	return out, nil
}

var ordinalWords = map[string]int{"1st": 1, "first": 1, "2nd": 2, "second": 2, "3rd": 3, "third": 3,
	"4th": 4, "fourth": 4, "5th": 5, "fifth": 5}

// ordinalSet reads "every" (nil: any week) or a list of ordinals.
func ordinalSet(s string) (map[int]bool, error) {
	if s == "every" {
		return nil, nil
	}
	out := map[int]bool{}
	for _, p := range strings.Split(s, ",") {
		n, ok := ordinalWords[p]
		if !ok {
			return nil, fmt.Errorf("%q is not \"every\" or an ordinal (1st, second, …)", p)
		}
		out[n] = true
	}
	return out, nil
}

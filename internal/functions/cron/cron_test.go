package cron

import (
	"testing"
	"time"
)

// TestParse_Next reads schedules as Cloud Scheduler does and checks when
// each fires next.
func TestParse_Next(t *testing.T) {
	utc := time.UTC
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string, loc *time.Location) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rows := []struct {
		spec  string
		loc   *time.Location
		after string
		want  []string // the next runs, in order
	}{
		{"*/5 * * * *", utc, "2026-03-01 10:02", []string{"2026-03-01 10:05", "2026-03-01 10:10"}},
		{"0 9 * * mon-fri", utc, "2026-03-06 09:00", []string{"2026-03-09 09:00", "2026-03-10 09:00"}}, // Fri → Mon
		{"30 2 1,15 * *", utc, "2026-03-01 03:00", []string{"2026-03-15 02:30", "2026-04-01 02:30"}},
		{"0 0 1 jan *", utc, "2026-03-01 00:00", []string{"2027-01-01 00:00"}},
		{"0 12 13 * 5", utc, "2026-03-01 00:00", []string{"2026-03-06 12:00", "2026-03-13 12:00"}}, // the 13th or a Friday
		{"15 10 * * 7", utc, "2026-03-01 11:00", []string{"2026-03-08 10:15"}},                     // 7 is Sunday
		{"0 0 29 2 *", utc, "2026-03-01 00:00", []string{"2028-02-29 00:00"}},
		{"every 5 minutes", utc, "2026-03-01 10:02", []string{"2026-03-01 10:05", "2026-03-01 10:10"}},
		{"every 1 hours", utc, "2026-03-01 23:30", []string{"2026-03-02 00:00", "2026-03-02 01:00"}},
		{"every 2 hours synchronized", utc, "2026-03-01 01:00", []string{"2026-03-01 02:00"}},
		{"every 30 mins from 09:00 to 10:00", utc, "2026-03-01 09:45", []string{"2026-03-01 10:00", "2026-03-02 09:00"}},
		{"every day 00:00", la, "2026-03-01 00:00", []string{"2026-03-02 00:00"}},
		{"every monday 09:30", utc, "2026-03-01 00:00", []string{"2026-03-02 09:30", "2026-03-09 09:30"}},
		{"every mon,wed 09:30", utc, "2026-03-02 10:00", []string{"2026-03-04 09:30"}},
		{"1st,3rd monday of sep,oct 17:00", utc, "2026-03-01 00:00", []string{"2026-09-07 17:00", "2026-09-21 17:00", "2026-10-05 17:00"}},
		{"first sunday of month 08:00", utc, "2026-03-02 00:00", []string{"2026-04-05 08:00"}},
		{"1,15 of month 08:00", utc, "2026-03-02 00:00", []string{"2026-03-15 08:00", "2026-04-01 08:00"}},
		{"every day 02:30", la, "2026-03-08 00:00", []string{"2026-03-08 03:30", "2026-03-09 02:30"}}, // 02:30 does not exist on the DST day
	}
	for _, r := range rows {
		s, err := Parse(r.spec, r.loc)
		if err != nil {
			t.Errorf("Parse(%q): %v", r.spec, err)
			continue
		}
		cur := at(r.after, r.loc)
		for _, w := range r.want {
			cur = s.Next(cur)
			if want := at(w, r.loc); !cur.Equal(want) {
				t.Errorf("%q after %s: got %s, want %s", r.spec, r.after, cur.In(r.loc).Format("2006-01-02 15:04 MST"), w)
				break
			}
		}
	}
}

// TestParse_Errors refuses what Cloud Scheduler refuses.
func TestParse_Errors(t *testing.T) {
	for _, spec := range []string{"", "* * * *", "61 * * * *", "* 24 * * *", "5-1 * * * *", "*/0 * * * *",
		"every 0 minutes", "every 5 fortnights", "every day 25:00", "every blursday 10:00", "fifth of july",
		"every 5 minutes from 10:00", "6th monday of month 10:00"} {
		if _, err := Parse(spec, time.UTC); err == nil {
			t.Errorf("Parse(%q) = nil error", spec)
		}
	}
}

// FuzzParse checks that any schedule parses or fails cleanly, and that a
// parsed one fires after the time it is asked about.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "every 5 minutes", "every day 00:00", "1st monday of sep 10:00",
		"0 0 29 2 *", "every 30 mins from 22:00 to 02:00", "mon-fri/2 * * * *"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec, time.UTC)
		if err != nil {
			return
		}
		if next := s.Next(now); !next.IsZero() && !next.After(now) {
			t.Fatalf("%q: next %s is not after %s", spec, next, now)
		}
	})
}

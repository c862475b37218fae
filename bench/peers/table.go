package main

import (
	"fmt"
	"slices"
	"strings"
)

// row is one line of the table: a figure, its unit, and whether more is
// better (throughput) or less (latency, time, memory). A count (tests that
// passed) names the figure it is out of and the failures shown beside it, and
// has no ratio.
type row struct {
	label, unit string
	loupe       string // the loupe figure's key
	official    string // the official figure's key
	more        bool
	of, failed  string // a count's total and failures (keys of both sides)
}

// rows are the table's lines, labelled with the workload's sizes.
func (o options) rows() []row {
	small, large := size(o.smallSize), size(o.largeSize)
	return []row{
		{"Firestore sequential commits", "per s", "firestore seq", "firestore seq", true, "", ""},
		{"Firestore commits, 64 concurrent", "per s", "firestore conc", "firestore conc", true, "", ""},
		{fmt.Sprintf("Firestore equality query p50 (10 of %d docs)", o.queryDocs), "ms", "firestore query", "firestore query", false, "", ""},
		{"Firestore write → snapshot p50", "ms", "firestore snapshot", "firestore snapshot", false, "", ""},
		{"start: loupe (all three) / official Firestore", "s", "start", "firestore start", false, "", ""},
		{"start: loupe (all three) / official Pub/Sub", "s", "start", "pubsub start", false, "", ""},
		{"start: loupe (all three) / official Storage", "s", "start", "storage start", false, "", ""},
		{fmt.Sprintf("Pub/Sub publish, %d × %s", o.messages, size(o.msgSize)), "per s", "pubsub publish", "pubsub publish", true, "", ""},
		{"Pub/Sub streaming pull", "per s", "pubsub pull", "pubsub pull", true, "", ""},
		{"Pub/Sub end to end", "per s", "pubsub e2e", "pubsub e2e", true, "", ""},
		{fmt.Sprintf("Storage %d × %s upload (Admin SDK `save`, not resumable)", o.small, small), "per s", "storage small up", "storage small up", true, "", ""},
		{fmt.Sprintf("Storage %d × %s download (`download`)", o.small, small), "per s", "storage small down", "storage small down", true, "", ""},
		{fmt.Sprintf("Storage %d × %s upload, %d at a time", o.small, small, o.smallConcurrency), "per s", "storage small up concurrent", "storage small up concurrent", true, "", ""},
		{fmt.Sprintf("Storage %d × %s download, %d at a time", o.small, small, o.smallConcurrency), "per s", "storage small down concurrent", "storage small down concurrent", true, "", ""},
		{fmt.Sprintf("Storage %d × %s upload (`save`, resumable)", o.large, large), "MB/s", "storage large up", "storage large up", true, "", ""},
		{fmt.Sprintf("Storage %d × %s download (`download`)", o.large, large), "MB/s", "storage large down", "storage large down", true, "", ""},
		{fmt.Sprintf("Storage %d × %s download (`download({validation: false})`)", o.large, large), "MB/s", "storage large down novalid", "storage large down novalid", true, "", ""},
		{"RSS after the workloads: loupe / the officials' servers summed", "MB", "rss", "rss", false, "", ""},
		{"whole suite (" + strings.ReplaceAll(suiteServices, ",", ", ") + ") cold start until ready: `loupe emulators:start` / `firebase emulators:start`", "s", "suite start", "suite start", false, "", ""},
		{"whole suite: RSS once ready, process tree summed", "MB", "suite rss", "suite rss", false, "", ""},
		{"emulators codelab's tests: `emulators:exec 'npm test'`, wall time", "s", "codelab wall", "codelab wall", false, "", ""},
		{"emulators codelab's tests passed", "tests", "codelab passed", "codelab passed", true, "codelab tests", "codelab hooks failed"},
	}
}

// size names a byte count in KiB or MiB.
func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// table renders the rows that both sides measured.
func (b *bench) table() string {
	var sb strings.Builder
	sb.WriteString("| figure | loupe | official | ratio |\n|---|---|---|---|\n")
	for _, r := range b.o.rows() {
		l, o := b.results["loupe "+r.loupe], b.results["official "+r.official]
		if len(l) == 0 || len(o) == 0 {
			continue
		}
		if r.of != "" {
			fmt.Fprintf(&sb, "| %s | %s | %s | – |\n", r.label, b.count("loupe", r), b.count("official", r))
			continue
		}
		ratio := mean(l) / mean(o)
		if !r.more {
			ratio = 1 / ratio
		}
		fmt.Fprintf(&sb, "| %s | %s %s | %s %s | %.2f× |\n", r.label, span(l), r.unit, span(o), r.unit, ratio)
	}
	return sb.String()
}

// count is a count row's cell for one side: "passed/total unit", and the
// failures when there were any.
func (b *bench) count(side string, r row) string {
	whole := func(v []float64) string {
		lo, hi := slices.Min(v), slices.Max(v)
		if lo == hi {
			return fmt.Sprintf("%.0f", lo)
		}
		return fmt.Sprintf("%.0f–%.0f", lo, hi)
	}
	cell := whole(b.results[side+" "+r.loupe]) + "/" + whole(b.results[side+" "+r.of]) + " " + r.unit
	if failed := b.results[side+" "+r.failed]; slices.Max(failed) > 0 {
		cell += ", " + whole(failed) + " hooks failed"
	}
	return cell
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// span is "min–max" of the rounds' values, or the one value.
func span(v []float64) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + "–" + format(hi)
}

func format(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

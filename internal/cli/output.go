package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printer writes a command's result as an aligned table for people or as
// JSON for scripts.
type printer struct {
	out  io.Writer
	json bool
}

// table prints rows under headers; value is what --json prints instead.
func (p printer) table(headers []string, rows [][]string, value any) error {
	if p.json {
		return p.value(value)
	}
	tw := tabwriter.NewWriter(p.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(headers, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// record prints one object as "key: value" lines, or as JSON.
func (p printer) record(fields [][2]string, value any) error {
	if p.json {
		return p.value(value)
	}
	tw := tabwriter.NewWriter(p.out, 0, 0, 1, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

// done prints a one-line confirmation, or {"ok":true,...} as JSON.
func (p printer) done(message string, value any) error {
	if p.json {
		return p.value(value)
	}
	_, err := fmt.Fprintln(p.out, message)
	return err
}

func (p printer) value(v any) error {
	enc := json.NewEncoder(p.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

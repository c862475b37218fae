package rules

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Trace is what one evaluation did: every allow statement it tried, with its
// outcome, and every expression it evaluated, with its value. Evaluating with
// a trace also counts the values into the ruleset's coverage. Values are
// rendered only when Expressions (or JSON encoding) asks for them.
type Trace struct {
	Allows []AllowOutcome
	rs     *Ruleset
	steps  []step
}

// Expressions lists every expression evaluated, in evaluation order (inner
// expressions before the ones that contain them).
func (t *Trace) Expressions() []ExprValue {
	out := make([]ExprValue, 0, len(t.steps))
	for _, s := range t.steps {
		out = append(out, ExprValue{Range: t.rs.rangeOf(s.n), Value: JSONValue(s.v, s.err)})
	}
	return out
}

// MarshalJSON renders {"allows": […], "expressions": […]}.
func (t *Trace) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"allows": t.Allows, "expressions": t.Expressions()})
}

// AllowOutcome is one allow statement tried: Outcome is "allow" (its
// condition held, or it has none), "deny" (false) or "error", with the
// error's message.
type AllowOutcome struct {
	Line    int    `json:"line"`
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
}

// ExprValue is one expression evaluated and the value it gave: a rules value
// in JSON (see JSONValue), or {"undefined":{"causeMessage":…}} for an error.
type ExprValue struct {
	Range Range `json:"range"`
	Value any   `json:"value"`
}

// Range is an expression's place in the source: 1-based lines and columns
// (columns count Unicode code points), the end exclusive.
type Range struct {
	Line      int `json:"line"`
	Column    int `json:"column"`
	EndLine   int `json:"endLine"`
	EndColumn int `json:"endColumn"`
}

type step struct {
	n   node
	v   any
	err error
}

// tracer collects the steps of one evaluation.
type tracer struct {
	steps  []step
	allows []AllowOutcome
}

// allow records an allow statement's outcome; t may be nil.
func (t *tracer) allow(line int, outcome, message string) {
	if t != nil {
		t.allows = append(t.allows, AllowOutcome{Line: line, Outcome: outcome, Message: message})
	}
}

func (t *tracer) record(n node, v any, err error) {
	if !covered(n) {
		return
	}
	t.steps = append(t.steps, step{n, v, err})
}

// EvaluateTrace is Evaluate that also returns what the evaluation did, and
// counts it into the ruleset's coverage.
func (rs *Ruleset) EvaluateTrace(req *Request) (Decision, *Trace) {
	d, t := rs.Explain(req)
	rs.coverage.add(t.steps)
	return d, t
}

// Explain is EvaluateTrace without counting into coverage: for trying a
// request out (the rules playground) rather than serving it.
func (rs *Ruleset) Explain(req *Request) (Decision, *Trace) {
	t := &tracer{}
	d := rs.evaluate(req, t)
	out := &Trace{Allows: t.allows, rs: rs, steps: t.steps}
	if out.Allows == nil {
		out.Allows = []AllowOutcome{}
	}
	return d, out
}

// rangeOf is n's source range in lines and columns.
func (rs *Ruleset) rangeOf(n node) Range {
	sp := rs.spans[n]
	l, c := lineCol(rs.Source, sp.start)
	el, ec := lineCol(rs.Source, sp.end)
	return Range{Line: l, Column: c, EndLine: el, EndColumn: ec}
}

// lineCol is the 1-based line and code-point column of a byte offset.
func lineCol(src string, off int) (int, int) {
	off = min(off, len(src))
	line := 1 + strings.Count(src[:off], "\n")
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(src[lineStart:off])
}

// JSONValue renders a rules value as the emulator's coverage report does:
// {"boolValue": true}, {"intValue": "3"}, {"floatValue": 1.5},
// {"stringValue": "x"}, {"nullValue": null}, {"bytesValue": base64},
// {"timestampValue": RFC 3339}, {"durationValue": "1.5s"},
// {"latlngValue": {"latitude", "longitude"}}, {"pathValue": "/a/b"},
// {"listValue": {"values": […]}}, {"setValue": {"values": […]}},
// {"mapValue": {"fields": {…}}}; an error is
// {"undefined": {"causeMessage": message}}.
func JSONValue(v any, err error) map[string]any {
	if err != nil {
		return map[string]any{"undefined": map[string]any{"causeMessage": err.Error()}}
	}
	switch x := v.(type) {
	case nil:
		return map[string]any{"nullValue": nil}
	case bool:
		return map[string]any{"boolValue": x}
	case int64:
		return map[string]any{"intValue": strconv.FormatInt(x, 10)}
	case int:
		return map[string]any{"intValue": strconv.Itoa(x)}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return map[string]any{"floatValue": strconv.FormatFloat(x, 'g', -1, 64)}
		}
		return map[string]any{"floatValue": x}
	case string:
		return map[string]any{"stringValue": x}
	case []byte:
		return map[string]any{"bytesValue": base64.StdEncoding.EncodeToString(x)}
	case time.Time:
		return map[string]any{"timestampValue": x.UTC().Format(time.RFC3339Nano)}
	case time.Duration:
		return map[string]any{"durationValue": strconv.FormatFloat(x.Seconds(), 'f', -1, 64) + "s"}
	case LatLng:
		return map[string]any{"latlngValue": map[string]any{"latitude": x.Lat, "longitude": x.Lng}}
	case Path:
		return map[string]any{"pathValue": x.String()}
	case []any:
		return map[string]any{"listValue": map[string]any{"values": jsonValues(x)}}
	case *Set:
		return map[string]any{"setValue": map[string]any{"values": jsonValues(x.items)}}
	case *containsList:
		return map[string]any{"listValue": map[string]any{"values": jsonValues(x.v)}}
	case map[string]any:
		fields := make(map[string]any, len(x))
		for k, e := range x {
			fields[k] = JSONValue(e, nil)
		}
		return map[string]any{"mapValue": map[string]any{"fields": fields}}
	}
	return map[string]any{"stringValue": typeName(v)}
}

func jsonValues(l []any) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = JSONValue(e, nil)
	}
	return out
}

// coverage counts, per expression, how often each value came out of it.
type coverage struct {
	mu     sync.Mutex
	counts map[node]map[string]*ValueCount
}

// ValueCount is one value an expression gave and how many times.
type ValueCount struct {
	Value any `json:"value"`
	Count int `json:"count"`
}

func (c *coverage) add(steps []step) {
	if len(steps) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[node]map[string]*ValueCount{}
	}
	for _, s := range steps {
		values := c.counts[s.n]
		if values == nil {
			values = map[string]*ValueCount{}
			c.counts[s.n] = values
		}
		key := valueKey(s.v, s.err)
		vc := values[key]
		if vc == nil {
			vc = &ValueCount{Value: JSONValue(s.v, s.err)}
			values[key] = vc
		}
		vc.Count++
	}
}

// valueKey identifies a value for counting, without reflection: the scalars
// most expressions give are cheap; lists and maps are written out in a
// compact form with sorted keys, cut off after maxKeyItems items.
func valueKey(v any, err error) string {
	if err != nil {
		return "e" + err.Error()
	}
	switch x := v.(type) {
	case nil:
		return "n"
	case bool:
		if x {
			return "t"
		}
		return "f"
	case string:
		return "s" + x
	}
	budget := maxKeyItems
	return string(appendKey(nil, v, &budget))
}

// maxKeyItems bounds the items a compound value's key writes out.
const maxKeyItems = 16

func appendKey(b []byte, v any, budget *int) []byte {
	if *budget <= 0 {
		return append(b, '~')
	}
	*budget--
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		return strconv.AppendBool(append(b, 'b'), x)
	case int64:
		return strconv.AppendInt(append(b, 'i'), x, 10)
	case float64:
		return strconv.AppendFloat(append(b, 'd'), x, 'g', -1, 64)
	case string:
		return appendString(append(b, 's'), x)
	case []byte:
		return appendString(append(b, 'y'), string(x))
	case time.Time:
		return strconv.AppendInt(append(b, 'T'), x.UnixNano(), 10)
	case time.Duration:
		return strconv.AppendInt(append(b, 'D'), int64(x), 10)
	case Path:
		return appendString(append(b, 'p'), x.String())
	case LatLng:
		return strconv.AppendFloat(strconv.AppendFloat(append(b, 'L'), x.Lat, 'g', -1, 64), x.Lng, 'g', -1, 64)
	case []any:
		return appendKeys(append(b, 'l'), x, budget)
	case *Set:
		return appendKeys(append(b, 'S'), x.items, budget)
	case *containsList:
		return appendKeys(append(b, 'c'), x.v, budget)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = appendKey(appendString(b, k), x[k], budget)
		}
		return append(b, '}')
	}
	data, _ := json.Marshal(JSONValue(v, nil))
	return append(b, data...)
}

// appendString writes s length-prefixed, which needs no escaping.
func appendString(b []byte, s string) []byte {
	return append(append(strconv.AppendInt(b, int64(len(s)), 10), ':'), s...)
}

func appendKeys(b []byte, l []any, budget *int) []byte {
	b = append(b, '[')
	for _, e := range l {
		b = append(appendKey(b, e, budget), ',')
	}
	return append(b, ']')
}

// CoverageReport is a ruleset's coverage in the Firestore emulator's
// ruleCoverage shape: the rules file, and for each top-level expression (an
// allow condition, a function's let bindings and body) its position, the
// values it gave with their counts, and the same for its subexpressions.
// Expressions never evaluated have no values; literals and the bare globals
// request and resource are left out.
type CoverageReport struct {
	Rules  CoverageRules `json:"rules"`
	Report []*ExprReport `json:"report,omitempty"`
}

// CoverageRules holds the rules files a report covers.
type CoverageRules struct {
	Files []CoverageFile `json:"files"`
}

// CoverageFile is one rules file.
type CoverageFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// ExprReport is one expression's coverage.
type ExprReport struct {
	SourcePosition SourcePosition `json:"sourcePosition"`
	Values         []ValueCount   `json:"values,omitempty"`
	Children       []*ExprReport  `json:"children,omitempty"`
}

// SourcePosition places an expression as the emulator does: 1-based line and
// column, and code-point offsets of its first and last character (inclusive).
type SourcePosition struct {
	FileName      string `json:"fileName,omitempty"`
	Line          int    `json:"line"`
	Column        int    `json:"column"`
	CurrentOffset int    `json:"currentOffset"`
	EndOffset     int    `json:"endOffset"`
}

// Coverage reports how often each expression of the ruleset gave each value
// since it was compiled.
func (rs *Ruleset) Coverage() CoverageReport {
	out := CoverageReport{Rules: CoverageRules{Files: []CoverageFile{{Name: rs.File, Content: rs.Source}}}}
	var tops []node
	var collect func(b *block)
	collect = func(b *block) {
		for _, f := range b.funcs {
			for _, l := range f.lets {
				tops = append(tops, l.x)
			}
			tops = append(tops, f.body)
		}
		for _, a := range b.allows {
			if a.cond != nil {
				tops = append(tops, a.cond)
			}
		}
		for _, c := range b.children {
			collect(c)
		}
	}
	collect(rs.root)
	slices.SortFunc(tops, func(a, b node) int { return rs.spans[a].start - rs.spans[b].start })
	rs.coverage.mu.Lock()
	defer rs.coverage.mu.Unlock()
	for _, n := range tops {
		if r := rs.exprReport(n); r != nil {
			out.Report = append(out.Report, r)
		}
	}
	return out
}

// covered reports whether coverage counts n: literals are left out, and so
// are the bare globals request and resource (their value is the whole
// request or resource, which the request log shows).
func covered(n node) bool {
	switch x := n.(type) {
	case *litNode:
		return false
	case *identNode:
		return x.name != "request" && x.name != "resource"
	}
	return true
}

// exprReport is n's report, nil for what coverage leaves out; the caller
// holds the lock.
func (rs *Ruleset) exprReport(n node) *ExprReport {
	if !covered(n) {
		return nil
	}
	sp := rs.spans[n]
	line, col := lineCol(rs.Source, sp.start)
	start := utf8.RuneCountInString(rs.Source[:sp.start])
	r := &ExprReport{SourcePosition: SourcePosition{FileName: rs.File, Line: line, Column: col, CurrentOffset: start,
		EndOffset: start + utf8.RuneCountInString(rs.Source[sp.start:sp.end]) - 1}}
	for _, vc := range rs.coverage.counts[n] {
		r.Values = append(r.Values, *vc)
	}
	slices.SortFunc(r.Values, func(a, b ValueCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		ka, _ := json.Marshal(a.Value)
		kb, _ := json.Marshal(b.Value)
		return strings.Compare(string(ka), string(kb))
	})
	for _, k := range children(n) {
		if c := rs.exprReport(k); c != nil {
			r.Children = append(r.Children, c)
		}
	}
	return r
}

package rules

import (
	"encoding/json"
	"reflect"
	"testing"
)

// flatten lists a report's expressions depth first.
func flatten(rs []*ExprReport) []*ExprReport {
	var out []*ExprReport
	for _, r := range rs {
		out = append(out, r)
		out = append(out, flatten(r.Children)...)
	}
	return out
}

// text is the source an expression report covers: code-point offsets, end inclusive.
func text(src string, r *ExprReport) string {
	runes := []rune(src)
	return string(runes[r.SourcePosition.CurrentOffset : r.SourcePosition.EndOffset+1])
}

func TestCoverage_PositionsAreCodePointsWithInclusiveEnds(t *testing.T) {
	src := w2("    // 中文 🚀\r\n    match /c/{id} {\r\n      allow get: if '中文🚀' == '中文🚀' && resource.data.visible;\r\n    }")
	rs := mustCompile(t, src)
	rs.EvaluateTrace(fsReq(Get, "c/x", nil, map[string]any{"visible": true}, nil))
	rep := rs.Coverage()
	if len(rep.Report) != 1 {
		t.Fatalf("report = %+v, want one top-level expression", rep.Report)
	}
	top := rep.Report[0]
	if got := text(src, top); got != "'中文🚀' == '中文🚀' && resource.data.visible" {
		t.Errorf("top expression covers %q", got)
	}
	if got := text(src, top.Children[1]); got != "resource.data.visible" {
		t.Errorf("second child covers %q", got)
	}
	runes := []rune(src)
	for _, r := range flatten(rep.Report) {
		before := runes[:r.SourcePosition.CurrentOffset]
		line, col := 1, 1
		for _, c := range before {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		if got := text(src, r); got == "resource" || got == "request" {
			t.Errorf("the bare global %s is in the report", got)
		}
		if r.SourcePosition.Line != line || r.SourcePosition.Column != col {
			t.Errorf("%q at %d:%d, want %d:%d", text(src, r), r.SourcePosition.Line, r.SourcePosition.Column, line, col)
		}
	}
	if rep.Rules.Files[0].Content != src || rep.Rules.Files[0].Name != "test.rules" {
		t.Errorf("rules files = %+v", rep.Rules.Files)
	}
}

func TestCoverage_CountsValuesAndErrors(t *testing.T) {
	src := w2("    match /c/{id} {\n      allow get: if resource.data.missing == 1 || request.auth != null;\n      allow list;\n    }")
	rs := mustCompile(t, src)
	if rep := rs.Coverage(); rep.Report[0].Values != nil {
		t.Errorf("before any request: values = %+v, want none", rep.Report[0].Values)
	}
	rs.EvaluateTrace(fsReq(Get, "c/x", nil, map[string]any{}, nil))
	rs.EvaluateTrace(fsReq(Get, "c/x", nil, map[string]any{}, nil))
	rs.EvaluateTrace(fsReq(Get, "c/x", user("alice"), map[string]any{}, nil))
	rep := rs.Coverage()
	if len(rep.Report) != 1 {
		t.Fatalf("report has %d top-level expressions, want 1 (a bare allow has none)", len(rep.Report))
	}
	want := []ValueCount{{Value: map[string]any{"undefined": map[string]any{"causeMessage": "Property missing is undefined on object."}}, Count: 2},
		{Value: map[string]any{"boolValue": true}, Count: 1}}
	got, _ := json.Marshal(rep.Report[0].Values)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("top-level values = %s, want %s", got, exp)
	}
	right := rep.Report[0].Children[1]
	if text(src, right) != "request.auth != null" || len(right.Values) != 2 {
		t.Errorf("right operand %q values %+v, want false twice and true once", text(src, right), right.Values)
	}
}

func TestCoverage_FunctionsAreReported(t *testing.T) {
	rs := mustCompile(t, w2("    function signedIn() { return request.auth != null; }\n    match /c/{id} { allow get: if signedIn(); }"))
	rs.EvaluateTrace(fsReq(Get, "c/x", user("alice"), map[string]any{}, nil))
	rep := rs.Coverage()
	if len(rep.Report) != 2 {
		t.Fatalf("report = %d expressions, want the function body and the condition", len(rep.Report))
	}
	for _, r := range rep.Report {
		if !reflect.DeepEqual(r.Values, []ValueCount{{Value: map[string]any{"boolValue": true}, Count: 1}}) {
			t.Errorf("%+v: values %+v, want true once", r.SourcePosition, r.Values)
		}
	}
}

func TestEvaluateTrace_NamesTheDecidingLineAndEveryExpression(t *testing.T) {
	src := w2("    match /c/{id} {\n      allow update: if request.auth.uid == 'bob';\n      allow update: if request.auth.uid == resource.data.owner;\n    }")
	rs := mustCompile(t, src)
	d, tr := rs.EvaluateTrace(fsReq(Update, "c/x", user("alice"), map[string]any{"owner": "alice"}, map[string]any{}))
	if !d.Allow || d.Line != 6 {
		t.Errorf("decision = %+v, want allowed by line 6", d)
	}
	wantAllows := []AllowOutcome{{Line: 5, Outcome: "deny"}, {Line: 6, Outcome: "allow"}}
	if !reflect.DeepEqual(tr.Allows, wantAllows) {
		t.Errorf("allows = %+v, want %+v", tr.Allows, wantAllows)
	}
	var found bool
	for _, e := range tr.Expressions() {
		if e.Range == (Range{Line: 6, Column: 24, EndLine: 6, EndColumn: 63}) {
			found = reflect.DeepEqual(e.Value, map[string]any{"boolValue": true})
		}
	}
	if !found {
		t.Errorf("the condition on line 6 (columns 24-63) is not traced as true: %+v", tr.Expressions())
	}
	if d2 := rs.Evaluate(fsReq(Update, "c/x", user("alice"), map[string]any{"owner": "alice"}, map[string]any{})); d2 != d {
		t.Errorf("Evaluate = %+v, EvaluateTrace = %+v", d2, d)
	}
}

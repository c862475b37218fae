package guard

import (
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/rules"
)

// coverageSet is the rule set a coverage request names: a project's
// Firestore database (?database=, default "(default)"), or with
// ?service=storage a bucket's Storage rules (?bucket=, default every bucket's).
func (r *Rules) coverageSet(project string, req *http.Request) *Set {
	q := req.URL.Query()
	if q.Get("service") == string(rules.Storage) {
		return r.Lookup(rules.Storage, "", q.Get("bucket"))
	}
	db := q.Get("database")
	if db == "" {
		db = config.DefaultDatabase
	}
	return r.Lookup(rules.Firestore, project, db)
}

// coverage serves GET /emulator/v1/projects/{p}:ruleCoverage (JSON, in the
// Firestore emulator's shape) and :ruleCoverage.html (the same, readable).
// With no rules in force the report has no files.
func (r *Rules) coverage(w http.ResponseWriter, req *http.Request, project string, html bool) {
	report := rules.CoverageReport{Rules: rules.CoverageRules{Files: []rules.CoverageFile{}}}
	if s := r.coverageSet(project, req); s != nil {
		report = s.Ruleset.Coverage()
	}
	if !html {
		httpjson.Write(w, http.StatusOK, report)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := coverageHTML.Execute(w, coveragePage(project, report)); err != nil {
		r.logger.Error("coverage page", "err", err)
	}
}

//go:embed coverage.html
var coverageFiles embed.FS

var coverageHTML = template.Must(template.ParseFS(coverageFiles, "coverage.html"))

// page is what coverage.html shows: the source with every expression in a
// nested span (its values and counts as a tooltip), and a gutter of line
// numbers marked by whether the expressions starting on them ran.
type page struct {
	Project string
	File    string
	Source  template.HTML
	Gutter  []gutterLine
	JSON    template.JS
}

type gutterLine struct {
	Number int
	State  string // "hit", "miss", or "" when no expression starts on the line
}

// coveragePage lays out report's source for coverage.html.
func coveragePage(project string, report rules.CoverageReport) page {
	p := page{Project: project}
	data, _ := json.Marshal(report)
	p.JSON = template.JS(data)
	if len(report.Rules.Files) == 0 {
		return p
	}
	p.File = report.Rules.Files[0].Name
	src := []rune(report.Rules.Files[0].Content)
	opens := map[int][]*rules.ExprReport{} // by start offset, outermost first
	var index func(rs []*rules.ExprReport)
	index = func(rs []*rules.ExprReport) {
		for _, e := range rs {
			opens[e.SourcePosition.CurrentOffset] = append(opens[e.SourcePosition.CurrentOffset], e)
			index(e.Children)
		}
	}
	index(report.Report)
	lines := strings.Count(string(src), "\n") + 1
	p.Gutter = make([]gutterLine, lines)
	for i := range p.Gutter {
		p.Gutter[i].Number = i + 1
	}
	var b strings.Builder
	var ends []int // end offsets (exclusive) of the open spans, innermost last
	line := 0
	for i := 0; i <= len(src); i++ {
		for len(ends) > 0 && ends[len(ends)-1] == i {
			b.WriteString("</span>")
			ends = ends[:len(ends)-1]
		}
		if i == len(src) {
			break
		}
		for _, e := range opens[i] {
			title, state := describe(e)
			fmt.Fprintf(&b, `<span class="%s" title="%s">`, state, html.EscapeString(title))
			ends = append(ends, e.SourcePosition.EndOffset+1)
			if g := &p.Gutter[line]; state != "miss" {
				g.State = "hit"
			} else if g.State == "" {
				g.State = "miss"
			}
		}
		if src[i] == '\n' {
			line++
		}
		b.WriteString(html.EscapeString(string(src[i])))
	}
	p.Source = template.HTML(b.String())
	return p
}

// describe is an expression's tooltip and state: never run ("miss"), gave
// an error, gave false, or ran ("hit").
func describe(e *rules.ExprReport) (title, state string) {
	if len(e.Values) == 0 {
		return "never evaluated", "miss"
	}
	state = "hit"
	var lines []string
	for _, v := range e.Values {
		data, _ := json.Marshal(v.Value)
		lines = append(lines, string(data)+" × "+strconv.Itoa(v.Count))
		m, _ := v.Value.(map[string]any)
		switch {
		case m["undefined"] != nil && state == "hit":
			state = "error"
		case m["boolValue"] == false && state == "hit":
			state = "false"
		}
	}
	return strings.Join(lines, "\n"), state
}

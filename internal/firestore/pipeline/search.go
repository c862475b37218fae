package pipeline

import (
	"math"
	"sort"
	"strings"
	"unicode"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// searchStage is the search stage: it keeps the rows its query matches,
// scores them (score() reads the score), adds fields, sorts (by score,
// highest first, unless told otherwise) and pages.
//
// Approximation: production's full-text index and ranking are not
// documented; a row matches when every term of the query (words, with
// "-" negating one and quotes making a phrase) occurs in one of its
// string fields, compared case-insensitively, and its score is the
// number of term occurrences over the square root of its word count.
type searchStage struct {
	query         expr
	fields        []named
	sort          []ordering
	limit, offset int64
}

const scoreVar = "\x00score"

func compileSearch(s *pb.Pipeline_Stage, depth int) (stage, error) {
	opts := s.GetOptions()
	st := &searchStage{limit: -1}
	q, ok := opts["query"]
	if !ok {
		return nil, invalid("search(...) requires a query.")
	}
	x, err := compileExpr(q, depth+1)
	if err != nil {
		return nil, err
	}
	st.query = x
	if f, ok := opts["add_fields"]; ok {
		if st.fields, err = namedMap(f.GetMapValue().GetFields(), depth, false); err != nil {
			return nil, err
		}
	}
	if o, ok := opts["sort"]; ok {
		if st.sort, err = orderings(o.GetArrayValue().GetValues(), depth); err != nil {
			return nil, err
		}
	}
	for name, dst := range map[string]*int64{"limit": &st.limit, "offset": &st.offset} {
		if v, ok := opts[name]; ok {
			if kindOf(v) != kInt || v.GetIntegerValue() < 0 {
				return nil, invalid("search(...) %s must be a non-negative integer.", name)
			}
			*dst = v.GetIntegerValue()
		}
	}
	return st, nil
}

func (st *searchStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	var kept []*row
	for _, rw := range in {
		s := scopeFor(r, outer, rw)
		x := st.query.eval(s)
		if x.isError() {
			return nil, outputError(x)
		}
		if x.v == nil || kindOf(x.v) != kBoolean || !x.v.GetBooleanValue() {
			continue
		}
		next := *rw
		next.vars = withVar(rw.vars, scoreVar, of(doubleV(s.score)))
		kept = append(kept, &next)
	}
	var err error
	if len(st.fields) > 0 {
		if kept, err = (&selectStage{fields: st.fields, keep: true}).apply(r, outer, kept); err != nil {
			return nil, err
		}
	}
	if len(st.sort) > 0 {
		kept, err = (&sortStage{keys: st.sort}).apply(r, outer, kept)
	} else {
		sort.SliceStable(kept, func(i, j int) bool {
			return kept[i].vars[scoreVar].v.GetDoubleValue() > kept[j].vars[scoreVar].v.GetDoubleValue()
		})
	}
	if err != nil {
		return nil, err
	}
	if kept, err = (&sliceStage{offset: st.offset, limit: -1}).apply(r, outer, kept); err != nil {
		return nil, err
	}
	if st.limit >= 0 {
		kept, _ = (&sliceStage{limit: st.limit, offset: -1}).apply(r, outer, kept)
	}
	return kept, nil
}

func withVar(vars map[string]val, name string, v val) map[string]val {
	out := make(map[string]val, len(vars)+1)
	for k, x := range vars {
		out[k] = x
	}
	out[name] = v
	return out
}

func init() {
	register("document_matches", 1, 1, func(c *call, s *scope) val {
		q := c.arg(s, 0)
		if q.isError() {
			return q
		}
		if q.v == nil || kindOf(q.v) != kString {
			return typeError("document_matches", "String", q)
		}
		score, ok := matchText(s.row.fields, q.v.GetStringValue())
		s.score += score
		return of(boolV(ok))
	})
	register("score", 0, 0, func(_ *call, s *scope) val {
		if v, ok := s.row.vars[scoreVar]; ok {
			return v
		}
		return failf("The function score(...) can only be used after a search stage.")
	})
}

// term is one query word or phrase; negated terms must not occur.
type term struct {
	words   []string
	negated bool
}

func parseQuery(q string) []term {
	var out []term
	for len(q) > 0 {
		q = strings.TrimLeftFunc(q, unicode.IsSpace)
		if q == "" {
			break
		}
		neg := false
		if q[0] == '-' {
			neg, q = true, q[1:]
		}
		var text string
		if strings.HasPrefix(q, `"`) {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				text, q = q[1:], ""
			} else {
				text, q = q[1:end+1], q[end+2:]
			}
		} else {
			end := strings.IndexFunc(q, unicode.IsSpace)
			if end < 0 {
				end = len(q)
			}
			text, q = q[:end], q[end:]
		}
		if ws := words(text); len(ws) > 0 {
			out = append(out, term{words: ws, negated: neg})
		}
	}
	return out
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// matchText reports whether the row's text matches every term, and its
// score.
func matchText(fields map[string]*pb.Value, query string) (float64, bool) {
	var text []string
	collectText(mapV(fields), &text)
	terms := parseQuery(query)
	if len(terms) == 0 {
		return 0, false
	}
	hits := 0
	for _, t := range terms {
		n := occurrences(text, t.words)
		if (n > 0) == t.negated {
			return 0, false
		}
		hits += n
	}
	return float64(hits) / math.Sqrt(float64(max(1, len(text)))), true
}

func collectText(v *pb.Value, out *[]string) {
	switch kindOf(v) {
	case kString:
		*out = append(*out, words(v.GetStringValue())...)
	case kArray:
		for _, el := range v.GetArrayValue().GetValues() {
			collectText(el, out)
		}
	case kMap:
		for _, k := range sortedKeys(v.GetMapValue().GetFields()) {
			collectText(v.GetMapValue().GetFields()[k], out)
		}
	}
}

func occurrences(text, phrase []string) int {
	n := 0
	for i := 0; i+len(phrase) <= len(text); i++ {
		match := true
		for j, w := range phrase {
			if text[i+j] != w {
				match = false
				break
			}
		}
		if match {
			n++
		}
	}
	return n
}

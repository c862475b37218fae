package guard

import (
	"encoding/json"
	"net/http"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/rules"
)

// decide judges the request build makes with the rule set in force for
// project and target (allowing it, without building it, when there is none)
// and records the decision in the log, completing e.
func (r *Rules) decide(service rules.Service, project, target string, caller identity.Principal, e requestlog.Entry, build func() *rules.Request) rules.Decision {
	d := rules.Decision{Allow: true}
	set := r.Lookup(service, project, target)
	var tr *rules.Trace
	if set != nil {
		d, tr = set.Ruleset.EvaluateTrace(build())
	}
	e.Caller = Caller(caller)
	e.Outcome, e.Status = Outcome(d, tr)
	if !d.Allow {
		e.Message = d.Message
	}
	if set != nil {
		e.Rules = &requestlog.Rules{File: set.Ruleset.File, Line: d.Line, Trace: tr, Source: set.Ruleset.Source}
	}
	r.log.Add(e)
	return d
}

// Caller is a request's caller as the log shows it, nil when nobody is
// signed in.
func Caller(p identity.Principal) *requestlog.Caller {
	if !p.Authenticated() {
		return nil
	}
	claims := p.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	return &requestlog.Caller{UID: p.UID, Claims: claims}
}

// TypedFields holds a document's fields or an object's metadata (rules
// values, never changed afterwards) and renders them, when the log is read,
// as typed values ({"stringValue": …}, …).
type TypedFields map[string]any

// MarshalJSON implements json.Marshaler.
func (m TypedFields) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = rules.JSONValue(v, nil)
	}
	return json.Marshal(out)
}

// docData is a document's fields in the log, rendered as TypedFields when
// the log is read (stored documents are never changed in place).
type docData struct{ d *pb.Document }

// MarshalJSON implements json.Marshaler.
func (x docData) MarshalJSON() ([]byte, error) { return json.Marshal(TypedFields(fields(x.d))) }

// logDoc is d's data for an entry, nil without a document.
func logDoc(d *pb.Document) any {
	if d == nil {
		return nil
	}
	return docData{d}
}

// listQuery is a list request's data in the log: {"query": the structured
// query as Firestore's REST API writes it}, rendered when the log is read.
type listQuery struct{ q *pb.StructuredQuery }

// MarshalJSON implements json.Marshaler.
func (l listQuery) MarshalJSON() ([]byte, error) {
	q, err := protojson.Marshal(l.q)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]json.RawMessage{"query": q})
}

// Outcome names a decision: allowed, denied, or error when every allow
// statement tried failed with an error; with the HTTP status the client gets.
func Outcome(d rules.Decision, tr *rules.Trace) (string, int) {
	if d.Allow {
		return requestlog.Allowed, http.StatusOK
	}
	if tr != nil && len(tr.Allows) > 0 {
		errored := true
		for _, a := range tr.Allows {
			errored = errored && a.Outcome == "error"
		}
		if errored {
			return requestlog.Error, http.StatusForbidden
		}
	}
	return requestlog.Denied, http.StatusForbidden
}

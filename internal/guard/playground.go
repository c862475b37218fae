package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/rules"
)

// playgroundRequest is the body of POST /emulator/v1/projects/{p}:rulesPlayground.
type playgroundRequest struct {
	// Service is "firestore" (default) or "storage".
	Service  string `json:"service"`
	Database string `json:"database"` // Firestore; default "(default)"
	Bucket   string `json:"bucket"`   // Storage; default "{project}.appspot.com"
	// Path is the document path under the database (for list, the
	// collection), or the object name (for list, the prefix).
	Path   string `json:"path"`
	Method string `json:"method"`
	// Auth is the signed-in user; null or absent for nobody.
	Auth *struct {
		UID   string         `json:"uid"`
		Token map[string]any `json:"token"`
	} `json:"auth"`
	// Resource is the stored document data or object metadata; absent means
	// "as stored now" for a Firestore document, null means none.
	Resource json.RawMessage `json:"resource"`
	// Data is the document data or object metadata as the write would leave it.
	Data json.RawMessage `json:"data"`
	// Rules, when set, is rules source to try instead of the rules in force.
	Rules string `json:"rules"`
}

// postProject serves POST /emulator/v1/projects/{p}:rulesPlayground.
func (r *Rules) postProject(w http.ResponseWriter, req *http.Request) {
	project, ok := strings.CutSuffix(req.PathValue("target"), ":rulesPlayground")
	if !ok || project == "" {
		http.NotFound(w, req)
		return
	}
	var body playgroundRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxRulesBody)).Decode(&body); err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "body must be a JSON object: "+err.Error()))
		return
	}
	out, err := r.playground(project, body)
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, err.Error()))
		return
	}
	httpjson.Write(w, http.StatusOK, out)
}

var playgroundMethods = map[string]bool{"get": true, "list": true, "create": true, "update": true, "delete": true}

// playground judges a made-up request with the rules in force (or the
// rules given), without serving it, logging it or counting coverage.
func (r *Rules) playground(project string, b playgroundRequest) (map[string]any, error) {
	if !playgroundMethods[b.Method] {
		return nil, fmt.Errorf("method must be one of get, list, create, update, delete, not %q", b.Method)
	}
	path := strings.Trim(b.Path, "/")
	if path == "" {
		return nil, fmt.Errorf("path is required")
	}
	req := &rules.Request{Method: rules.Method(b.Method), Time: time.Now().UTC()}
	if b.Auth != nil && b.Auth.UID != "" {
		token := b.Auth.Token
		if token == nil {
			token = map[string]any{}
		}
		req.Auth = rules.NewAuth(b.Auth.UID, token)
	}
	data, err := plainValue(b.Data)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	resource, err := plainValue(b.Resource)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	var target string
	switch b.Service {
	case "", string(rules.Firestore):
		req.Service = rules.Firestore
		target = b.Database
		if target == "" {
			target = config.DefaultDatabase
		}
		database := "projects/" + project + "/databases/" + target
		name, err := firestore.ParseName(database + "/documents/" + path)
		if err != nil {
			return nil, fmt.Errorf("path: %w", err)
		}
		if isList := b.Method == "list"; isList != (len(name.Path)%2 == 1) {
			if isList {
				return nil, fmt.Errorf("path: a list names a collection, not the document %s", path)
			}
			return nil, fmt.Errorf("path: %s names a collection; %s names a document", path, b.Method)
		}
		req.Path = rulesPath(name)
		if b.Method == "list" {
			req.Query = &rules.Query{}
		}
		engine := r.engine()
		if engine != nil {
			req.Documents = docs{engine: engine, database: database}
		}
		if b.Resource == nil && engine != nil && b.Method != "list" {
			if doc, found, _ := req.Documents.Get(req.Path); found {
				resource = doc
			}
		}
	case string(rules.Storage):
		req.Service = rules.Storage
		target = b.Bucket
		if target == "" {
			target = project + ".appspot.com"
		}
		req.Path = "/b/" + target + "/o/" + path
	default:
		return nil, fmt.Errorf("service must be firestore or storage, not %q", b.Service)
	}
	if m, ok := resource.(map[string]any); ok {
		req.Resource = m
	} else if resource != nil {
		return nil, fmt.Errorf("resource must be an object or null")
	}
	if m, ok := data.(map[string]any); ok {
		req.RequestResource = m
	} else if data != nil {
		return nil, fmt.Errorf("data must be an object or null")
	}

	var rs *rules.Ruleset
	if b.Rules != "" {
		if rs, err = rules.Compile(b.Rules, "playground.rules"); err != nil {
			return nil, err
		}
	} else if set := r.Lookup(req.Service, project, target); set != nil {
		rs = set.Ruleset
	}
	out := map[string]any{"file": "", "source": "", "line": 0, "message": "", "allows": []any{}, "expressions": []any{}}
	if rs == nil {
		out["allowed"], out["outcome"], out["status"] = true, "allowed", http.StatusOK
		out["message"] = "no rules are in force: every request is allowed"
		return out, nil
	}
	if rs.Service != req.Service {
		return nil, fmt.Errorf("the rules are for %s, the request is for %s", rs.Service, req.Service)
	}
	out["file"], out["source"] = rs.File, rs.Source
	d, tr := rs.Explain(req)
	out["allowed"], out["line"], out["message"] = d.Allow, d.Line, d.Message
	out["outcome"], out["status"] = Outcome(d, tr)
	out["allows"], out["expressions"] = tr.Allows, tr.Expressions()
	return out, nil
}

// plainValue decodes plain JSON into rules values: whole numbers become
// integers, other numbers floats; absent (nil) and null are nil.
func plainValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = numbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = numbers(x[k])
		}
	}
	return v
}

package guard

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/loupe-dev/loupe/internal/server"
)

// Name implements server.Service.
func (r *Rules) Name() string { return "rules" }

// Register implements server.Service: the endpoints that load rules, list
// them, report their coverage and try requests out (the playground); all
// admin endpoints, off under --strict-credentials (docs/admin-api.md).
func (r *Rules) Register(routes *server.Routes) {
	routes.Admin("PUT /emulator/v1/projects/{target}", r.putProject)
	routes.Admin("PUT /internal/setRules", r.setStorageRules)
	routes.Admin("GET /emulator/v1/projects/{target}", r.getProject)
	routes.Admin("POST /emulator/v1/projects/{target}", r.postProject)
	routes.Admin("GET /emulator/v1/rules", r.listSets)
}

// getProject serves GET /emulator/v1/projects/{p}:ruleCoverage and
// :ruleCoverage.html.
func (r *Rules) getProject(w http.ResponseWriter, req *http.Request) {
	target := req.PathValue("target")
	if project, ok := strings.CutSuffix(target, ":ruleCoverage.html"); ok && project != "" {
		r.coverage(w, req, project, true)
		return
	}
	if project, ok := strings.CutSuffix(target, ":ruleCoverage"); ok && project != "" {
		r.coverage(w, req, project, false)
		return
	}
	http.NotFound(w, req)
}

// listSets answers every rule set in force: {"rulesets": [{service,
// project, target, origin, file, source, loaded}]}.
func (r *Rules) listSets(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, s := range r.Sets() {
		out = append(out, map[string]any{"service": s.Service, "project": s.Project, "target": s.Target,
			"origin": s.Origin, "file": s.Ruleset.File, "source": s.Ruleset.Source, "loaded": s.Loaded})
	}
	for _, s := range r.DatabaseSets() {
		out = append(out, map[string]any{"service": "database", "target": s.Namespace,
			"origin": s.Origin, "file": s.Ruleset.File, "source": s.Ruleset.Source, "loaded": s.Loaded})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"rulesets": out})
}

// rulesFile is one member of a rules load's "rules.files".
type rulesFile struct {
	Name     *string `json:"name"`
	Content  *string `json:"content"`
	Resource string  `json:"resource"`
}

// rulesBody is the body both emulators take: {"rules":{"files":[…]}}.
type rulesBody struct {
	Rules *struct {
		Files []json.RawMessage `json:"files"`
	} `json:"rules"`
	// IgnoreErrors asks for a 200 answer listing compile errors as issues
	// (what firebase-tools sends when a watched file changes).
	IgnoreErrors bool `json:"ignore_errors"`
}

// maxRulesBody bounds a rules load.
const maxRulesBody = 4 << 20

// putProject serves PUT /emulator/v1/projects/{p}:securityRules: the rules
// of project p's Firestore databases (what rules-unit-testing and
// firebase-tools call). Other projects keep theirs.
func (r *Rules) putProject(w http.ResponseWriter, req *http.Request) {
	project, ok := strings.CutSuffix(req.PathValue("target"), ":securityRules")
	if !ok || project == "" {
		http.NotFound(w, req)
		return
	}
	var body rulesBody
	err := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxRulesBody)).Decode(&body)
	var f rulesFile
	if err == nil && body.Rules != nil && len(body.Rules.Files) > 0 {
		err = json.Unmarshal(body.Rules.Files[0], &f)
	}
	if err != nil || f.Content == nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, `body must be {"rules":{"files":[{"name":…,"content":…}]}}`))
		return
	}
	name := "firestore.rules" // rules-unit-testing sends no name
	if f.Name != nil && *f.Name != "" {
		name = *f.Name
	}
	if err := r.SetFirestore(project, name, *f.Content); err != nil {
		if body.IgnoreErrors {
			httpjson.Write(w, http.StatusOK, map[string]any{"issues": []any{issue(err, name)}})
			return
		}
		httpjson.Error(w, errs.New(errs.InvalidArgument, err.Error()))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// issue describes a compile error as firebase-tools reads it.
func issue(err error, name string) map[string]any {
	pos := map[string]any{"fileName": name}
	var pe *rules.ParseError
	if errors.As(err, &pe) {
		pos["line"], pos["column"] = pe.Line, pe.Col
		return map[string]any{"sourcePosition": pos, "description": pe.Msg, "severity": "ERROR"}
	}
	return map[string]any{"sourcePosition": pos, "description": err.Error(), "severity": "ERROR"}
}

// decodeFiles reads Storage's "rules.files"; each member needs name and
// content (and resource when needResource). A bad member gives the message
// firebase-tools answers.
func decodeFiles(raw []json.RawMessage, needResource bool) ([]rulesFile, string) {
	var out []rulesFile
	for _, m := range raw {
		var f rulesFile
		if err := json.Unmarshal(m, &f); err != nil || f.Name == nil || f.Content == nil || (needResource && f.Resource == "") {
			if needResource {
				return nil, "Each member of 'rules.files' array must contain 'name', 'content', and 'resource'"
			}
			return nil, "Each member of 'rules.files' array must contain 'name' and 'content'"
		}
		out = append(out, f)
	}
	return out, ""
}

// setStorageRules serves PUT /internal/setRules as firebase-tools' Storage
// emulator does: one file is the rules of every bucket; several files each
// name their bucket in "resource". The answer's messages are firebase-tools'.
func (r *Rules) setStorageRules(w http.ResponseWriter, req *http.Request) {
	var body rulesBody
	if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, maxRulesBody)).Decode(&body); err != nil || body.Rules == nil || len(body.Rules.Files) == 0 {
		httpjson.Write(w, http.StatusBadRequest, map[string]string{"message": "Request body must include 'rules.files' array"})
		return
	}
	files, bad := decodeFiles(body.Rules.Files, len(body.Rules.Files) > 1)
	if bad != "" {
		httpjson.Write(w, http.StatusBadRequest, map[string]string{"message": bad})
		return
	}
	load := make([]StorageFile, len(files))
	for i, f := range files {
		load[i] = StorageFile{Name: *f.Name, Content: *f.Content}
		if len(files) > 1 {
			load[i].Resource = f.Resource
		}
	}
	if err := r.ReplaceStorage(load); err != nil {
		r.logger.Error("storage rules not loaded; the rules in force stay", "err", err)
		httpjson.Write(w, http.StatusBadRequest, map[string]string{"message": "There was an error updating rules, see logs for more details"})
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "Rules updated successfully"})
}

package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loupe-dev/loupe/internal/database"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"golang.org/x/sync/semaphore"
)

// maxBody is the largest REST write accepted (production's limit is 256 MB
// with writeSizeLimit=unlimited).
const maxBody = 256 << 20

// keepAlive is how often an idle event stream sends keep-alive.
const keepAlive = 30 * time.Second

// restError answers err as the REST API does: {"error": message} with the
// status of its kind (401 for a denial, 412 for a failed condition).
func restError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	msg := err.Error()
	switch errs.KindOf(err) {
	case errs.InvalidArgument:
		status = http.StatusBadRequest
	case errs.PermissionDenied:
		status, msg = http.StatusUnauthorized, "Permission denied"
	case errs.Unauthenticated:
		status = http.StatusUnauthorized
	case errs.FailedPrecondition:
		status = http.StatusPreconditionFailed
	case errs.NotFound:
		status = http.StatusNotFound
	case errs.Unavailable:
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, jsonObject("error", msg), false)
}

func jsonObject(key, value string) []byte {
	b := append([]byte{'{'}, database.AppendString(nil, key)...)
	b = append(b, ':')
	b = database.AppendString(b, value)
	return append(b, '}')
}

func writeJSON(w http.ResponseWriter, status int, body []byte, pretty bool) {
	if pretty {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			body = buf.Bytes()
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte{'\n'})
}

// caller reads the credential of a REST request: ?auth= or ?access_token=,
// or the Authorization header.
func (s *Service) caller(r *http.Request) (identity.Principal, error) {
	q := r.URL.Query()
	header := r.Header.Get("Authorization")
	for _, k := range []string{"auth", "access_token"} {
		if tok := q.Get(k); tok != "" {
			header = "Bearer " + tok
		}
	}
	p, err := s.authenticate(header, s.namespace(r))
	if err != nil {
		return p, errs.New(errs.Unauthenticated, "Could not parse auth token.")
	}
	return p, nil
}

// authenticate reads a credential for namespace ns. A namespace belongs to
// loupe's project, and "{p}-default-rtdb" or a namespace named as a project
// (as rules-unit-testing names them) to project p too: a token of either
// is of the request's project (of any other, identity's rule applies).
func (s *Service) authenticate(header, ns string) (identity.Principal, error) {
	return s.env.Credentials.Authenticate(header, s.env.ProjectID, strings.TrimSuffix(ns, "-default-rtdb"))
}

// restPath is the database path of a REST URL: its path without ".json".
func restPath(r *http.Request) (database.Path, error) {
	p := strings.TrimSuffix(r.URL.Path, ".json")
	return database.ParsePath(p)
}

// serveREST answers GET, PUT, POST, PATCH and DELETE of /path.json, and
// event streams (GET with Accept: text/event-stream).
func (s *Service) serveREST(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, ".json") && r.URL.Path != "/" {
		writeJSON(w, http.StatusNotFound, jsonObject("error", "Not found: paths end in .json"), false)
		return
	}
	method := r.Method
	if method == http.MethodPost {
		if o := r.Header.Get("X-HTTP-Method-Override"); o != "" {
			method = strings.ToUpper(o)
		} else if o := r.URL.Query().Get("x-http-method-override"); o != "" {
			method = strings.ToUpper(o)
		}
	}
	ns := s.namespace(r)
	if err := database.CheckNamespace(ns); err != nil {
		restError(w, err)
		return
	}
	p, err := restPath(r)
	if err != nil {
		restError(w, err)
		return
	}
	caller, err := s.caller(r)
	if err != nil {
		restError(w, err)
		return
	}
	q := r.URL.Query()
	pretty := q.Get("print") == "pretty"
	silent := q.Get("print") == "silent"
	switch method {
	case http.MethodGet, http.MethodHead:
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			s.stream(w, r, ns, p, caller)
			return
		}
		s.get(w, r, ns, p, caller, pretty, silent)
	case http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodDelete:
		s.write(w, r, method, ns, p, caller, pretty, silent)
	default:
		w.Header().Set("Allow", "GET, PUT, POST, PATCH, DELETE")
		writeJSON(w, http.StatusMethodNotAllowed, jsonObject("error", "Method not allowed"), false)
	}
}

// restQuery reads orderBy, startAt, startAfter, endAt, endBefore, equalTo,
// limitToFirst and limitToLast.
func restQuery(q map[string][]string) (database.Query, bool, error) {
	get := func(k string) (string, bool) {
		v, ok := q[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	var out database.Query
	orderBy, hasOrder := get("orderBy")
	others := false
	for _, k := range []string{"startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast"} {
		if _, ok := get(k); ok {
			others = true
		}
	}
	if !hasOrder {
		if others {
			return out, false, errs.New(errs.InvalidArgument, "orderBy must be defined when other query parameters are defined")
		}
		return out, false, nil
	}
	var name string
	if err := json.Unmarshal([]byte(orderBy), &name); err != nil {
		return out, false, errs.New(errs.InvalidArgument, "orderBy must be a valid JSON encoded path")
	}
	ix, err := database.ParseIndex(name)
	if err != nil {
		return out, false, err
	}
	out.Index = ix
	bound := func(k string, inclusive bool, defaultKey string) (*database.Bound, error) {
		raw, ok := get(k)
		if !ok {
			return nil, nil
		}
		v, key, hasKey, err := parseBound(raw)
		if err != nil {
			return nil, errs.Errorf(errs.InvalidArgument, "%s must be a valid JSON value", k)
		}
		if ix.Kind == database.ByKey {
			if v.Kind() != database.String {
				return nil, errs.Errorf(errs.InvalidArgument, "%s must be a string when ordering by key", k)
			}
			if hasKey {
				return nil, errs.Errorf(errs.InvalidArgument, "%s takes no key name when ordering by key", k)
			}
		}
		b := &database.Bound{Value: v, Key: key, HasKey: hasKey, Inclusive: inclusive}
		if !hasKey && !inclusive && ix.Kind != database.ByKey {
			b.Key, b.HasKey = defaultKey, true
		}
		return b, nil
	}
	if out.Start, err = bound("startAt", true, ""); err != nil {
		return out, false, err
	}
	if out.Start == nil {
		if out.Start, err = bound("startAfter", false, "[MAX_NAME]"); err != nil {
			return out, false, err
		}
	}
	if out.End, err = bound("endAt", true, ""); err != nil {
		return out, false, err
	}
	if out.End == nil {
		if out.End, err = bound("endBefore", false, "[MIN_NAME]"); err != nil {
			return out, false, err
		}
	}
	if eq, err := bound("equalTo", true, ""); err != nil {
		return out, false, err
	} else if eq != nil {
		if out.Start != nil || out.End != nil {
			return out, false, errs.New(errs.InvalidArgument, "equalTo cannot be combined with startAt, startAfter, endAt or endBefore")
		}
		out.Start, out.End = eq, eq
	}
	for _, k := range []string{"limitToFirst", "limitToLast"} {
		raw, ok := get(k)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			return out, false, errs.Errorf(errs.InvalidArgument, "%s must be a positive integer", k)
		}
		if out.HasLimit {
			return out, false, errs.New(errs.InvalidArgument, "limitToFirst and limitToLast cannot both be set")
		}
		out.Limit, out.HasLimit, out.FromRight = n, true, k == "limitToLast"
	}
	return out, true, nil
}

// parseBound reads a bound's JSON value and the optional key name after a
// comma: 25 or "b","key".
func parseBound(raw string) (v *database.Node, key string, hasKey bool, err error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var x any
	if err = dec.Decode(&x); err != nil {
		return
	}
	if _, isMap := x.(map[string]any); isMap {
		return nil, "", false, errors.New("a bound must be a leaf")
	}
	if _, isList := x.([]any); isList {
		return nil, "", false, errors.New("a bound must be a leaf")
	}
	if v, err = database.FromValue(x, nil, nil); err != nil {
		return
	}
	rest := strings.TrimSpace(raw[dec.InputOffset():])
	if rest == "" {
		return v, "", false, nil
	}
	rest, ok := strings.CutPrefix(rest, ",")
	if !ok {
		return nil, "", false, errors.New("trailing data")
	}
	if err = json.Unmarshal([]byte(rest), &key); err != nil {
		return
	}
	return v, key, true, nil
}

// checkIndex warns of (or, strictly, refuses) a query by an unindexed
// child or value.
func (s *Service) checkIndex(ns string, p database.Path, q database.Query) error {
	if s.Engine.Indexed(ns, p, q.Index) {
		return nil
	}
	spec := q.Index.String()
	if s.StrictIndexes {
		return errs.Errorf(errs.InvalidArgument, "Index not defined, add \".indexOn\": \"%s\", for path \"%s\", to the rules", spec, p)
	}
	s.env.Logger.Warn(fmt.Sprintf("Using an unspecified index. Your data will be downloaded and filtered on the client. Consider adding \".indexOn\": \"%s\" at %s to your security rules for better performance.", spec, p),
		"namespace", ns)
	return nil
}

func etag(n *database.Node) string {
	if n.IsEmpty() {
		return "null_etag"
	}
	return n.Hash()
}

func (s *Service) get(w http.ResponseWriter, r *http.Request, ns string, p database.Path, caller identity.Principal, pretty, silent bool) {
	params := r.URL.Query()
	q, filtered, err := restQuery(params)
	if err != nil {
		restError(w, err)
		return
	}
	shallow := params.Get("shallow") == "true"
	if shallow && filtered {
		restError(w, errs.New(errs.InvalidArgument, "Mixing shallow with other query parameters is not allowed"))
		return
	}
	if filtered {
		if err := s.checkIndex(ns, p, q); err != nil {
			restError(w, err)
			return
		}
	}
	n, err := s.Engine.Get(r.Context(), ns, p, q, caller)
	if err != nil {
		restError(w, err)
		return
	}
	tag := etag(n)
	if strings.EqualFold(r.Header.Get("X-Firebase-ETag"), "true") {
		w.Header().Set("ETag", tag)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == tag {
		w.Header().Set("ETag", tag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if silent {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var body []byte
	switch {
	case shallow:
		body = shallowJSON(n)
	case params.Get("format") == "export":
		body = n.ExportJSON()
	default:
		body = n.JSON()
	}
	writeJSON(w, http.StatusOK, body, pretty)
}

// shallowJSON is n with each object child as true.
func shallowJSON(n *database.Node) []byte {
	if n.Kind() != database.Object {
		return n.JSON()
	}
	b := []byte{'{'}
	first := true
	n.Each(func(k string, c *database.Node) bool {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = database.AppendString(b, k)
		b = append(b, ':')
		if c.Kind() == database.Object {
			b = append(b, "true"...)
		} else {
			b = c.AppendJSON(b, false)
		}
		return true
	})
	return append(b, '}')
}

// Large write bodies share a budget: a body decodes to many times its size
// (a 21 MB object took about 500 MB), so at most decodeBudget bytes of
// bodies of largeBody or more (as their Content-Length says; a body without
// one counts as the largest) are read and decoded at once, and the others
// wait their turn. Smaller bodies, every app's writes, never wait.
const (
	largeBody    = 1 << 20
	decodeBudget = 64 << 20
)

// reserveBody waits until r's body may be read and decoded, and returns
// the func that gives its share of the budget back; an error when the
// caller left before its turn.
func (s *Service) reserveBody(r *http.Request) (release func(), err error) {
	n := r.ContentLength
	if n < 0 || n > decodeBudget {
		n = decodeBudget
	}
	if n < largeBody {
		return func() {}, nil
	}
	s.bodiesOnce.Do(func() { s.bodies = semaphore.NewWeighted(decodeBudget) })
	if err := s.bodies.Acquire(r.Context(), n); err != nil {
		return nil, errs.New(errs.Unavailable, "The request was cancelled while waiting to be read.")
	}
	return func() { s.bodies.Release(n) }, nil
}

// decodeBody reads a JSON request body into decoded values.
func decodeBody(r *http.Request) (any, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errs.New(errs.InvalidArgument, "Invalid data; couldn't read the request body.")
	}
	if len(data) > maxBody {
		return nil, errs.New(errs.InvalidArgument, "Data to write exceeds the maximum size that can be modified with a single request.")
	}
	if !utf8.Valid(data) {
		return nil, errs.New(errs.InvalidArgument, "Invalid data; couldn't parse JSON object, array, or value.")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errs.New(errs.InvalidArgument, "Invalid data; couldn't parse JSON object, array, or value.")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errs.New(errs.InvalidArgument, "Invalid data; couldn't parse JSON object, array, or value.")
	}
	return v, nil
}

func (s *Service) write(w http.ResponseWriter, r *http.Request, method, ns string, p database.Path, caller identity.Principal, pretty, silent bool) {
	wr := database.Write{NS: ns, Path: p, Op: database.OpSet, Caller: caller}
	var pushed string
	switch method {
	case http.MethodPost:
		pushed = database.PushID(time.Now())
		wr.Path = p.Child(pushed)
	case http.MethodPatch:
		wr.Op = database.OpUpdate
	}
	// A write the rules deny whatever its data is refused before its body
	// is read.
	if err := s.Engine.MayWrite(r.Context(), ns, wr.Path, wr.Op, caller); err != nil {
		if method != http.MethodDelete {
			// The unread body is not waited for: the connection closes.
			w.Header().Set("Connection", "close")
		}
		restError(w, err)
		return
	}
	if method != http.MethodDelete {
		release, err := s.reserveBody(r)
		if err != nil {
			restError(w, err)
			return
		}
		defer release()
		if wr.Value, err = decodeBody(r); err != nil {
			restError(w, err)
			return
		}
	}
	if r.URL.Query().Get("disableTriggers") == "true" && caller.Owner {
		wr.Import = true
	}
	if m := r.Header.Get("If-Match"); m != "" {
		if m == "null_etag" {
			m = ""
		}
		wr.IfHash = &m
	}
	if _, ok := wr.Value.(map[string]any); !ok && wr.Op == database.OpUpdate {
		restError(w, errs.New(errs.InvalidArgument, "Invalid data; couldn't parse JSON object. A PATCH body must be an object."))
		return
	}
	c, err := s.Engine.Write(r.Context(), wr)
	if err != nil {
		var stale *database.StaleError
		if errors.As(err, &stale) {
			w.Header().Set("ETag", etag(stale.Data))
			writeJSON(w, http.StatusPreconditionFailed, stale.Data.JSON(), pretty)
			return
		}
		restError(w, err)
		return
	}
	if wr.IfHash != nil || strings.EqualFold(r.Header.Get("X-Firebase-ETag"), "true") {
		w.Header().Set("ETag", etag(c.After.At(wr.Path)))
	}
	if silent {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var body []byte
	switch method {
	case http.MethodPost:
		body = jsonObject("name", pushed)
	case http.MethodPatch:
		kids := make([]database.Child, len(c.Changes))
		for i, ch := range c.Changes {
			kids[i] = database.Child{Path: ch.Path[len(p):], Value: ch.After}
		}
		body = mergeJSON(kids, false)
	case http.MethodDelete:
		body = []byte("null")
	default:
		body = c.After.At(wr.Path).JSON()
	}
	writeJSON(w, http.StatusOK, body, pretty)
}

// mergeJSON is a merge's children as one object keyed by relative path.
func mergeJSON(kids []database.Child, export bool) []byte {
	b := []byte{'{'}
	for i, k := range kids {
		if i > 0 {
			b = append(b, ',')
		}
		b = database.AppendString(b, strings.Join(k.Path, "/"))
		b = append(b, ':')
		b = k.Value.AppendJSON(b, export)
	}
	return append(b, '}')
}

// stream serves a REST event stream: put and patch events as the data
// changes, keep-alive while it does not, auth_revoked when the credential
// expires, cancel when the read is no longer allowed.
func (s *Service) stream(w http.ResponseWriter, r *http.Request, ns string, p database.Path, caller identity.Principal) {
	q, filtered, err := restQuery(r.URL.Query())
	if err != nil {
		restError(w, err)
		return
	}
	if filtered {
		if err := s.checkIndex(ns, p, q); err != nil {
			restError(w, err)
			return
		}
	}
	out := newOutbox(&s.behind)
	cancel, err := s.Engine.Listen(r.Context(), ns, p, q, caller, func(u database.Update) {
		out.add(u.Encoded("sse\x00"+p.String(), func() []byte { return sseEvent(p, u) }))
	})
	if err != nil {
		restError(w, err)
		return
	}
	defer cancel()
	st := &stream{ns: ns, path: p, query: q, caller: caller, revoked: make(chan struct{})}
	s.mu.Lock()
	s.streams[st] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, st)
		s.mu.Unlock()
	}()
	rc := http.NewResponseController(w)
	out.mu.Lock()
	out.drop = func() { _ = rc.SetWriteDeadline(time.Now()) } // a stuck write fails, and the stream ends
	out.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	var expired <-chan time.Time
	if exp, ok := caller.Claims["exp"].(float64); ok && !caller.Owner {
		t := time.NewTimer(time.Until(time.Unix(int64(exp), 0)))
		defer t.Stop()
		expired = t.C
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	msgs := make(chan [][]byte)
	go func() {
		defer close(msgs)
		for {
			batch, ok := out.take(r.Context().Done())
			if !ok {
				return
			}
			select {
			case msgs <- batch:
			case <-r.Context().Done():
				return
			}
		}
	}()
	defer out.close()
	for {
		select {
		case batch, ok := <-msgs:
			if !ok {
				return
			}
			err := writeAll(w, batch)
			out.sent()
			if err != nil {
				return
			}
			tick.Reset(keepAlive)
		case <-tick.C:
			if _, err := w.Write([]byte("event: keep-alive\ndata: null\n\n")); err != nil {
				return
			}
		case <-st.revoked:
			_, _ = w.Write([]byte("event: cancel\ndata: \"Permission denied\"\n\n"))
			_ = rc.Flush()
			return
		case <-expired:
			_, _ = w.Write([]byte("event: auth_revoked\ndata: \"credential is no longer valid\"\n\n"))
			_ = rc.Flush()
			return
		case <-r.Context().Done():
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

func writeAll(w io.Writer, msgs [][]byte) error {
	for _, m := range msgs {
		if _, err := w.Write(m); err != nil {
			return err
		}
	}
	return nil
}

// stream is an open REST event stream, as RulesChanged judges it again.
type stream struct {
	ns      string
	path    database.Path
	query   database.Query
	caller  identity.Principal
	once    sync.Once
	revoked chan struct{} // closed when the rules no longer allow it
}

func (st *stream) revoke() { st.once.Do(func() { close(st.revoked) }) }

// sseEvent is an update as a put or patch event, its path relative to the
// streamed location.
func sseEvent(base database.Path, u database.Update) []byte {
	rel := database.Path(u.Path[len(base):]).String()
	b := []byte("event: put\ndata: {\"path\":")
	if u.Merge {
		b = []byte("event: patch\ndata: {\"path\":")
	}
	b = database.AppendString(b, rel)
	b = append(b, `,"data":`...)
	if u.Merge {
		b = append(b, mergeJSON(u.Children, false)...)
	} else {
		b = u.Value.AppendJSON(b, false)
	}
	return append(b, "}\n\n"...)
}

// putRules installs a namespace's rules, as firebase-tools and
// rules-unit-testing do.
func (s *Service) putRules(w http.ResponseWriter, r *http.Request) {
	if s.Rules == nil {
		writeJSON(w, http.StatusNotFound, jsonObject("error", "rules are not served"), false)
		return
	}
	caller, err := s.caller(r)
	if err != nil || !caller.Owner {
		writeJSON(w, http.StatusUnauthorized, jsonObject("error", "Unauthorized request."), false)
		return
	}
	src, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		restError(w, errs.New(errs.InvalidArgument, "could not read the rules"))
		return
	}
	if err := s.Rules.SetDatabaseRules(s.namespace(r), string(src)); err != nil {
		writeJSON(w, http.StatusBadRequest, jsonObject("error", err.Error()), false)
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`), false)
}

// getRules answers a namespace's rules source.
func (s *Service) getRules(w http.ResponseWriter, r *http.Request) {
	if s.Rules == nil {
		writeJSON(w, http.StatusNotFound, jsonObject("error", "rules are not served"), false)
		return
	}
	src, _ := s.Rules.DatabaseRules(s.namespace(r))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write([]byte(src))
}

// coverage answers how a namespace's rules were evaluated (the official
// emulator's /.inspect/coverage?ns=): each rule with its line and how
// often it held, failed and errored.
func (s *Service) coverage(w http.ResponseWriter, r *http.Request) {
	if s.Rules == nil {
		writeJSON(w, http.StatusNotFound, jsonObject("error", "rules are not served"), false)
		return
	}
	cov, ok := s.Rules.DatabaseCoverage(s.namespace(r))
	if !ok {
		writeJSON(w, http.StatusNotFound, jsonObject("error", "no rules are in force for this namespace"), false)
		return
	}
	data, _ := json.Marshal(map[string]any{"rules": cov})
	writeJSON(w, http.StatusOK, data, r.URL.Query().Get("print") == "pretty")
}

// Package guard owns the security rules loupe enforces and judges requests
// with them. Rules (the owner) holds the rule sets per project and per
// Firestore database or Storage bucket: loaded from the files firebase.json
// names and reloaded as they change, or through the emulator endpoints it
// serves (PUT /emulator/v1/projects/{p}:securityRules, PUT /internal/setRules).
// Its authorizers turn Firestore and Storage requests into rules requests
// (internal/rules), read documents for get()/exists(), and turn denials into
// the services' permission errors; the services know only their own
// Authorizer interfaces.
package guard

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/rules"
	"github.com/loupe-dev/loupe/internal/storage"
)

// Load reads and compiles a rules file; errors name file:line:col.
func Load(path string) (*rules.Ruleset, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	return rules.Compile(string(src), path)
}

func auth(p identity.Principal) *rules.Auth {
	if !p.Authenticated() {
		return nil
	}
	return rules.NewAuth(p.UID, p.Claims)
}

// Firestore is the rules authorizer of the Firestore engine.
type Firestore struct {
	Rules  *Rules
	Engine *firestore.Engine
}

// FirestoreAuthorizer returns the authorizer to install in engine.
func (r *Rules) FirestoreAuthorizer(engine *firestore.Engine) *Firestore {
	r.mu.Lock()
	r.firestore = engine
	r.mu.Unlock()
	return &Firestore{Rules: r, Engine: engine}
}

// StorageAuthorizer returns the authorizer to install in the storage service;
// firestore, when non-nil, answers firestore.get() and firestore.exists() from
// project's (default) database.
func (r *Rules) StorageAuthorizer(firestore *firestore.Engine, project string) *Storage {
	return &Storage{Rules: r, Firestore: firestore, ProjectDB: "projects/" + project + "/databases/" + config.DefaultDatabase}
}

func segments(n firestore.Name) []string {
	return append([]string{"databases", firestore.SplitDatabase(n.Database).ID, "documents"}, n.Path...)
}

// rulesPath is a document's path as rules see it: /databases/{db}/documents/….
func rulesPath(n firestore.Name) string { return rules.Path(segments(n)).String() }

// Authorize implements firestore.Authorizer. Every decision goes to the
// request log.
func (g *Firestore) Authorize(_ context.Context, a firestore.Access) error {
	db := firestore.SplitDatabase(a.Name.Database)
	e := requestlog.Entry{Service: "firestore", Method: a.Method, Path: strings.Join(a.Name.Path, "/"), Project: db.Project, Database: db.ID,
		Request: logDoc(a.Incoming), Resource: logDoc(a.Existing)}
	if a.Method == firestore.MethodList {
		e.Request = listQuery{a.Query}
	}
	d := g.Rules.decide(rules.Firestore, db.Project, db.ID, a.Caller, e, func() *rules.Request { return g.request(a) })
	if d.Allow {
		return nil
	}
	return errs.New(errs.PermissionDenied, d.Message)
}

// request is the rules request of an access.
func (g *Firestore) request(a firestore.Access) *rules.Request {
	req := &rules.Request{
		Service: rules.Firestore, Method: rules.Method(a.Method), Path: rulesPath(a.Name),
		Auth: auth(a.Caller), Time: a.Time, Batch: a.Batch,
		Documents: docs{engine: g.Engine, database: a.Name.Database, before: a.Before, after: a.After},
	}
	if a.Existing != nil {
		req.Resource = fields(a.Existing)
	}
	if a.Incoming != nil {
		req.RequestResource = fields(a.Incoming)
	}
	if a.Method == firestore.MethodList {
		req.Query = query(a.Query)
		if from := a.Query.GetFrom(); len(from) == 1 && from[0].GetAllDescendants() {
			parent := a.Name
			parent.Path = parent.Path[:len(parent.Path)-1]
			req.Path, req.Query.CollectionGroup = rulesPath(parent), from[0].GetCollectionId()
		}
	}
	return req
}

var operators = map[pb.StructuredQuery_FieldFilter_Operator]string{
	pb.StructuredQuery_FieldFilter_EQUAL: "==", pb.StructuredQuery_FieldFilter_NOT_EQUAL: "!=",
	pb.StructuredQuery_FieldFilter_LESS_THAN: "<", pb.StructuredQuery_FieldFilter_LESS_THAN_OR_EQUAL: "<=",
	pb.StructuredQuery_FieldFilter_GREATER_THAN: ">", pb.StructuredQuery_FieldFilter_GREATER_THAN_OR_EQUAL: ">=",
	pb.StructuredQuery_FieldFilter_IN: "in", pb.StructuredQuery_FieldFilter_NOT_IN: "not-in",
	pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS: "array-contains", pb.StructuredQuery_FieldFilter_ARRAY_CONTAINS_ANY: "array-contains-any",
}

// query describes a list request's constraints: the filters joined by AND
// (a disjunction proves nothing, so its fields stay unknown), limit, offset, order.
func query(q *pb.StructuredQuery) *rules.Query {
	out := &rules.Query{}
	if l := q.GetLimit(); l != nil {
		n := int64(l.GetValue())
		out.Limit = &n
	}
	if q.GetOffset() > 0 {
		n := int64(q.GetOffset())
		out.Offset = &n
	}
	for _, o := range q.GetOrderBy() {
		out.OrderBy = append(out.OrderBy, rules.Order{Field: o.GetField().GetFieldPath(), Descending: o.GetDirection() == pb.StructuredQuery_DESCENDING})
	}
	var walk func(*pb.StructuredQuery_Filter)
	walk = func(f *pb.StructuredQuery_Filter) {
		switch x := f.GetFilterType().(type) {
		case *pb.StructuredQuery_Filter_CompositeFilter:
			if x.CompositeFilter.GetOp() == pb.StructuredQuery_CompositeFilter_AND {
				for _, sub := range x.CompositeFilter.GetFilters() {
					walk(sub)
				}
			}
		case *pb.StructuredQuery_Filter_FieldFilter:
			if op, ok := operators[x.FieldFilter.GetOp()]; ok {
				out.Filters = append(out.Filters, rules.Filter{Field: x.FieldFilter.GetField().GetFieldPath(), Op: op, Value: value(x.FieldFilter.GetValue())})
			}
		case *pb.StructuredQuery_Filter_UnaryFilter:
			if x.UnaryFilter.GetOp() == pb.StructuredQuery_UnaryFilter_IS_NULL {
				out.Filters = append(out.Filters, rules.Filter{Field: x.UnaryFilter.GetField().GetFieldPath(), Op: "==", Value: nil})
			}
		}
	}
	walk(q.GetWhere())
	return out
}

func fields(d *pb.Document) map[string]any {
	out := map[string]any{}
	for k, v := range d.Fields {
		out[k] = value(v)
	}
	return out
}

// value converts a Firestore value to a rules value.
func value(v *pb.Value) any {
	switch x := v.GetValueType().(type) {
	case *pb.Value_BooleanValue:
		return x.BooleanValue
	case *pb.Value_IntegerValue:
		return x.IntegerValue
	case *pb.Value_DoubleValue:
		return x.DoubleValue
	case *pb.Value_StringValue:
		return x.StringValue
	case *pb.Value_BytesValue:
		return x.BytesValue
	case *pb.Value_TimestampValue:
		return x.TimestampValue.AsTime()
	case *pb.Value_ReferenceValue:
		if n, err := firestore.ParseName(x.ReferenceValue); err == nil {
			return rules.Path(segments(n))
		}
		return x.ReferenceValue
	case *pb.Value_GeoPointValue:
		return rules.LatLng{Lat: x.GeoPointValue.GetLatitude(), Lng: x.GeoPointValue.GetLongitude()}
	case *pb.Value_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	case *pb.Value_MapValue:
		out := map[string]any{}
		for k, e := range x.MapValue.GetFields() {
			out[k] = value(e)
		}
		return out
	}
	return nil
}

// docs reads documents for get() and getAfter(): through the request's
// views when it has them (a commit holds the engine's lock), else the engine.
type docs struct {
	engine   *firestore.Engine
	database string
	before   func(name string) *pb.Document
	after    func(name string) *pb.Document
}

func (d docs) name(path string) (string, bool) {
	_, rest, ok := strings.Cut(strings.TrimPrefix(path, "/databases/"), "/documents/")
	if !ok {
		return "", false
	}
	return d.database + "/documents/" + rest, true
}

func (d docs) Get(path string) (map[string]any, bool, error) {
	name, ok := d.name(path)
	if !ok {
		return nil, false, fmt.Errorf("invalid document path %s", path)
	}
	var doc *pb.Document
	if d.before != nil {
		doc = d.before(name)
	} else if got, err := d.engine.Get(context.Background(), identity.Owner, name); err == nil {
		doc = got
	}
	if doc == nil {
		return nil, false, nil
	}
	return fields(doc), true, nil
}

func (d docs) GetAfter(path string) (map[string]any, bool, error) {
	if d.after == nil {
		return d.Get(path)
	}
	name, ok := d.name(path)
	if !ok {
		return nil, false, fmt.Errorf("invalid document path %s", path)
	}
	doc := d.after(name)
	if doc == nil {
		return nil, false, nil
	}
	return fields(doc), true, nil
}

// Storage is the rules authorizer of the storage service. Firestore, when
// set, answers firestore.get() and firestore.exists().
type Storage struct {
	Rules     *Rules
	Firestore *firestore.Engine
	ProjectDB string // projects/{p}/databases/(default), for firestore.get()
}

func metadata(o *storage.Object) map[string]any {
	if o == nil {
		return nil
	}
	custom := map[string]any{}
	for k, v := range o.Metadata {
		if k != "firebaseStorageDownloadTokens" {
			custom[k] = v
		}
	}
	return map[string]any{
		"name": o.Name, "bucket": o.Bucket, "size": o.Size, "contentType": o.ContentType,
		"metadata": custom, "generation": o.Generation, "metageneration": o.Metageneration,
		"timeCreated": o.Created, "updated": o.Updated, "md5Hash": base64.StdEncoding.EncodeToString(o.MD5),
		"cacheControl": o.CacheControl, "contentDisposition": o.ContentDisposition,
		"contentEncoding": o.ContentEncoding, "contentLanguage": o.ContentLanguage,
	}
}

// Authorize implements storage.Authorizer. Every decision goes to the
// request log.
func (g *Storage) Authorize(_ context.Context, a storage.Access) error {
	name := a.Name
	if a.Method == "list" {
		name = strings.TrimSuffix(name, "/")
	}
	req := &rules.Request{Service: rules.Storage, Method: rules.Method(a.Method), Path: "/b/" + a.Bucket + "/o/" + name,
		Auth: auth(a.Caller), Time: time.Now().UTC(), Resource: metadata(a.Existing), RequestResource: metadata(a.Incoming)}
	if g.Firestore != nil {
		req.Documents = docs{engine: g.Firestore, database: g.ProjectDB}
	}
	e := requestlog.Entry{Service: "storage", Method: a.Method, Path: a.Name, Bucket: a.Bucket}
	if req.RequestResource != nil {
		e.Request = TypedFields(req.RequestResource)
	}
	if req.Resource != nil {
		e.Resource = TypedFields(req.Resource)
	}
	d := g.Rules.decide(rules.Storage, "", a.Bucket, a.Caller, e, func() *rules.Request { return req })
	if !d.Allow {
		return fmt.Errorf("%s", d.Message)
	}
	return nil
}

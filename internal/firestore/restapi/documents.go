package restapi

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The document resource methods of the REST mapping: GET a collection
// (ListDocuments), POST to a collection (CreateDocument), PATCH
// (UpdateDocument) and DELETE (DeleteDocument) a document. Options arrive as
// query parameters: mask.fieldPaths, updateMask.fieldPaths,
// currentDocument.exists, currentDocument.updateTime, documentId, pageSize,
// pageToken, showMissing, readTime, and transaction (a GET of a document).

// documentParameters are the query parameters the document methods read.
var documentParameters = []string{"mask.fieldPaths", "updateMask.fieldPaths", "currentDocument.exists",
	"currentDocument.updateTime", "documentId", "pageSize", "pageToken", "showMissing", "readTime", "transaction"}

// resource is a request's target below documents/: a document, or a
// collection (an odd number of segments).
type resource struct {
	db, name   string // name is the full resource name
	collection bool
	parent, id string // for a collection: its parent and collection id
}

func resourceOf(r *http.Request) resource {
	db := "projects/" + r.PathValue("project") + "/databases/" + r.PathValue("database")
	// POST's route matches from databases/{database}/, the others from documents/.
	rest := strings.Trim(strings.TrimPrefix(r.PathValue("rest"), "documents/"), "/")
	res := resource{db: db, name: db + "/documents/" + rest}
	if segments := strings.Split(rest, "/"); len(segments)%2 == 1 {
		res.collection = true
		res.id = segments[len(segments)-1]
		res.parent = strings.TrimSuffix(db+"/documents/"+strings.Join(segments[:len(segments)-1], "/"), "/")
	}
	return res
}

func fieldMask(q url.Values, key string) *pb.DocumentMask {
	paths, ok := q[key+".fieldPaths"]
	if !ok {
		return nil
	}
	return &pb.DocumentMask{FieldPaths: paths}
}

func precondition(q url.Values) (*pb.Precondition, error) {
	if v := q.Get("currentDocument.exists"); v != "" {
		exists, err := strconv.ParseBool(v)
		if err != nil {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("Invalid value at 'current_document.exists' (TYPE_BOOL), %q", v))
		}
		return &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: exists}}, nil
	}
	if v := q.Get("currentDocument.updateTime"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, errs.New(errs.InvalidArgument, "Invalid value for currentDocument.updateTime: "+v)
		}
		return &pb.Precondition{ConditionType: &pb.Precondition_UpdateTime{UpdateTime: timestamppb.New(t)}}, nil
	}
	return nil, nil
}

// consistency is the state a read's query parameters select: readTime
// (RFC 3339) or transaction (base64, as Google's front end binds bytes).
func consistency(q url.Values) (firestore.Consistency, error) {
	var readTime *timestamppb.Timestamp
	if v := q.Get("readTime"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return firestore.Consistency{}, errs.New(errs.InvalidArgument, "Invalid value for readTime: "+v)
		}
		readTime = timestamppb.New(t)
	}
	var txn []byte
	if v := q.Get("transaction"); v != "" {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			if b, err = base64.URLEncoding.DecodeString(v); err != nil {
				return firestore.Consistency{}, errs.New(errs.InvalidArgument, fmt.Sprintf("Invalid value at 'transaction' (TYPE_BYTES), %q", v))
			}
		}
		txn = b
	}
	if txn != nil && readTime != nil {
		return firestore.Consistency{}, errs.New(errs.InvalidArgument, "Only one of transaction and readTime may be set.")
	}
	return firestore.ConsistencyOf(txn, readTime), nil
}

// list serves GET on a collection.
func (h *Handler) list(w http.ResponseWriter, r *http.Request, who identity.Principal, res resource) {
	q := r.URL.Query()
	size := 0
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			// Google's front end, which parses query parameters into the
			// request message, in its words.
			httpjson.Error(w, errs.New(errs.InvalidArgument, fmt.Sprintf("Invalid value at 'page_size' (TYPE_INT32), %q", v)))
			return
		}
		if n < 0 {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "Invalid value for pageSize: "+v))
			return
		}
		size = int(n)
	}
	c, err := consistency(q)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	docs, next, err := h.engine.ListDocuments(r.Context(), who, res.parent, res.id, size, q.Get("pageToken"), q.Get("showMissing") == "true", c)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	mask := fieldMask(q, "mask")
	for i, d := range docs {
		docs[i] = firestore.Mask(d, mask)
	}
	writeJSON(w, &pb.ListDocumentsResponse{Documents: docs, NextPageToken: next})
}

// write serves POST to a collection (create), PATCH and DELETE on a document.
func (h *Handler) write(w http.ResponseWriter, r *http.Request) {
	who, err := h.creds.Authenticate(r.Header.Get("Authorization"), r.PathValue("project"))
	if err != nil {
		httpjson.Error(w, errs.New(errs.Unauthenticated, "Invalid authorization token."))
		return
	}
	if err := httpjson.CheckParameters(r.URL.Query(), documentParameters...); err != nil {
		httpjson.Error(w, err)
		return
	}
	res, q := resourceOf(r), r.URL.Query()
	if res.collection != (r.Method == http.MethodPost) {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "Invalid resource for "+r.Method+": "+res.name))
		return
	}
	cond, err := precondition(q)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	write := &pb.Write{CurrentDocument: cond}
	name := res.name
	if r.Method == http.MethodDelete {
		write.Operation = &pb.Write_Delete{Delete: name}
	} else {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "Request payload size exceeds the limit: 16777216 bytes."))
			return
		}
		doc := &pb.Document{}
		if err := decode(body, doc); err != nil {
			httpjson.Error(w, err)
			return
		}
		if r.Method == http.MethodPost {
			id := q.Get("documentId")
			if id == "" {
				id = firestore.NewID()
			}
			if strings.Contains(id, "/") {
				// An id is one segment: "a/b" would name another document.
				httpjson.Error(w, errs.New(errs.InvalidArgument, fmt.Sprintf("Resource id \"%s\" is invalid because it contains \"/\".", id)))
				return
			}
			name = res.parent + "/" + res.id + "/" + id
			write.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}
		}
		write.Operation = &pb.Write_Update{Update: &pb.Document{Name: name, Fields: doc.GetFields()}}
		write.UpdateMask = fieldMask(q, "updateMask")
	}
	if _, err := h.engine.Commit(r.Context(), who, res.db, []*pb.Write{write}, nil); err != nil {
		httpjson.Error(w, err)
		return
	}
	if r.Method == http.MethodDelete {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, "{}")
		return
	}
	doc, err := h.engine.Get(r.Context(), identity.Owner, name)
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	writeJSON(w, firestore.Mask(doc, fieldMask(q, "mask")))
}

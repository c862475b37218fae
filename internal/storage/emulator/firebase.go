package emulator

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
)

// The Firebase REST API (/v0), as the JS SDK and the official emulator
// speak it. Callers are authenticated by their Authorization header and
// judged by the engine's rules.

func (s *Service) registerFirebase(r *server.Routes) {
	// As the official emulator: the object's name in the path or in ?name=,
	// uploads by POST or PUT, PUT with X-HTTP-Method-Override: PATCH a
	// metadata update, POST with ?create_token or ?delete_token a token change.
	for _, p := range []string{"/v0/b/{bucket}/o", "/v0/b/{bucket}/o/{object...}"} {
		r.HTTP.HandleFunc("POST "+p, s.firebasePost)
		r.HTTP.HandleFunc("PUT "+p, s.firebasePut)
	}
	r.HTTP.HandleFunc("GET /v0/{$}", func(w http.ResponseWriter, _ *http.Request) {
		httpjson.Write(w, http.StatusOK, map[string]string{"emulator": "storage"})
	})
	r.HTTP.HandleFunc("GET /v0/b/{bucket}/o", s.firebaseList)
	r.HTTP.HandleFunc("GET /v0/b/{bucket}/o/{object...}", s.firebaseGet)
	r.HTTP.HandleFunc("PATCH /v0/b/{bucket}/o/{object...}", s.firebaseUpdate)
	r.HTTP.HandleFunc("DELETE /v0/b/{bucket}/o/{object...}", s.firebaseDelete)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	httpjson.Write(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// firebaseError writes an engine error as the Firebase API does.
func (s *Service) firebaseError(w http.ResponseWriter, err error) {
	msg := s.clientMessage(err)
	if invalidName(err) {
		msg = "Invalid object name."
	}
	writeError(w, httpStatus(err), msg)
}

// firebaseCaller authenticates a request, answering 401 when it cannot.
func (s *Service) firebaseCaller(w http.ResponseWriter, r *http.Request) (identity.Principal, bool) {
	p, err := s.caller(r)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "Invalid authorization token.")
		return p, false
	}
	return p, true
}

// firebaseJSON is an object's metadata as the Firebase API answers it:
// fields unset (contentDisposition, no custom metadata) are left out.
func firebaseJSON(o *storage.Object) map[string]any {
	m := map[string]any{
		"name": o.Name, "bucket": o.Bucket, "generation": strconv.FormatInt(o.Generation, 10),
		"metageneration": strconv.FormatInt(o.Metageneration, 10),
		"timeCreated":    o.Created.Format(time.RFC3339Nano), "updated": o.Updated.Format(time.RFC3339Nano),
		"storageClass": "STANDARD", "size": strconv.FormatInt(o.Size, 10),
		"md5Hash": base64.StdEncoding.EncodeToString(o.MD5), "crc32c": crcBase64(o.CRC32C),
		"etag":           base64.StdEncoding.EncodeToString(o.MD5),
		"downloadTokens": strings.Join(o.Tokens(), ","), "contentEncoding": orDefault(o.ContentEncoding, "identity"),
	}
	for k, v := range map[string]string{"contentType": o.ContentType, "cacheControl": o.CacheControl,
		"contentDisposition": o.ContentDisposition, "contentLanguage": o.ContentLanguage} {
		if v != "" {
			m[k] = v
		}
	}
	custom := map[string]string{}
	for k, v := range o.Metadata {
		if k != storage.TokenKey {
			custom[k] = v
		}
	}
	if len(custom) > 0 {
		m["metadata"] = custom
	}
	return m
}

// firebasePost is an upload, or a download-token change.
func (s *Service) firebasePost(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Has("create_token") || q.Has("delete_token") {
		s.changeToken(w, r)
		return
	}
	s.firebaseUpload(w, r)
}

// firebasePut is a metadata update with X-HTTP-Method-Override: PATCH, else
// as a POST.
func (s *Service) firebasePut(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("X-HTTP-Method-Override"), "PATCH") {
		s.firebaseUpdate(w, r)
		return
	}
	s.firebasePost(w, r)
}

// objectName is the object a /v0 upload names: in the path, else in ?name=.
func objectName(r *http.Request) string {
	return orDefault(r.PathValue("object"), r.URL.Query().Get("name"))
}

func (s *Service) firebaseUpload(w http.ResponseWriter, r *http.Request) {
	bucket := r.PathValue("bucket")
	if id := r.URL.Query().Get("upload_id"); id != "" {
		s.continueUpload(w, r, id)
		return
	}
	caller, ok := s.firebaseCaller(w, r)
	if !ok {
		return
	}
	if r.Header.Get("X-Goog-Upload-Protocol") != "resumable" && r.Header.Get("X-Goog-Upload-Command") == "" {
		s.oneShotUpload(w, r, caller, bucket)
		return
	}
	if cmd := r.Header.Get("X-Goog-Upload-Command"); cmd != "" && cmd != "start" {
		writeError(w, http.StatusBadRequest, "Upload command "+strconv.Quote(cmd)+" needs an upload_id.")
		return
	}
	in, err := decodeIncoming(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := orDefault(objectName(r), in.Name)
	meta := storage.Object{Bucket: bucket, Name: name, ContentType: r.Header.Get("X-Goog-Upload-Header-Content-Type")}
	in.apply(&meta)
	meta.Size, _ = strconv.ParseInt(r.Header.Get("X-Goog-Upload-Header-Content-Length"), 10, 64)
	u, err := s.engine.StartUpload(caller, meta, false)
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	location := "http://" + r.Host + "/v0/b/" + bucket + "/o?name=" + urlQuery(name) + "&upload_id=" + u.ID() + "&upload_protocol=resumable"
	w.Header().Set("X-Goog-Upload-Status", "active")
	w.Header().Set("X-Goog-Upload-URL", location)
	w.Header().Set("X-GUploader-UploadID", u.ID())
	w.Header().Set("X-Goog-Upload-Chunk-Granularity", "262144")
	w.WriteHeader(http.StatusOK)
}

// oneShotUpload is a raw (media) or multipart upload: multipart when
// X-Goog-Upload-Protocol says so, or the body is multipart.
func (s *Service) oneShotUpload(w http.ResponseWriter, r *http.Request, caller identity.Principal, bucket string) {
	meta := storage.Object{Bucket: bucket, Name: objectName(r), ContentType: r.Header.Get("Content-Type")}
	var content io.Reader = r.Body
	size := r.ContentLength
	if r.Header.Get("X-Goog-Upload-Protocol") == "multipart" || strings.HasPrefix(meta.ContentType, "multipart/") {
		var part *multipart.Part
		var err error
		if meta, part, err = readMultipart(r, bucket, objectName(r)); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		content, size = part, -1
	}
	storage.EnsureToken(&meta)
	if meta.ContentDisposition == "" {
		meta.ContentDisposition = "inline" // as the official emulator keeps a Firebase upload's
	}
	o, err := s.engine.Create(r.Context(), caller, meta, content, size)
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, firebaseJSON(o))
}

// readMultipart reads a multipart/related upload: its first part is the
// metadata (at most 1 MiB of JSON) of the new object, whose name (from the
// URL) takes precedence; it returns the content part after it. Another
// content type is "Bad content type.", as GCS and Firebase answer it.
func readMultipart(r *http.Request, bucket, name string) (storage.Object, *multipart.Part, error) {
	ct := r.Header.Get("Content-Type")
	mediaType, params, err := mime.ParseMediaType(ct)
	if err != nil || mediaType != "multipart/related" || params["boundary"] == "" {
		return storage.Object{}, nil, errs.New(errs.InvalidArgument, "Bad content type. "+ct)
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	part, err := mr.NextPart()
	if err != nil {
		return storage.Object{}, nil, errs.Errorf(errs.InvalidArgument, "Invalid multipart upload: %v", err)
	}
	in, err := decodeIncoming(part)
	if err != nil {
		return storage.Object{}, nil, err
	}
	data, err := mr.NextPart()
	if err != nil {
		return storage.Object{}, nil, errs.New(errs.InvalidArgument, "Invalid multipart upload: no content part")
	}
	meta := storage.Object{Bucket: bucket, Name: orDefault(name, in.Name), ContentType: data.Header.Get("Content-Type")}
	in.apply(&meta)
	return meta, data, nil
}

// continueUpload handles the commands of a Firebase resumable upload:
// query, cancel, upload, finalize and "upload, finalize". A chunk without
// X-Goog-Upload-Offset lands at the current offset. The finalize is judged
// as its own Authorization, or the start's when it has none.
func (s *Service) continueUpload(w http.ResponseWriter, r *http.Request, id string) {
	u := s.engine.Upload(id, false)
	if u == nil {
		writeError(w, http.StatusNotFound, "Upload not found.")
		return
	}
	defer u.Unlock()
	cmd := strings.ReplaceAll(r.Header.Get("X-Goog-Upload-Command"), " ", "")
	status := func() {
		w.Header().Set("X-Goog-Upload-Status", u.Status())
		w.Header().Set("X-Goog-Upload-Size-Received", strconv.FormatInt(u.Received(), 10))
	}
	switch cmd {
	case "query":
		status()
		if o := u.Done(); o != nil {
			httpjson.Write(w, http.StatusOK, firebaseJSON(o))
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	case "cancel":
		if err := s.engine.CancelUpload(u); err != nil {
			status()
			s.firebaseError(w, err)
			return
		}
		status()
		w.WriteHeader(http.StatusOK)
		return
	case "upload", "upload,finalize", "finalize":
	default:
		writeError(w, http.StatusBadRequest, "Unknown upload command "+strconv.Quote(cmd)+".")
		return
	}
	if u.Status() == storage.StatusFinal && strings.HasSuffix(cmd, "finalize") {
		// A finalize sent again (its answer lost, say) answers as the first did.
		s.finishUpload(w, r, u, status)
		return
	}
	if strings.HasPrefix(cmd, "upload") {
		if h := r.Header.Get("X-Goog-Upload-Offset"); h != "" {
			offset, err := strconv.ParseInt(h, 10, 64)
			if err != nil || offset != u.Received() {
				status()
				writeError(w, http.StatusBadRequest, fmt.Sprintf("Upload offset %s does not match the %d bytes received.", strconv.Quote(h), u.Received()))
				return
			}
		}
		if err := u.Append(r.Body); err != nil {
			status()
			s.firebaseError(w, err)
			return
		}
	}
	if !strings.HasSuffix(cmd, "finalize") {
		status()
		w.WriteHeader(http.StatusOK)
		return
	}
	s.finishUpload(w, r, u, status)
}

// finishUpload finalizes u as the request's caller, or the start's when the
// request carries no credential, and writes the answer.
func (s *Service) finishUpload(w http.ResponseWriter, r *http.Request, u *storage.Upload, status func()) {
	caller := u.Caller()
	if r.Header.Get("Authorization") != "" {
		var ok bool
		if caller, ok = s.firebaseCaller(w, r); !ok {
			return
		}
	}
	o, err := s.engine.FinishUpload(r.Context(), caller, u, func(o *storage.Object) {
		storage.EnsureToken(o)
		if o.ContentDisposition == "" {
			o.ContentDisposition = "inline"
		}
	})
	status()
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, firebaseJSON(o))
}

func (s *Service) firebaseGet(w http.ResponseWriter, r *http.Request) {
	bucket, name, q := r.PathValue("bucket"), r.PathValue("object"), r.URL.Query()
	var o *storage.Object
	var err error
	if token := q.Get("token"); token != "" && q.Get("alt") == "media" {
		o, err = s.engine.GetWithToken(bucket, name, token)
	}
	if o == nil && (err == nil || errs.KindOf(err) == errs.NotFound) {
		caller, ok := s.firebaseCaller(w, r)
		if !ok {
			return
		}
		o, err = s.engine.Get(r.Context(), caller, bucket, name)
	}
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	if q.Get("alt") == "media" {
		s.serveContent(w, r, o)
		return
	}
	if o, err = s.engine.WithToken(o); err != nil {
		s.firebaseError(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, firebaseJSON(o))
}

func (s *Service) firebaseUpdate(w http.ResponseWriter, r *http.Request) {
	caller, ok := s.firebaseCaller(w, r)
	if !ok {
		return
	}
	in, err := decodeIncoming(r.Body)
	if err != nil {
		if _, gerr := s.engine.Store().Get(r.PathValue("bucket"), r.PathValue("object")); gerr != nil {
			writeError(w, http.StatusNotFound, "Not Found.")
			return
		}
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	o, err := s.engine.Update(r.Context(), caller, r.PathValue("bucket"), r.PathValue("object"), func(o *storage.Object) {
		tokens := o.Metadata[storage.TokenKey] // download tokens are not custom metadata here
		in.apply(o)
		if tokens != "" && o.Metadata[storage.TokenKey] == "" {
			if o.Metadata == nil {
				o.Metadata = map[string]string{}
			}
			o.Metadata[storage.TokenKey] = tokens
		}
	})
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, firebaseJSON(o))
}

func (s *Service) firebaseDelete(w http.ResponseWriter, r *http.Request) {
	caller, ok := s.firebaseCaller(w, r)
	if !ok {
		return
	}
	if err := s.engine.Delete(r.Context(), caller, r.PathValue("bucket"), r.PathValue("object")); err != nil {
		s.firebaseError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) firebaseList(w http.ResponseWriter, r *http.Request) {
	bucket, q := r.PathValue("bucket"), r.URL.Query()
	prefix := q.Get("prefix")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		writeError(w, http.StatusBadRequest, "The prefix parameter must be empty or end with '/'.")
		return
	}
	caller, ok := s.firebaseCaller(w, r)
	if !ok {
		return
	}
	max, _ := strconv.Atoi(q.Get("maxResults"))
	if max <= 0 || max > 1000 {
		max = 1000
	}
	objects, prefixes, next, err := s.engine.List(r.Context(), caller, bucket, prefix, q.Get("delimiter"), q.Get("pageToken"), max)
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	// Firebase lists only names it can address as a path: no empty
	// segment, so neither a folder placeholder ("abc/") under itself nor a
	// prefix with an empty name ("a//").
	items, folders := []map[string]string{}, []string{}
	for _, o := range objects {
		if validPath(o.Name) {
			items = append(items, map[string]string{"name": o.Name, "bucket": o.Bucket})
		}
	}
	for _, p := range prefixes {
		if validPath(strings.TrimSuffix(p, "/")) {
			folders = append(folders, p)
		}
	}
	out := map[string]any{"prefixes": folders, "items": items}
	if next != "" {
		out["nextPageToken"] = next
	}
	httpjson.Write(w, http.StatusOK, out)
}

// validPath reports whether a name (a leading "/" aside) has no empty
// segment.
func validPath(name string) bool {
	name = strings.TrimPrefix(name, "/")
	return name != "" && !slices.Contains(strings.Split(name, "/"), "")
}

// changeToken adds a download token (?create_token=true) or removes one
// (?delete_token=T, a new one replacing the last), for the owner only, as
// the official emulator does.
func (s *Service) changeToken(w http.ResponseWriter, r *http.Request) {
	bucket, name, q := r.PathValue("bucket"), r.PathValue("object"), r.URL.Query()
	if q.Has("create_token") && q.Get("create_token") != "true" {
		writeError(w, http.StatusBadRequest, "create_token must be true.")
		return
	}
	p, err := s.caller(r)
	if err != nil || !p.Owner {
		writeError(w, http.StatusForbidden, "Missing admin credentials.")
		return
	}
	var o *storage.Object
	if q.Has("create_token") {
		o, err = s.engine.AddToken(bucket, name)
	} else {
		o, err = s.engine.DeleteToken(bucket, name, q.Get("delete_token"))
	}
	if err != nil {
		s.firebaseError(w, err)
		return
	}
	httpjson.Write(w, http.StatusOK, firebaseJSON(o))
}

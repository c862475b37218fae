package storage

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
)

// Access is one Firebase-API request to judge (for security rules).
type Access struct {
	Caller identity.Principal
	// Method is get, list, create, update or delete.
	Method       string
	Bucket, Name string
	Existing     *Object // nil when there is none
	Incoming     *Object // the object a write would leave (size, contentType, metadata)
}

// Authorizer judges Firebase-API requests by callers other than the owner;
// it returns an error to deny (the request gets 403).
type Authorizer interface {
	Authorize(ctx context.Context, a Access) error
}

// Service is the storage service of loupe serve.
type Service struct {
	env       server.Env
	store     *Store
	temp      string // the root when in memory, removed at Close
	authorize Authorizer
	mu        sync.Mutex
	uploads   map[string]*upload
	images    imageCache
}

// New opens the object store under env.DataDir, or in a temporary folder.
func New(env server.Env) (*Service, error) {
	root, temp := env.DataDir, ""
	if root == "" {
		dir, err := os.MkdirTemp("", "loupe-storage-")
		if err != nil {
			return nil, err
		}
		root, temp = dir, dir
	}
	st, err := OpenStore(root)
	if err != nil {
		return nil, err
	}
	return &Service{env: env, store: st, temp: temp, uploads: map[string]*upload{}}, nil
}

// SetAuthorizer sets who judges Firebase-API requests (nil allows all).
func (s *Service) SetAuthorizer(a Authorizer) { s.authorize = a }

// Name implements server.Service.
func (s *Service) Name() string { return "storage" }

// Close implements server.Closer.
func (s *Service) Close() error {
	if s.temp != "" {
		return os.RemoveAll(s.temp)
	}
	return nil
}

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("POST /v0/b/{bucket}/o", s.firebaseUpload)
	r.HTTP.HandleFunc("GET /v0/b/{bucket}/o", s.firebaseList)
	r.HTTP.HandleFunc("GET /v0/b/{bucket}/o/{object...}", s.firebaseGet)
	r.HTTP.HandleFunc("PATCH /v0/b/{bucket}/o/{object...}", s.firebaseUpdate)
	r.HTTP.HandleFunc("PUT /v0/b/{bucket}/o/{object...}", s.firebaseUpdate)
	r.HTTP.HandleFunc("DELETE /v0/b/{bucket}/o/{object...}", s.firebaseDelete)
	r.HTTP.HandleFunc("GET /_next/image", s.serveImage)
	s.registerGCS(r)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func crcBase64(c uint32) string {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, c)
	return base64.StdEncoding.EncodeToString(b)
}

// firebaseJSON is an object's metadata as the Firebase API answers it.
func firebaseJSON(o *Object) map[string]any {
	custom := map[string]string{}
	for k, v := range o.Metadata {
		if k != tokenKey {
			custom[k] = v
		}
	}
	m := map[string]any{
		"name": o.Name, "bucket": o.Bucket, "generation": strconv.FormatInt(o.Generation, 10),
		"metageneration": strconv.FormatInt(o.Metageneration, 10), "contentType": o.ContentType,
		"timeCreated": o.Created.Format(time.RFC3339Nano), "updated": o.Updated.Format(time.RFC3339Nano),
		"storageClass": "STANDARD", "size": strconv.FormatInt(o.Size, 10),
		"md5Hash": base64.StdEncoding.EncodeToString(o.MD5), "crc32c": crcBase64(o.CRC32C),
		"etag":           base64.StdEncoding.EncodeToString(o.MD5),
		"downloadTokens": strings.Join(o.Tokens(), ","), "contentEncoding": orDefault(o.ContentEncoding, "identity"),
		"contentDisposition": orDefault(o.ContentDisposition, "inline"), "metadata": custom,
	}
	if o.CacheControl != "" {
		m["cacheControl"] = o.CacheControl
	}
	if o.ContentLanguage != "" {
		m["contentLanguage"] = o.ContentLanguage
	}
	return m
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// incoming is writable metadata as clients send it.
type incoming struct {
	Name               string            `json:"name"`
	ContentType        string            `json:"contentType"`
	CacheControl       string            `json:"cacheControl"`
	ContentDisposition string            `json:"contentDisposition"`
	ContentEncoding    string            `json:"contentEncoding"`
	ContentLanguage    string            `json:"contentLanguage"`
	Metadata           map[string]string `json:"metadata"`
}

func (in incoming) apply(o *Object) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&o.ContentType, in.ContentType)
	set(&o.CacheControl, in.CacheControl)
	set(&o.ContentDisposition, in.ContentDisposition)
	set(&o.ContentEncoding, in.ContentEncoding)
	set(&o.ContentLanguage, in.ContentLanguage)
	if in.Metadata != nil {
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		for k, v := range in.Metadata {
			o.Metadata[k] = v
		}
	}
}

func (s *Service) check(r *http.Request, a Access) (int, string) {
	p, err := s.env.Credentials.FromAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		return http.StatusUnauthorized, "Invalid authorization token."
	}
	if p.Owner || s.authorize == nil {
		return 0, ""
	}
	a.Caller = p
	if err := s.authorize.Authorize(r.Context(), a); err != nil {
		verb := "READ"
		switch a.Method {
		case "list":
			verb = "LIST"
		case "create", "update", "delete":
			verb = "WRITE"
		}
		return http.StatusForbidden, "Permission denied. No " + verb + " permission."
	}
	return 0, ""
}

func (s *Service) firebaseUpload(w http.ResponseWriter, r *http.Request) {
	bucket := r.PathValue("bucket")
	q := r.URL.Query()
	if id := q.Get("upload_id"); id != "" {
		s.continueUpload(w, r, id)
		return
	}
	switch r.Header.Get("X-Goog-Upload-Protocol") {
	case "resumable":
		var in incoming
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil && !errors.Is(err, io.EOF) {
			writeError(w, http.StatusBadRequest, "Invalid metadata: "+err.Error())
			return
		}
		name := orDefault(q.Get("name"), in.Name)
		if ValidateName(name) != nil || !validBucket(bucket) {
			writeError(w, http.StatusBadRequest, "Invalid object name.")
			return
		}
		meta := Object{Bucket: bucket, Name: name, ContentType: r.Header.Get("X-Goog-Upload-Header-Content-Type")}
		in.apply(&meta)
		meta.Size, _ = strconv.ParseInt(r.Header.Get("X-Goog-Upload-Header-Content-Length"), 10, 64)
		if code, msg := s.check(r, s.writeAccess(meta)); code != 0 {
			writeError(w, code, msg)
			return
		}
		u, err := s.startSession(meta, false)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		id := u.id
		location := "http://" + r.Host + "/v0/b/" + bucket + "/o?name=" + urlQuery(name) + "&upload_id=" + id + "&upload_protocol=resumable"
		w.Header().Set("X-Goog-Upload-Status", "active")
		w.Header().Set("X-Goog-Upload-URL", location)
		w.Header().Set("X-GUploader-UploadID", id)
		w.Header().Set("X-Goog-Upload-Chunk-Granularity", "262144")
		w.WriteHeader(http.StatusOK)
	default:
		s.multipartUpload(w, r, bucket)
	}
}

// writeAccess is the access an upload of meta asks for: a create, with the
// object it would replace as the existing resource (as the emulator judges
// overwrites); metadata updates are the only "update".
func (s *Service) writeAccess(meta Object) Access {
	a := Access{Method: "create", Bucket: meta.Bucket, Name: meta.Name, Incoming: &meta}
	if old, err := s.store.Get(meta.Bucket, meta.Name); err == nil {
		a.Existing = old
	}
	return a
}

func (s *Service) multipartUpload(w http.ResponseWriter, r *http.Request, bucket string) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		// A raw upload: the body is the content.
		s.finishUpload(w, r, Object{Bucket: bucket, Name: r.URL.Query().Get("name"), ContentType: r.Header.Get("Content-Type")}, r.Body, r.ContentLength)
		return
	}
	meta, data, err := readMultipart(r, params["boundary"], bucket)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Invalid multipart upload: "+err.Error())
		return
	}
	s.finishUpload(w, r, meta, data, -1)
}

// readMultipart reads a multipart upload's metadata part (at most 1 MiB of
// JSON) into the new object's metadata, the name in the query taking
// precedence, and returns the content part after it.
func readMultipart(r *http.Request, boundary, bucket string) (Object, *multipart.Part, error) {
	mr := multipart.NewReader(r.Body, boundary)
	part, err := mr.NextPart()
	if err != nil {
		return Object{}, nil, err
	}
	var in incoming
	if err := json.NewDecoder(io.LimitReader(part, 1<<20)).Decode(&in); err != nil {
		return Object{}, nil, fmt.Errorf("invalid metadata: %w", err)
	}
	data, err := mr.NextPart()
	if err != nil {
		return Object{}, nil, errors.New("no content part")
	}
	meta := Object{Bucket: bucket, Name: orDefault(r.URL.Query().Get("name"), in.Name), ContentType: data.Header.Get("Content-Type")}
	in.apply(&meta)
	return meta, data, nil
}

// finishUpload streams content into a new object and answers its metadata.
// A write is judged before the content arrives when its size is declared
// (size ≥ 0), and always with the size received before it is committed, so a
// client cannot pass a size limit by announcing less or nothing; refused
// content is removed.
func (s *Service) finishUpload(w http.ResponseWriter, r *http.Request, meta Object, content io.Reader, size int64) {
	if ValidateName(meta.Name) != nil || !validBucket(meta.Bucket) {
		writeError(w, http.StatusBadRequest, "Invalid object name.")
		return
	}
	if size >= 0 {
		meta.Size = size
		if code, msg := s.check(r, s.writeAccess(meta)); code != 0 {
			writeError(w, code, msg)
			return
		}
	}
	pending, err := s.store.copyTo(content)
	if err != nil {
		writeError(w, http.StatusBadRequest, "Upload interrupted: "+err.Error())
		return
	}
	if pending.Size() != size {
		meta.Size = pending.Size()
		if code, msg := s.check(r, s.writeAccess(meta)); code != 0 {
			pending.Discard()
			writeError(w, code, msg)
			return
		}
	}
	ensureToken(&meta)
	o, err := pending.Commit(meta)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, firebaseJSON(o))
}

func ensureToken(o *Object) {
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if o.Metadata[tokenKey] == "" {
		o.Metadata[tokenKey] = newToken()
	}
}

func urlQuery(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "?", "%3F", "=", "%3D").Replace(s)
}

// continueUpload handles the commands of a Firebase resumable upload.
func (s *Service) continueUpload(w http.ResponseWriter, r *http.Request, id string) {
	u := s.session(id)
	if u == nil {
		writeError(w, http.StatusNotFound, "Upload not found.")
		return
	}
	defer u.mu.Unlock()
	if u.GCS {
		writeError(w, http.StatusNotFound, "Upload not found.")
		return
	}
	cmd := strings.ReplaceAll(r.Header.Get("X-Goog-Upload-Command"), " ", "")
	status := func(st string) {
		w.Header().Set("X-Goog-Upload-Status", st)
		var size int64
		if u.Done != nil {
			size = u.Done.Size
		} else {
			size = u.pending.Size()
		}
		w.Header().Set("X-Goog-Upload-Size-Received", strconv.FormatInt(size, 10))
	}
	if u.Done != nil {
		status("final")
		writeJSON(w, firebaseJSON(u.Done))
		return
	}
	switch cmd {
	case "query":
		status("active")
		w.WriteHeader(http.StatusOK)
		return
	case "cancel":
		s.cancelSession(u)
		w.WriteHeader(http.StatusOK)
		return
	case "upload", "upload,finalize", "finalize":
	default:
		writeError(w, http.StatusBadRequest, "Unknown upload command "+cmd)
		return
	}
	if strings.HasPrefix(cmd, "upload") {
		offset, err := strconv.ParseInt(r.Header.Get("X-Goog-Upload-Offset"), 10, 64)
		if err != nil || offset != u.pending.Size() {
			status("active")
			writeError(w, http.StatusBadRequest, fmt.Sprintf("Upload offset %d does not match the %d bytes received.", offset, u.pending.Size()))
			return
		}
		// Bytes of an interrupted chunk stay: the client asks (query) how
		// many arrived and resumes from there.
		if _, err := io.Copy(u.pending, r.Body); err != nil {
			status("active")
			writeError(w, http.StatusBadRequest, "Upload interrupted: "+err.Error())
			return
		}
	}
	if !strings.HasSuffix(cmd, "finalize") {
		status("active")
		w.WriteHeader(http.StatusOK)
		return
	}
	meta := u.Meta
	if meta.Size > 0 && meta.Size != u.pending.Size() {
		status("active")
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Upload is %d bytes, not the %d announced.", u.pending.Size(), meta.Size))
		return
	}
	if meta.Size != u.pending.Size() {
		// The size was not announced: judge the write again with the real one.
		meta.Size = u.pending.Size()
		if code, msg := s.check(r, s.writeAccess(meta)); code != 0 {
			s.cancelSession(u)
			writeError(w, code, msg)
			return
		}
	}
	ensureToken(&meta)
	o, err := s.finishSession(u, meta)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	status("final")
	writeJSON(w, firebaseJSON(o))
}

func (s *Service) firebaseGet(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	o, err := s.store.Get(bucket, name)
	if errors.Is(err, ErrNotFound) {
		if code, msg := s.check(r, Access{Method: "get", Bucket: bucket, Name: name}); code != 0 {
			writeError(w, code, msg)
			return
		}
		writeError(w, http.StatusNotFound, "Not Found.  Could not get object")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	q := r.URL.Query()
	if q.Get("alt") == "media" {
		token := q.Get("token")
		if token != "" {
			if !contains(o.Tokens(), token) {
				writeError(w, http.StatusForbidden, "Permission denied. Invalid download token.")
				return
			}
		} else if code, msg := s.check(r, Access{Method: "get", Bucket: bucket, Name: name, Existing: o}); code != 0 {
			writeError(w, code, msg)
			return
		}
		s.serveContent(w, r, o)
		return
	}
	if code, msg := s.check(r, Access{Method: "get", Bucket: bucket, Name: name, Existing: o}); code != 0 {
		writeError(w, code, msg)
		return
	}
	if len(o.Tokens()) == 0 {
		if updated, err := s.store.Update(bucket, name, ensureToken); err == nil {
			o = updated
		}
	}
	writeJSON(w, firebaseJSON(o))
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// serveContent streams an object, honouring Range (206) and conditional requests.
func (s *Service) serveContent(w http.ResponseWriter, r *http.Request, o *Object) {
	_, f, err := s.store.Open(o.Bucket, o.Name)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found.")
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", orDefault(o.ContentType, "application/octet-stream"))
	h.Set("Content-Disposition", orDefault(o.ContentDisposition, "inline")+"; filename*=utf-8''"+urlQuery(filepath.Base(o.Name)))
	h.Set("ETag", `"`+hex.EncodeToString(o.MD5)+`"`)
	h.Set("X-Goog-Generation", strconv.FormatInt(o.Generation, 10))
	h.Set("X-Goog-Metageneration", strconv.FormatInt(o.Metageneration, 10))
	h.Set("X-Goog-Hash", "crc32c="+crcBase64(o.CRC32C)+",md5="+base64.StdEncoding.EncodeToString(o.MD5))
	if o.CacheControl != "" {
		h.Set("Cache-Control", o.CacheControl)
	}
	if o.ContentEncoding != "" && o.ContentEncoding != "identity" {
		h.Set("Content-Encoding", o.ContentEncoding)
	}
	for k, v := range o.Metadata {
		if k != tokenKey {
			h.Set("X-Goog-Meta-"+k, v)
		}
	}
	http.ServeContent(w, r, "", o.Updated, f)
}

func (s *Service) firebaseUpdate(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	old, err := s.store.Get(bucket, name)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found.")
		return
	}
	var in incoming
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid metadata: "+err.Error())
		return
	}
	next := *old
	in.apply(&next)
	if code, msg := s.check(r, Access{Method: "update", Bucket: bucket, Name: name, Existing: old, Incoming: &next}); code != 0 {
		writeError(w, code, msg)
		return
	}
	o, err := s.store.Update(bucket, name, in.apply)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, firebaseJSON(o))
}

func (s *Service) firebaseDelete(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	old, err := s.store.Get(bucket, name)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found.")
		return
	}
	if code, msg := s.check(r, Access{Method: "delete", Bucket: bucket, Name: name, Existing: old}); code != 0 {
		writeError(w, code, msg)
		return
	}
	if err := s.store.Delete(bucket, name); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
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
	if code, msg := s.check(r, Access{Method: "list", Bucket: bucket, Name: prefix}); code != 0 {
		writeError(w, code, msg)
		return
	}
	max, _ := strconv.Atoi(q.Get("maxResults"))
	if max <= 0 || max > 1000 {
		max = 1000
	}
	objects, prefixes, next, err := s.store.List(bucket, prefix, q.Get("delimiter"), q.Get("pageToken"), max)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	items := []map[string]string{}
	for _, o := range objects {
		items = append(items, map[string]string{"name": o.Name, "bucket": o.Bucket})
	}
	out := map[string]any{"prefixes": nonNil(prefixes), "items": items}
	if next != "" {
		out["nextPageToken"] = next
	}
	writeJSON(w, out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

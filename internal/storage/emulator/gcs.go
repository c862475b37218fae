package emulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
)

// The GCS JSON API (/storage/v1, /upload/storage/v1) and XML reads
// (/{bucket}/{object}) as cloud.google.com/go/storage and
// @google-cloud/storage call them with STORAGE_EMULATOR_HOST.
//
// Who may do what: in local mode every request is owner-level, as in the
// official emulator, whose GCS endpoints never consult the rules (the SDKs
// send no credential to an emulator). In strict mode (--strict-credentials)
// a request needs a credential, as GCS refuses anonymous callers: none is
// 401, the owner credential has full access, and a user's ID token gets the
// storage rules, as on /v0. Bucket and ACL methods are the owner's.

func (s *Service) registerGCS(r *server.Routes) {
	r.HTTP.HandleFunc("POST /upload/storage/v1/b/{bucket}/o", s.gcsUpload)
	r.HTTP.HandleFunc("PUT /upload/storage/v1/b/{bucket}/o", s.gcsUpload)
	// The JSON API under /storage/v1 (the Go client) and under / (the Node
	// client, whose emulator endpoint has no /storage/v1), as the official
	// emulator serves both.
	for _, api := range []string{"/storage/v1", ""} {
		r.HTTP.HandleFunc("GET "+api+"/b", s.gcsBuckets)
		r.HTTP.HandleFunc("GET "+api+"/b/{bucket}", s.gcsBucket)
		r.HTTP.HandleFunc("POST "+api+"/b", s.gcsCreateBucket)
		r.HTTP.HandleFunc("GET "+api+"/b/{bucket}/o", s.gcsList)
		r.HTTP.HandleFunc("GET "+api+"/b/{bucket}/o/{object...}", s.gcsGet)
		r.HTTP.HandleFunc("PATCH "+api+"/b/{bucket}/o/{object...}", s.gcsPatch)
		r.HTTP.HandleFunc("DELETE "+api+"/b/{bucket}/o/{object...}", s.gcsDelete)
		r.HTTP.HandleFunc("POST "+api+"/b/{bucket}/o/{object}/rewriteTo/b/{dstBucket}/o/{dstObject}", s.gcsRewrite)
		r.HTTP.HandleFunc("POST "+api+"/b/{bucket}/o/{object}/copyTo/b/{dstBucket}/o/{dstObject}", s.gcsRewrite)
		r.HTTP.HandleFunc("POST "+api+"/b/{bucket}/o/{object}/acl", s.gcsACL)
	}
	r.HTTP.HandleFunc("GET /download/storage/v1/b/{bucket}/o/{object...}", s.gcsGet)
	r.Fallback(s.isXMLRead, http.HandlerFunc(s.xmlRead))
	r.Fallback(isPolicyUpload, http.HandlerFunc(s.policyUpload))
}

// gcsError writes a GCS JSON API error, with GCS's reason for the status.
func gcsError(w http.ResponseWriter, code int, msg string) {
	reason := map[int]string{http.StatusBadRequest: "invalid", http.StatusUnauthorized: "required",
		http.StatusForbidden: "forbidden", http.StatusNotFound: "notFound"}[code]
	if reason == "" {
		reason = "backendError"
	}
	gcsErrorReason(w, code, reason, msg)
}

func gcsErrorReason(w http.ResponseWriter, code int, reason, msg string) {
	httpjson.Write(w, code, map[string]any{"error": map[string]any{"code": code, "message": msg,
		"errors": []map[string]string{{"message": msg, "domain": "global", "reason": reason}}}})
}

// gcsCaller is who a GCS API request comes from (see the top of this file),
// answering 401 when strict mode refuses it; permission names the access
// asked for ("storage.objects.get"), as GCS's refusal does.
func (s *Service) gcsCaller(w http.ResponseWriter, r *http.Request, permission string) (identity.Principal, bool) {
	if !s.env.Credentials.IsStrict() {
		return identity.Owner, true
	}
	if r.Header.Get("Authorization") == "" {
		gcsError(w, http.StatusUnauthorized, anonymous(permission))
		return identity.Principal{}, false
	}
	p, err := s.caller(r)
	if err != nil {
		gcsErrorReason(w, http.StatusUnauthorized, "authError", "Invalid Credentials")
		return identity.Principal{}, false
	}
	return p, true
}

// gcsOwner is gcsCaller for the methods only the owner may call (buckets,
// ACLs): anyone else is refused (403).
func (s *Service) gcsOwner(w http.ResponseWriter, r *http.Request, permission string) bool {
	p, ok := s.gcsCaller(w, r, permission)
	if ok && !p.Owner {
		who := p.UID
		if email, _ := p.Claims["email"].(string); email != "" {
			who = email
		}
		gcsError(w, http.StatusForbidden, who+" does not have "+permission+" access to the Google Cloud Storage "+resource(permission)+".")
		return false
	}
	return ok
}

// anonymous is GCS's refusal of a request without credentials.
func anonymous(permission string) string {
	return "Anonymous caller does not have " + permission + " access to the Google Cloud Storage " + resource(permission) + "."
}

// resource is what a permission is about: "bucket" or "object".
func resource(permission string) string {
	if strings.HasPrefix(permission, "storage.buckets.") {
		return "bucket"
	}
	return "object"
}

// gcsObjectError writes an engine error about bucket/object as the GCS JSON
// API does: a missing object is "No such object" (plain text for a
// download, as GCS answers it).
func (s *Service) gcsObjectError(w http.ResponseWriter, r *http.Request, bucket, object string, err error) {
	code := httpStatus(err)
	msg := s.clientMessage(err)
	if code == http.StatusNotFound {
		msg = "No such object: " + bucket + "/" + object
		if r.URL.Query().Get("alt") == "media" {
			http.Error(w, msg, code)
			return
		}
	}
	gcsError(w, code, msg)
}

// gcsJSON is a storage#object resource, its links absolute URLs of the
// loupe r reached.
func gcsJSON(r *http.Request, o *storage.Object) map[string]any {
	base, object := "http://"+r.Host, "/b/"+o.Bucket+"/o/"+encodeURIComponent(o.Name)
	gen := strconv.FormatInt(o.Generation, 10)
	m := map[string]any{
		"kind": "storage#object", "id": o.Bucket + "/" + o.Name + "/" + gen,
		"name": o.Name, "bucket": o.Bucket, "generation": gen,
		"metageneration": strconv.FormatInt(o.Metageneration, 10), "contentType": orDefault(o.ContentType, "application/octet-stream"),
		"size": strconv.FormatInt(o.Size, 10), "md5Hash": base64.StdEncoding.EncodeToString(o.MD5),
		"crc32c": crcBase64(o.CRC32C), "etag": base64.StdEncoding.EncodeToString(o.MD5),
		"timeCreated": o.Created.Format(time.RFC3339Nano), "updated": o.Updated.Format(time.RFC3339Nano),
		"storageClass": "STANDARD", "timeStorageClassUpdated": o.Created.Format(time.RFC3339Nano),
		"selfLink":  base + "/storage/v1" + object,
		"mediaLink": base + "/download/storage/v1" + object + "?generation=" + gen + "&alt=media",
	}
	for k, v := range map[string]string{"cacheControl": o.CacheControl, "contentDisposition": o.ContentDisposition,
		"contentEncoding": o.ContentEncoding, "contentLanguage": o.ContentLanguage} {
		if v != "" {
			m[k] = v
		}
	}
	if len(o.Metadata) > 0 {
		m["metadata"] = o.Metadata
	}
	return m
}

// encodeURIComponent escapes s as JavaScript's encodeURIComponent does, as
// GCS writes object names into its links.
func encodeURIComponent(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func (s *Service) gcsUpload(w http.ResponseWriter, r *http.Request) {
	bucket, q := r.PathValue("bucket"), r.URL.Query()
	if id := q.Get("upload_id"); id != "" {
		s.gcsChunk(w, r, id)
		return
	}
	caller, ok := s.gcsCaller(w, r, "storage.objects.create")
	if !ok {
		return
	}
	switch orDefault(q.Get("uploadType"), r.Header.Get("X-Goog-Upload-Protocol")) {
	case "multipart":
		meta, data, err := readMultipart(r, bucket, strings.TrimPrefix(q.Get("name"), "/"))
		if err != nil {
			gcsError(w, http.StatusBadRequest, err.Error())
			return
		}
		if ct := r.Header.Get("X-Upload-Content-Type"); ct != "" {
			meta.ContentType = ct
		}
		s.gcsFinish(w, r, caller, meta, data)
	case "resumable":
		in, err := decodeIncoming(r.Body)
		if err != nil {
			gcsError(w, http.StatusBadRequest, err.Error())
			return
		}
		meta := storage.Object{Bucket: bucket, Name: orDefault(q.Get("name"), in.Name), ContentType: r.Header.Get("X-Upload-Content-Type")}
		in.apply(&meta)
		u, err := s.engine.StartUpload(caller, meta, true)
		if err != nil {
			s.gcsObjectError(w, r, bucket, meta.Name, err)
			return
		}
		w.Header().Set("Location", "http://"+r.Host+"/upload/storage/v1/b/"+bucket+"/o?uploadType=resumable&upload_id="+u.ID())
		w.WriteHeader(http.StatusOK)
	default: // media
		s.gcsFinish(w, r, caller, storage.Object{Bucket: bucket, Name: q.Get("name"), ContentType: r.Header.Get("Content-Type")}, r.Body)
	}
}

func (s *Service) gcsFinish(w http.ResponseWriter, r *http.Request, caller identity.Principal, meta storage.Object, content io.Reader) {
	o, err := s.engine.Create(r.Context(), caller, meta, content, -1)
	if err != nil {
		s.gcsObjectError(w, r, meta.Bucket, meta.Name, err)
		return
	}
	httpjson.Write(w, http.StatusOK, gcsJSON(r, o))
}

// gcsChunk takes one chunk of a resumable upload ("bytes a-b/total|*", or
// "bytes */total" to finish or ask for the status).
func (s *Service) gcsChunk(w http.ResponseWriter, r *http.Request, id string) {
	u := s.engine.Upload(id, true)
	if u == nil {
		gcsError(w, http.StatusNotFound, "upload session not found")
		return
	}
	defer u.Unlock()
	if u.Status() != storage.StatusActive {
		o, err := s.engine.FinishUpload(r.Context(), u.Caller(), u, nil) // answers how it ended
		if err != nil {
			s.gcsObjectError(w, r, u.Meta().Bucket, u.Meta().Name, err)
			return
		}
		httpjson.Write(w, http.StatusOK, gcsJSON(r, o))
		return
	}
	start, total, rest, ok := parseContentRange(r.Header.Get("Content-Range"))
	if r.Header.Get("Content-Range") == "" {
		start, total, rest, ok = u.Received(), -1, true, true // a body without a range is the rest of the object
	}
	if !ok {
		gcsError(w, http.StatusBadRequest, "invalid Content-Range "+strconv.Quote(r.Header.Get("Content-Range")))
		return
	}
	if start >= 0 {
		if start > u.Received() {
			gcsError(w, http.StatusBadRequest, fmt.Sprintf("chunk starts at %d but %d bytes were received", start, u.Received()))
			return
		}
		// Skip bytes of a re-sent chunk that were already stored.
		if skip := u.Received() - start; skip > 0 {
			if _, err := io.CopyN(io.Discard, r.Body, skip); err != nil {
				gcsError(w, http.StatusBadRequest, "upload interrupted")
				return
			}
		}
		if err := u.Append(r.Body); err != nil {
			s.gcsObjectError(w, r, u.Meta().Bucket, u.Meta().Name, err)
			return
		}
	}
	if total < 0 && rest {
		// "bytes a-*/*": this body was the rest of the object.
		total = u.Received()
	}
	if total < 0 || u.Received() < total {
		if u.Received() > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", u.Received()-1))
		}
		if r.Header.Get("X-GUploader-No-308") == "yes" {
			w.Header().Set("X-Http-Status-Code-Override", "308")
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusPermanentRedirect)
		}
		return
	}
	if u.Received() != total {
		gcsError(w, http.StatusBadRequest, fmt.Sprintf("received %d bytes, more than the %d announced", u.Received(), total))
		return
	}
	// The session URL is the credential of its requests, as in GCS; one
	// that carries its own is judged as that (and in local mode everyone is
	// the owner, sessions started before callers were recorded too).
	caller := u.Caller()
	if r.Header.Get("Authorization") != "" || !s.env.Credentials.IsStrict() {
		var ok bool
		if caller, ok = s.gcsCaller(w, r, "storage.objects.create"); !ok {
			return
		}
	}
	o, err := s.engine.FinishUpload(r.Context(), caller, u, nil)
	if err != nil {
		s.gcsObjectError(w, r, u.Meta().Bucket, u.Meta().Name, err)
		return
	}
	httpjson.Write(w, http.StatusOK, gcsJSON(r, o))
}

// parseContentRange reads "bytes a-b/total", "bytes a-b/*", "bytes a-*/…"
// or "bytes */total"; start is -1 without a range, total -1 when unknown,
// and rest reports an open end ("a-*": the body is all the rest, as the
// Node client sends a whole upload in one request).
func parseContentRange(h string) (start, total int64, rest, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, false, false
	}
	rng, tot, found := strings.Cut(spec, "/")
	if !found {
		return 0, 0, false, false
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || t < 0 {
			return 0, 0, false, false
		}
		total = t
	}
	if rng == "*" {
		return -1, total, false, true
	}
	a, b, found := strings.Cut(rng, "-")
	s, err := strconv.ParseInt(a, 10, 64)
	if !found || err != nil || s < 0 {
		return 0, 0, false, false
	}
	return s, total, b == "*", true
}

// bucketJSON is a storage#bucket resource.
func bucketJSON(b string) map[string]any {
	return map[string]any{"kind": "storage#bucket", "id": b, "name": b, "location": "US", "storageClass": "STANDARD"}
}

func (s *Service) gcsBuckets(w http.ResponseWriter, r *http.Request) {
	if !s.gcsOwner(w, r, "storage.buckets.list") {
		return
	}
	items := []map[string]any{}
	for _, b := range s.engine.Store().Buckets() {
		items = append(items, bucketJSON(b))
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "storage#buckets", "items": items})
}

func (s *Service) gcsBucket(w http.ResponseWriter, r *http.Request) {
	if !s.gcsOwner(w, r, "storage.buckets.get") {
		return
	}
	b := r.PathValue("bucket")
	if !s.engine.Store().BucketExists(b) {
		gcsError(w, http.StatusNotFound, "The specified bucket does not exist.")
		return
	}
	httpjson.Write(w, http.StatusOK, bucketJSON(b))
}

func (s *Service) gcsCreateBucket(w http.ResponseWriter, r *http.Request) {
	if !s.gcsOwner(w, r, "storage.buckets.create") {
		return
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil || !storage.ValidBucket(in.Name) {
		gcsError(w, http.StatusBadRequest, "Invalid bucket name.")
		return
	}
	if err := s.engine.Store().CreateBucket(in.Name); err != nil {
		gcsError(w, http.StatusInternalServerError, s.clientMessage(err))
		return
	}
	httpjson.Write(w, http.StatusOK, bucketJSON(in.Name))
}

func (s *Service) gcsGet(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	caller, ok := s.gcsCaller(w, r, "storage.objects.get")
	if !ok {
		return
	}
	o, err := s.engine.Get(r.Context(), caller, bucket, name)
	if err != nil {
		s.gcsObjectError(w, r, bucket, name, err)
		return
	}
	if r.URL.Query().Get("alt") == "media" {
		s.serveContent(w, r, o)
		return
	}
	httpjson.Write(w, http.StatusOK, gcsJSON(r, o))
}

func (s *Service) gcsPatch(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	caller, ok := s.gcsCaller(w, r, "storage.objects.update")
	if !ok {
		return
	}
	in, err := decodeIncoming(r.Body)
	if err != nil {
		gcsError(w, http.StatusBadRequest, err.Error())
		return
	}
	o, err := s.engine.Update(r.Context(), caller, bucket, name, in.apply)
	if err != nil {
		s.gcsObjectError(w, r, bucket, name, err)
		return
	}
	httpjson.Write(w, http.StatusOK, gcsJSON(r, o))
}

func (s *Service) gcsDelete(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	caller, ok := s.gcsCaller(w, r, "storage.objects.delete")
	if !ok {
		return
	}
	if err := s.engine.Delete(r.Context(), caller, bucket, name); err != nil {
		s.gcsObjectError(w, r, bucket, name, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) gcsList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	caller, ok := s.gcsCaller(w, r, "storage.objects.list")
	if !ok {
		return
	}
	max, _ := strconv.Atoi(q.Get("maxResults"))
	if max <= 0 || max > 1000 {
		max = 1000
	}
	objects, prefixes, next, err := s.engine.List(r.Context(), caller, r.PathValue("bucket"), q.Get("prefix"), q.Get("delimiter"), q.Get("pageToken"), max)
	if err != nil {
		gcsError(w, httpStatus(err), s.clientMessage(err))
		return
	}
	items := []map[string]any{}
	for _, o := range objects {
		items = append(items, gcsJSON(r, o))
	}
	out := map[string]any{"kind": "storage#objects", "items": items}
	if len(prefixes) > 0 {
		out["prefixes"] = prefixes
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	httpjson.Write(w, http.StatusOK, out)
}

// gcsRewrite copies an object in one call (copyTo, and rewriteTo, which is
// always done at once, so it hands out no rewrite token). A rewriteTo that
// brings a token (the next call of a rewrite done in steps) is not
// implemented (501), as firebase-tools' Storage emulator answers it.
func (s *Service) gcsRewrite(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	caller, ok := s.gcsCaller(w, r, "storage.objects.create")
	if !ok {
		return
	}
	if r.URL.Query().Get("rewriteToken") != "" && strings.Contains(r.URL.Path, "/rewriteTo/") {
		gcsError(w, http.StatusNotImplemented, "A rewrite in steps is not implemented: loupe rewrites an object in one call and hands out no rewriteToken.")
		return
	}
	in, err := decodeIncoming(r.Body)
	if err != nil {
		gcsError(w, http.StatusBadRequest, err.Error())
		return
	}
	o, err := s.engine.Copy(r.Context(), caller, bucket, name, func(meta *storage.Object) {
		meta.Bucket, meta.Name = r.PathValue("dstBucket"), r.PathValue("dstObject")
		in.copy(meta)
	})
	if err != nil {
		s.gcsObjectError(w, r, bucket, name, err)
		return
	}
	if strings.Contains(r.URL.Path, "/copyTo/") {
		httpjson.Write(w, http.StatusOK, gcsJSON(r, o))
		return
	}
	size := strconv.FormatInt(o.Size, 10)
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "storage#rewriteResponse", "totalBytesRewritten": size, "objectSize": size, "done": true, "resource": gcsJSON(r, o)})
}

// gcsACL inserts an entry in an object's ACL, as @google-cloud/storage's
// makePublic does. loupe keeps no ACLs (as the official emulator: reads
// are the owner's, or the rules' in strict mode) but answers the entry and
// bumps the object's metageneration, as GCS does.
func (s *Service) gcsACL(w http.ResponseWriter, r *http.Request) {
	bucket, name := r.PathValue("bucket"), r.PathValue("object")
	if !s.gcsOwner(w, r, "storage.objects.setIamPolicy") {
		return
	}
	var in struct {
		Entity string `json:"entity"`
		Role   string `json:"role"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil || in.Entity == "" || in.Role == "" {
		gcsError(w, http.StatusBadRequest, "An ACL entry needs an entity and a role.")
		return
	}
	o, err := s.engine.Touch(bucket, name)
	if err != nil {
		s.gcsObjectError(w, r, bucket, name, err)
		return
	}
	gen := strconv.FormatInt(o.Generation, 10)
	httpjson.Write(w, http.StatusOK, map[string]any{
		"kind": "storage#objectAccessControl", "object": o.Name, "bucket": o.Bucket, "generation": gen,
		"id":       o.Bucket + "/" + o.Name + "/" + gen + "/" + in.Entity,
		"selfLink": "http://" + r.Host + "/storage/v1/b/" + o.Bucket + "/o/" + encodeURIComponent(o.Name) + "/acl/" + encodeURIComponent(in.Entity),
		"entity":   in.Entity, "role": in.Role, "etag": base64.StdEncoding.EncodeToString([]byte(strconv.FormatInt(o.Metageneration, 10))),
	})
}

// isXMLRead claims GET and HEAD requests whose first path segment is a bucket.
func (s *Service) isXMLRead(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	bucket, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return ok && rest != "" && s.engine.Store().BucketExists(bucket)
}

func (s *Service) xmlRead(w http.ResponseWriter, r *http.Request) {
	bucket, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	r.SetPathValue("bucket", bucket) // whose project a token must name
	caller := identity.Owner
	if s.env.Credentials.IsStrict() {
		var err error
		if caller, err = s.caller(r); err != nil || r.Header.Get("Authorization") == "" {
			xmlError(w, http.StatusUnauthorized, "AccessDenied", anonymous("storage.objects.get"))
			return
		}
	}
	o, err := s.engine.Get(r.Context(), caller, bucket, name)
	switch {
	case errs.KindOf(err) == errs.NotFound:
		xmlError(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	case err != nil:
		xmlError(w, httpStatus(err), "AccessDenied", s.clientMessage(err))
		return
	}
	s.serveContent(w, r, o)
}

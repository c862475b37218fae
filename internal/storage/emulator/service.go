// Package emulator serves Storage's engine over HTTP as loupe serve's
// storage service: firebase.go is the Firebase REST API (/v0) the JS SDK
// and the official emulator speak, gcs.go the GCS JSON and XML APIs of
// cloud.google.com/go/storage and @google-cloud/storage. Both are thin:
// they authenticate the caller, call the engine (which judges the rules)
// and write their wire's shape.
package emulator

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
)

// Service is the storage service of loupe serve.
type Service struct {
	env    server.Env
	engine *storage.Engine
	temp   string // the root when in memory, removed at Close
	images imageCache
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
	if env.Logger == nil {
		env.Logger = slog.Default()
	}
	open := storage.NewEngine
	if temp != "" {
		open = storage.NewVolatileEngine // in memory: gone with the process, so never synced
	}
	e, err := open(root)
	if err != nil {
		return nil, err
	}
	return &Service{env: env, engine: e, temp: temp}, nil
}

// SetAuthorizer sets who judges Firebase-API requests (nil allows all).
func (s *Service) SetAuthorizer(a storage.Authorizer) { s.engine.SetAuthorizer(a) }

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
	s.registerFirebase(r)
	s.registerGCS(r)
	r.Admin("POST /internal/reset", s.reset)
	r.HTTP.HandleFunc("GET /_next/image", s.serveImage)
}

// Export implements server.Exporter.
func (s *Service) Export(_ context.Context, dir string) error { return s.engine.Store().ExportTo(dir) }

// Import implements server.Importer: the buckets become the export's.
func (s *Service) Import(_ context.Context, dir string) error {
	return s.engine.Store().ImportFrom(dir)
}

// Open implements server.Opener: it loads --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.ImportDir == "" {
		return nil
	}
	return s.Import(ctx, s.env.ImportDir)
}

// httpStatus is the HTTP status of an engine error, in both APIs.
func httpStatus(err error) int {
	_, _, status := errs.KindOf(err).Status()
	return status
}

// clientMessage is the message of an engine error a client is shown. Errors
// outside the catalogue (which can name files of the data dir) are logged
// and shown as an internal error; so are the causes of Internal ones.
func (s *Service) clientMessage(err error) string {
	var e *errs.Error
	if !errors.As(err, &e) {
		s.env.Logger.Error("storage request failed", "err", err)
		return "Internal error."
	}
	if e.Kind == errs.Internal && e.Cause != nil {
		s.env.Logger.Error("storage request failed", "err", e.Cause)
	}
	return e.Message
}

// invalidName reports whether err is the engine refusing an object or
// bucket name, which each API words its own way.
func invalidName(err error) bool {
	return errs.KindOf(err) == errs.InvalidArgument && errors.Is(err, storage.ErrInvalidName)
}

// caller is who a request comes from, by its Authorization header, checked
// against the project of the request's bucket.
func (s *Service) caller(r *http.Request) (identity.Principal, error) {
	return s.env.Credentials.Authenticate(r.Header.Get("Authorization"), s.bucketProject(r.PathValue("bucket")))
}

// bucketProject is the project a bucket belongs to: the one its name says
// (P.appspot.com, P.firebasestorage.app); for any other bucket, the default
// project in strict mode and none (no project check) in local mode.
func (s *Service) bucketProject(bucket string) string {
	for _, suffix := range []string{".appspot.com", ".firebasestorage.app"} {
		if p, ok := strings.CutSuffix(bucket, suffix); ok && p != "" {
			return p
		}
	}
	if s.env.Credentials.IsStrict() {
		return s.env.ProjectID
	}
	return ""
}

// reset serves POST /internal/reset: every object and upload is removed, as
// the official emulator's reset does.
func (s *Service) reset(w http.ResponseWriter, _ *http.Request) {
	if err := s.engine.Reset(); err != nil {
		s.firebaseError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "OK")
}

func crcBase64(c uint32) string {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, c)
	return base64.StdEncoding.EncodeToString(b)
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func urlQuery(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "?", "%3F", "=", "%3D").Replace(s)
}

// rfc5987 percent-encodes a file name as firebase-tools' Storage emulator
// does for Content-Disposition: encodeURIComponent, then ' ( ) * escaped
// and | ` ^ left as they are.
func rfc5987(name string) string {
	return strings.NewReplacer("%21", "!", "%7C", "|", "%60", "`", "%5E", "^").Replace(encodeURIComponent(name))
}

// serveContent streams an object, honouring Range (206) and conditional
// requests, with the headers firebase-tools' Storage emulator sends (its
// conformance suite, written to pass against production too, checks them):
// Content-Disposition is the object's contentDisposition, else
// "attachment", and the file name. An object stored gzip-compressed goes to a client that does not
// accept gzip decompressed, as GCS's decompressive transcoding does (without
// Content-Length or Content-Encoding, Range ignored), unless its
// Cache-Control says no-transform.
func (s *Service) serveContent(w http.ResponseWriter, r *http.Request, o *storage.Object) {
	o, f, err := s.engine.OpenRead(o)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found.")
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", orDefault(o.ContentType, storage.DefaultContentType))
	h.Set("Content-Disposition", orDefault(o.ContentDisposition, "attachment")+"; filename*="+rfc5987(filepath.Base(o.Name)))
	h.Set("ETag", `"`+hex.EncodeToString(o.MD5)+`"`)
	h.Set("X-Goog-Generation", strconv.FormatInt(o.Generation, 10))
	h.Set("X-Goog-Metageneration", strconv.FormatInt(o.Metageneration, 10))
	h.Set("X-Goog-Hash", "crc32c="+crcBase64(o.CRC32C)+",md5="+base64.StdEncoding.EncodeToString(o.MD5))
	h.Set("X-Goog-Stored-Content-Encoding", orDefault(o.ContentEncoding, "identity"))
	h.Set("X-Goog-Stored-Content-Length", strconv.FormatInt(o.Size, 10))
	if o.CacheControl != "" {
		h.Set("Cache-Control", o.CacheControl)
	}
	for k, v := range o.Metadata {
		if k != storage.TokenKey {
			h.Set("X-Goog-Meta-"+k, v)
		}
	}
	if o.ContentEncoding == "gzip" && !strings.Contains(strings.ToLower(r.Header.Get("Accept-Encoding")), "gzip") &&
		!strings.Contains(strings.ToLower(o.CacheControl), "no-transform") {
		if gz, err := gzip.NewReader(f); err == nil {
			h.Set("Warning", "214 UploadServer gunzipped")
			w.WriteHeader(http.StatusOK)
			if r.Method != http.MethodHead {
				_ = http.NewResponseController(w).Flush() // the size is unknown: chunked, no Content-Length
				_, _ = io.Copy(w, gz)
			}
			return
		}
		_, _ = f.Seek(0, io.SeekStart) // not gzip after all: serve it as stored
	}
	if o.ContentEncoding != "" && o.ContentEncoding != "identity" {
		h.Set("Content-Encoding", o.ContentEncoding)
	}
	http.ServeContent(w, r, "", o.Updated, f)
}

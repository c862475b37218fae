// Package hosting serves the built web app the way Firebase Hosting does:
// files from the public folder, firebase.json rewrites (to a file, or proxied to
// a function), the reserved /__/firebase/init.json, and a single-page-app
// fallback so app routes such as /profile load index.html. Text files go out
// gzip-compressed to clients that accept it, as Hosting's CDN sends them.
package hosting

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/server"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// FunctionProxy serves r with the running function or Cloud Run service
// called name, at r's own path; it writes nothing and returns false when
// none runs.
type FunctionProxy func(w http.ResponseWriter, r *http.Request, name string) bool

// Options configure the hosting service.
type Options struct {
	// Sites are the sites served, the first on every port the others do
	// not have (firebase.json's hosting block, in order).
	Sites []SiteOptions
	// SiteOf is the index in Sites of the site a request is for (by the
	// port it came to); nil means the first for every request.
	SiteOf func(*http.Request) int
	// InitConfig is the web app configuration answered at /__/firebase/init.json.
	InitConfig map[string]string
	// Functions resolves function and Cloud Run rewrites; nil means none run.
	Functions FunctionProxy
}

// SiteOptions are one site's files and rewrites.
type SiteOptions struct {
	// Public is the folder of the built app; "" serves nothing but init.json.
	Public string
	// Rewrites are the site's rewrites, in order.
	Rewrites []config.Rewrite
}

// Service is the hosting service.
type Service struct {
	opts  Options
	sites []*site
}

// site serves one site's files and rewrites.
type site struct {
	files     fs.FS
	rewrites  []rewrite
	functions FunctionProxy

	mu      sync.Mutex
	gzipped map[string]compressed // by file name
}

// compressed is a file's gzip encoding, valid while the file keeps its size and time.
type compressed struct {
	size    int64
	modTime time.Time
	body    []byte
}

type rewrite struct {
	source *regexp.Regexp
	config.Rewrite
}

// New builds the hosting service. A rewrite matches by its source glob, or
// by its RE2 regex anywhere in the path (as Hosting's superstatic matches
// it); one that is not valid is an error, and one with neither (a Dynamic
// Links rewrite) is left out.
func New(opts Options) (*Service, error) {
	s := &Service{opts: opts}
	if len(opts.Sites) == 0 {
		opts.Sites = []SiteOptions{{}}
	}
	for _, so := range opts.Sites {
		st, err := newSite(so, opts.Functions)
		if err != nil {
			return nil, err
		}
		s.sites = append(s.sites, st)
	}
	return s, nil
}

// newSite builds one site's file server and rewrites.
func newSite(opts SiteOptions, functions FunctionProxy) (*site, error) {
	s := &site{functions: functions}
	if opts.Public != "" {
		s.files = os.DirFS(opts.Public)
	}
	for _, rw := range opts.Rewrites {
		var re *regexp.Regexp
		var err error
		switch {
		case rw.Source != "":
			re, err = globRegexp(rw.Source)
		case rw.Regex != "":
			if re, err = regexp.Compile(rw.Regex); err != nil {
				err = fmt.Errorf("hosting rewrite regex %q: %w", rw.Regex, err)
			}
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		s.rewrites = append(s.rewrites, rewrite{re, rw})
	}
	return s, nil
}

// Name implements server.Service.
func (s *Service) Name() string { return "hosting" }

// Register implements server.Service: init.json, then everything no other
// service claimed.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("GET /__/firebase/init.json", s.serveInitConfig)
	r.Fallback(func(*http.Request) bool { return true }, http.HandlerFunc(s.serve))
}

func (s *Service) serveInitConfig(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	httpjson.Write(w, http.StatusOK, s.opts.InitConfig)
}

// serve answers a request with the site it is for.
func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	i := 0
	if s.opts.SiteOf != nil {
		i = s.opts.SiteOf(r)
	}
	if i < 0 || i >= len(s.sites) {
		i = 0
	}
	s.sites[i].serve(w, r)
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && s.isFile(name) {
		s.serveFile(w, r, name)
		return
	}
	for _, rw := range s.rewrites {
		if !rw.source.MatchString(r.URL.Path) {
			continue
		}
		switch {
		case rw.Destination != "":
			s.serveFile(w, r, strings.TrimPrefix(path.Clean("/"+rw.Destination), "/"))
		case rw.Function != "":
			s.proxy(w, r, rw.Function)
		case rw.Run != nil:
			s.proxy(w, r, rw.Run.ServiceID)
		}
		return
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && path.Ext(name) == "" && s.isFile("index.html") {
		s.serveFile(w, r, "index.html")
		return
	}
	http.NotFound(w, r)
}

func (s *site) isFile(name string) bool {
	if s.files == nil || name == "" {
		return false
	}
	info, err := fs.Stat(s.files, name)
	return err == nil && info.Mode().IsRegular()
}

func (s *site) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	if !s.isFile(name) {
		http.NotFound(w, r)
		return
	}
	if strings.HasPrefix(name, "assets/") {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	if compressible(name) {
		w.Header().Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			if body, info, err := s.gzip(name); err == nil {
				w.Header().Set("Content-Encoding", "gzip")
				w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
				http.ServeContent(w, r, name, info.ModTime(), bytes.NewReader(body))
				return
			}
		}
	}
	http.ServeFileFS(w, r, s.files, name)
}

// compressible tells the text files worth compressing.
func compressible(name string) bool {
	switch path.Ext(name) {
	case ".html", ".js", ".mjs", ".css", ".json", ".svg", ".txt", ".map", ".webmanifest":
		return true
	}
	return false
}

// acceptsGzip reads Accept-Encoding: gzip listed without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(coding, "gzip") || coding == "*" {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// gzip returns the file's gzip encoding, compressing it once per version of the file.
func (s *site) gzip(name string) ([]byte, fs.FileInfo, error) {
	info, err := fs.Stat(s.files, name)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	c, ok := s.gzipped[name]
	s.mu.Unlock()
	if ok && c.size == info.Size() && c.modTime.Equal(info.ModTime()) {
		return c.body, info, nil
	}
	raw, err := fs.ReadFile(s.files, name)
	if err != nil {
		return nil, nil, err
	}
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	if s.gzipped == nil {
		s.gzipped = map[string]compressed{}
	}
	s.gzipped[name] = compressed{size: info.Size(), modTime: info.ModTime(), body: out.Bytes()}
	s.mu.Unlock()
	return out.Bytes(), info, nil
}

func (s *site) proxy(w http.ResponseWriter, r *http.Request, function string) {
	if s.functions == nil || !s.functions(w, r, function) {
		http.Error(w, "function "+function+" is not running", http.StatusBadGateway)
	}
}

// globRegexp turns a Firebase Hosting glob into an anchored regexp:
// ** matches across segments, * and ? within one, {a,b} alternatives.
func globRegexp(glob string) (*regexp.Regexp, error) {
	if glob == "" {
		return nil, errors.New("hosting rewrite has an empty source")
	}
	var b strings.Builder
	b.WriteString("^")
	if !strings.HasPrefix(glob, "/") && !strings.HasPrefix(glob, "**") {
		b.WriteString("/")
	}
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '{':
			b.WriteString("(?:")
		case '}':
			b.WriteString(")")
		case ',':
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errors.New("hosting rewrite source " + glob + " is not a valid glob")
	}
	return re, nil
}

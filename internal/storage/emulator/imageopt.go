package emulator

import (
	"bytes"
	"fmt"
	"image"
	_ "image/gif" // decode GIF sources
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decode WebP sources
)

// The image-optimisation path of docs/product-spec.md §7: GET /_next/image?url=…&w=…&q=…
// resizes an image from storage (a download URL with its token) or from the
// hosting public folder to width w (never wider than the original) and
// re-encodes it (PNG stays PNG; others become JPEG at quality q, default 75).
// Results are cached in memory. Bad parameters, or a source that is not an
// image, get 400; a missing source 404.

const (
	maxImageWidth   = 4096
	maxImageSource  = 32 << 20 // bytes read from a source
	imageCacheLimit = 256      // results kept
)

type imageCache struct {
	mu    sync.Mutex
	items map[string]optimised
	order []string
}

type optimised struct {
	contentType string
	data        []byte
}

func (c *imageCache) get(key string) (optimised, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.items[key]
	return o, ok
}

func (c *imageCache) put(key string, o optimised) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]optimised{}
	}
	if _, ok := c.items[key]; !ok {
		c.order = append(c.order, key)
	}
	c.items[key] = o
	for len(c.order) > imageCacheLimit {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
}

func (s *Service) serveImage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	src := q.Get("url")
	width, werr := strconv.Atoi(q.Get("w"))
	quality := 75
	var qerr error
	if q.Get("q") != "" {
		quality, qerr = strconv.Atoi(q.Get("q"))
	}
	switch {
	case src == "":
		http.Error(w, `"url" parameter is required`, http.StatusBadRequest)
		return
	case werr != nil || width < 1 || width > maxImageWidth:
		http.Error(w, fmt.Sprintf(`"w" parameter (width) must be a number between 1 and %d`, maxImageWidth), http.StatusBadRequest)
		return
	case qerr != nil || quality < 1 || quality > 100:
		http.Error(w, `"q" parameter (quality) must be a number between 1 and 100`, http.StatusBadRequest)
		return
	}
	key := fmt.Sprintf("%s|%d|%d", src, width, quality)
	if o, ok := s.images.get(key); ok {
		writeImage(w, o)
		return
	}
	data, status, msg := s.imageSource(src)
	if status != 0 {
		http.Error(w, msg, status)
		return
	}
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		http.Error(w, "The requested resource isn't a valid image.", http.StatusBadRequest)
		return
	}
	if b := img.Bounds(); b.Dx() > width {
		h := max(1, b.Dy()*width/b.Dx())
		dst := image.NewRGBA(image.Rect(0, 0, width, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Over, nil)
		img = dst
	}
	var out bytes.Buffer
	o := optimised{contentType: "image/jpeg"}
	if format == "png" || format == "gif" {
		o.contentType = "image/png"
		err = png.Encode(&out, img)
	} else {
		err = jpeg.Encode(&out, img, &jpeg.Options{Quality: quality})
	}
	if err != nil {
		http.Error(w, "could not encode the image", http.StatusInternalServerError)
		return
	}
	o.data = out.Bytes()
	s.images.put(key, o)
	writeImage(w, o)
}

func writeImage(w http.ResponseWriter, o optimised) {
	w.Header().Set("Content-Type", o.contentType)
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.Header().Set("Content-Length", strconv.Itoa(len(o.data)))
	_, _ = w.Write(o.data)
}

// imageSource reads a storage download URL (token required) or a file of
// the hosting public folder; status is non-zero on failure.
func (s *Service) imageSource(src string) (data []byte, status int, msg string) {
	u, err := url.Parse(src)
	if err != nil {
		return nil, http.StatusBadRequest, `"url" parameter is invalid`
	}
	escaped := u.EscapedPath()
	if rest, ok := strings.CutPrefix(escaped, "/v0/b/"); ok {
		bucket, obj, found := strings.Cut(rest, "/o/")
		name, err := url.PathUnescape(obj)
		if !found || err != nil {
			return nil, http.StatusBadRequest, `"url" parameter is invalid`
		}
		o, f, err := s.engine.Open(bucket, name)
		if err != nil {
			return nil, http.StatusNotFound, "image not found"
		}
		defer f.Close()
		if !slices.Contains(o.Tokens(), u.Query().Get("token")) {
			return nil, http.StatusForbidden, "a valid download token is required"
		}
		data, err = io.ReadAll(io.LimitReader(f, maxImageSource))
		if err != nil {
			return nil, http.StatusInternalServerError, err.Error()
		}
		return data, 0, ""
	}
	if u.IsAbs() || !strings.HasPrefix(u.Path, "/") {
		return nil, http.StatusBadRequest, `"url" parameter must be a local path or a storage download URL`
	}
	public := s.env.Config.PublicDir()
	if public == "" {
		return nil, http.StatusNotFound, "image not found"
	}
	clean := path.Clean(u.Path)
	f, err := os.Open(filepath.Join(public, filepath.FromSlash(clean)))
	if err != nil {
		return nil, http.StatusNotFound, "image not found"
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxImageSource))
	if err != nil {
		return nil, http.StatusInternalServerError, err.Error()
	}
	return data, 0, ""
}

package storage_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

func picture(t *testing.T, w, h int, encode func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestImageOptimisation(t *testing.T) {
	public := t.TempDir()
	pngData := picture(t, 400, 200, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	jpgData := picture(t, 300, 300, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) })
	if err := os.WriteFile(filepath.Join(public, "hero.jpg"), jpgData, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "firebase.json")
	data, _ := json.Marshal(map[string]any{"hosting": map[string]string{"public": public}})
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := loupetest.Start(t, loupetest.Options{InMemory: true, Config: cfg})

	upload := func(name, contentType string, body []byte) string {
		resp, meta := firebase(t, inst, "POST", "?name="+url.QueryEscape(name), bytes.NewReader(body), map[string]string{"Content-Type": contentType})
		var m map[string]any
		_ = json.Unmarshal(meta, &m)
		if resp.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", name, resp.StatusCode, meta)
		}
		return "/v0/b/" + bucket + "/o/" + url.PathEscape(name) + "?alt=media&token=" + m["downloadTokens"].(string)
	}
	avatar := upload("avatars/sam/me.png", "image/png", pngData)
	notImage := upload("docs/notes.txt", "text/plain", []byte("not an image"))

	get := func(src, w, q string) (*http.Response, []byte) {
		v := url.Values{"url": {src}, "w": {w}}
		if q != "" {
			v.Set("q", q)
		}
		resp, err := http.Get(inst.URL + "/_next/image?" + v.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.Bytes()
	}
	resp, body := get(avatar, "100", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("png from storage: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(body)); err != nil || cfg.Width != 100 || cfg.Height != 50 {
		t.Errorf("resized png = %+v, %v; want 100×50", cfg, err)
	}
	resp, body = get("/hero.jpg", "1000", "40")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("jpeg from hosting: %d", resp.StatusCode)
	}
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(body)); err != nil || cfg.Width != 300 {
		t.Errorf("a wider w must not upscale: %+v, %v", cfg, err)
	}
	for _, tc := range []struct {
		src, w, q string
		want      int
	}{
		{"", "100", "", 400},
		{avatar, "0", "", 400},
		{avatar, "5000", "", 400},
		{avatar, "abc", "", 400},
		{avatar, "100", "0", 400},
		{avatar, "100", "101", 400},
		{notImage, "100", "", 400},
		{strings.Replace(avatar, "token=", "token=x", 1), "100", "", 403},
		{"/missing.png", "100", "", 404},
		{"/../../../etc/passwd", "100", "", 404},
		{"https://example.com/a.png", "100", "", 400},
	} {
		if resp, _ := get(tc.src, tc.w, tc.q); resp.StatusCode != tc.want {
			t.Errorf("url=%q w=%q q=%q: %d, want %d", tc.src, tc.w, tc.q, resp.StatusCode, tc.want)
		}
	}
}

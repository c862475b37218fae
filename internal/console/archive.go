package console

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/server"
)

// maxArchive bounds an uploaded export archive.
const maxArchive = 1 << 30

// scratchDir makes a folder for one export or import: under the data dir's
// console folder, or the system's temporary folder when loupe runs in memory.
func (s *Service) scratchDir() (string, error) {
	parent := os.TempDir()
	if s.opts.DataDir != "" {
		parent = filepath.Join(s.opts.DataDir, "console")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(parent, "archive-")
}

// exportArchive answers GET /emulator/v1/export/archive with a gzipped tar
// of a full export (the layout `loupe data export` writes).
func (s *Service) exportArchive(w http.ResponseWriter, r *http.Request) {
	tmp, err := s.scratchDir()
	if err != nil {
		httpjson.Error(w, err)
		return
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "export")
	if err := s.opts.Export(r.Context(), dir); err != nil {
		httpjson.Error(w, err)
		return
	}
	name := "loupe-export-" + time.Now().UTC().Format("20060102-150405") + ".tar.gz"
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if err := writeTarGz(w, dir); err != nil {
		s.opts.Logger.Error("console: export archive", "err", err)
	}
}

// importArchive answers POST /emulator/v1/import/archive: the body is a
// gzipped tar as exportArchive writes; its export replaces every service's
// data. With Accept: application/x-ndjson the answer streams how many of the
// archive's Firestore documents are read (see progressAnswer).
func (s *Service) importArchive(w http.ResponseWriter, r *http.Request) {
	answer := newProgressAnswer(w, r)
	tmp, err := s.scratchDir()
	if err != nil {
		answer.finish(nil, err)
		return
	}
	defer os.RemoveAll(tmp)
	if err := extractTarGz(http.MaxBytesReader(w, r.Body, maxArchive), tmp); err != nil {
		answer.finish(nil, errs.Errorf(errs.InvalidArgument, "import archive: %v", err))
		return
	}
	ctx := r.Context()
	if p := answer.progress(); p != nil {
		ctx = server.WithImportProgress(ctx, p)
	}
	if err := s.opts.Import(ctx, tmp); err != nil {
		// The message names files by their place in the archive, never
		// by the server folder it was unpacked in.
		msg := strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), "")
		answer.finish(nil, errs.New(errs.InvalidArgument, "import archive: "+strings.ReplaceAll(msg, tmp, "the archive")))
		return
	}
	answer.finish(map[string]string{}, nil)
}

// writeTarGz writes the files under dir as a gzipped tar, with paths relative to dir.
func writeTarGz(w io.Writer, dir string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// extractTarGz unpacks a gzipped tar into dir. Only folders and regular files
// are accepted, and only at local paths, so nothing is written outside dir;
// an archive without a file is refused.
func extractTarGz(r io.Reader, dir string) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("not a gzipped tar: %w", err)
	}
	tr := tar.NewReader(gz)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) && files == 0 {
			return errors.New("the archive holds no files: give a .tar.gz written by the console's export")
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("entry %q is outside the archive", h.Name)
		}
		target := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(target, tr); err != nil {
				return err
			}
			files++
		default:
			return fmt.Errorf("entry %q is not a file or folder", h.Name)
		}
	}
}

func writeFile(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(0o644))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Package exports reads and writes exports in the layouts Firebase users
// have: loupe's own (the folder names of firebase-tools, loupe's files), the
// one `firebase emulators:export` writes (Firestore as a managed export of
// LevelDB-log files of entity protos, Auth as JSON, Storage as blobs beside
// JSON metadata), and a production managed export (`gcloud firestore
// export`).
//
// Services read and write only loupe's layout; this package converts in
// between, whole, in a separate folder: an import of a damaged export fails
// before any service's data changes. Storage objects are not copied into
// that folder: their content there links to the export's blobs, so the
// Storage service's import is the one copy.
package exports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/server"
	"github.com/loupe-dev/loupe/internal/storage"
	"github.com/loupe-dev/loupe/internal/stripe"
)

// Export formats.
const (
	// FormatLoupe is loupe's own layout.
	FormatLoupe = server.FormatLoupe
	// FormatFirebase is the layout `firebase emulators:export` writes and
	// `firebase emulators:start --import` reads.
	FormatFirebase = "firebase"
)

// Layouts Prepare reads.
const (
	LayoutLoupe    = "loupe"
	LayoutEmulator = "firebase emulators:export"
	LayoutManaged  = "Firestore managed export"
)

// MetadataFile names the services an export holds (firebase-tools' name).
const MetadataFile = "firebase-export-metadata.json"

const (
	authDir      = "auth_export"
	databaseDir  = "database_export"
	firestoreDir = "firestore_export"
	storageDir   = "storage_export"
	// overallName is the Firestore emulator's name for its export.
	overallName = "firestore_export"
)

// metadata is firebase-export-metadata.json.
type metadata struct {
	Version   string        `json:"version"`
	Firestore *metadataPart `json:"firestore,omitempty"`
	Database  *metadataPart `json:"database,omitempty"`
	Auth      *metadataPart `json:"auth,omitempty"`
	Storage   *metadataPart `json:"storage,omitempty"`
}

type metadataPart struct {
	Version      string `json:"version"`
	Path         string `json:"path"`
	MetadataFile string `json:"metadata_file,omitempty"`
}

// Prepared is an export ready for the services to import: Dir is in loupe's
// layout. Close removes what the conversion wrote.
type Prepared struct {
	// Dir is the folder in loupe's layout.
	Dir string
	// Layout says what the folder was: LayoutLoupe, LayoutEmulator or
	// LayoutManaged.
	Layout string
	// Notes are the parts of the export loupe leaves out, for the caller
	// to warn about.
	Notes []string
	temp  string
}

// Close removes the converted copy, if there is one.
func (p *Prepared) Close() error {
	if p.temp == "" {
		return nil
	}
	return os.RemoveAll(p.temp)
}

// Prepare reads the export at dir in whichever layout it is. An export in
// loupe's layout is returned as it is; one in Firebase's is converted, whole,
// into a temporary folder, with its documents in project (its Storage
// objects' content linked to, not copied: dir must stay until the services
// have imported it). Errors name the file (and for log files the record and
// offset) at fault; a folder in no layout loupe reads is an error listing
// what it holds. An empty folder is an empty export.
func Prepare(dir, project string) (*Prepared, error) { return PrepareWithProgress(dir, project, nil) }

// PrepareWithProgress is Prepare, telling progress (when not nil) how many
// of a loupe-layout export's Firestore documents it has checked.
func PrepareWithProgress(dir, project string, progress firestore.Progress) (*Prepared, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if meta, ok, err := readMetadata(dir); err != nil {
		return nil, err
	} else if ok && meta.Version != FormatLoupe {
		return convert(dir, LayoutEmulator, project, func(tmp string) ([]string, error) {
			return importEmulatorExport(dir, tmp, meta, project)
		})
	} else if ok {
		return loupeLayout(dir, progress)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".overall_export_metadata") {
			overall := filepath.Join(dir, n)
			return convert(dir, LayoutManaged, project, func(tmp string) ([]string, error) {
				return nil, importFirestore(overall, tmp, project)
			})
		}
	}
	if len(names) == 0 || hasLoupeLayout(dir) {
		return loupeLayout(dir, progress)
	}
	hint := ""
	for _, e := range entries {
		if found, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.overall_export_metadata")); e.IsDir() && len(found) > 0 {
			hint = fmt.Sprintf("; %s holds a Firestore export: import that folder", filepath.Join(dir, e.Name()))
			break
		}
	}
	if len(names) > 8 {
		names = append(names[:8], "…")
	}
	return nil, fmt.Errorf("import: %s is in no export layout loupe reads: it holds %s, but no %s (firebase emulators:export or loupe), "+
		"no NAME.overall_export_metadata (gcloud firestore export), and none of %s/, %s/, %s/%s",
		dir, strings.Join(names, ", "), MetadataFile, firestoreDir, authDir, storageDir, hint)
}

// loupeLayout checks an export in loupe's layout, reading every file the
// services will, so that a damaged one fails before any service changes.
func loupeLayout(dir string, progress firestore.Progress) (*Prepared, error) {
	if _, err := firestore.ReadExportWithProgress(dir, progress); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("import: %w", err)
	}
	if _, _, err := storage.ReadExport(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("import: %w", err)
	}
	for _, name := range []string{"accounts.json", "config.json"} {
		path := filepath.Join(dir, authDir, name)
		if data, err := os.ReadFile(path); err == nil && !json.Valid(data) {
			return nil, fmt.Errorf("import: %s is not JSON", path)
		}
	}
	if err := copyDatabase(filepath.Join(dir, databaseDir), ""); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if err := stripe.CheckExport(dir); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return &Prepared{Dir: dir, Layout: LayoutLoupe}, nil
}

// hasLoupeLayout reports whether dir holds a service folder of loupe's layout.
func hasLoupeLayout(dir string) bool {
	for _, p := range []string{filepath.Join(firestoreDir, "documents.jsonl"), filepath.Join(authDir, "accounts.json"), databaseDir} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return true
		}
	}
	return storage.IsExport(dir)
}

func readMetadata(dir string) (*metadata, bool, error) {
	path := filepath.Join(dir, MetadataFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("import: %w", err)
	}
	var m metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, fmt.Errorf("import: %s: %w", path, err)
	}
	return &m, true, nil
}

// convert runs fill on a new temporary folder, removing it on failure.
func convert(dir, layout, project string, fill func(tmp string) ([]string, error)) (*Prepared, error) {
	tmp, err := os.MkdirTemp("", "loupe-import-")
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	notes, err := fill(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("import %s (%s): %w", dir, layout, err)
	}
	return &Prepared{Dir: tmp, Layout: layout, Notes: notes, temp: tmp}, nil
}

// importEmulatorExport converts each service of a firebase-tools export.
func importEmulatorExport(dir, tmp string, meta *metadata, project string) ([]string, error) {
	var notes []string
	if d := meta.Database; d != nil {
		src, err := inside(dir, d.Path)
		if err != nil {
			return nil, err
		}
		if err := copyDatabase(src, filepath.Join(tmp, databaseDir)); err != nil {
			return nil, err
		}
	}
	if f := meta.Firestore; f != nil {
		overall := f.MetadataFile
		if overall == "" {
			overall = filepath.ToSlash(filepath.Join(f.Path, overallName+".overall_export_metadata"))
		}
		path, err := inside(dir, overall)
		if err != nil {
			return nil, err
		}
		if err := importFirestore(path, tmp, project); err != nil {
			return nil, err
		}
	}
	if a := meta.Auth; a != nil {
		src, err := inside(dir, a.Path)
		if err != nil {
			return nil, err
		}
		if err := copyAuth(src, filepath.Join(tmp, authDir)); err != nil {
			return nil, err
		}
	}
	if s := meta.Storage; s != nil {
		src, err := inside(dir, s.Path)
		if err != nil {
			return nil, err
		}
		buckets, objects, err := readFirebaseStorage(src)
		if err != nil {
			return nil, err
		}
		if err := storage.LinkExport(tmp, buckets, objects); err != nil {
			return nil, err
		}
	}
	return notes, nil
}

// importFirestore converts the managed export at overall into tmp.
func importFirestore(overall, tmp, project string) error {
	docs, end, err := readManagedExport(overall)
	if err != nil {
		return err
	}
	if end.IsZero() {
		if info, err := os.Stat(overall); err == nil {
			end = info.ModTime()
		}
	}
	return firestore.WriteExport(tmp, toDocuments(docs, project, end))
}

// copyDatabase copies a Realtime Database export's files (one
// {namespace}.json per namespace, the same in both layouts), checking that
// each is JSON; dst "" only checks.
func copyDatabase(src, dst string) error {
	entries, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if dst != "" {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if !json.Valid(data) {
			return fmt.Errorf("%s is not JSON", filepath.Join(src, e.Name()))
		}
		if dst == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyAuth copies the Auth export's files (accounts.json and config.json,
// the same in both layouts), checking that each is JSON.
func copyAuth(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"accounts.json", "config.json"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !json.Valid(data) {
			return fmt.Errorf("%s is not JSON", filepath.Join(src, name))
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ToFirebase writes the export at src (loupe's layout) into dst in the
// layout `firebase emulators:start --import` reads, with at as the
// Firestore export's time.
func ToFirebase(src, dst string, at time.Time) error {
	return toFirebase(src, dst, at, storage.CopyFile)
}

// toFirebase is ToFirebase with place putting each Storage object's content
// file at its place in dst.
func toFirebase(src, dst string, at time.Time, place func(src, dst string) error) error {
	meta := metadata{Version: FormatLoupe}
	docs, err := firestore.ReadExport(src)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil {
		meta.Firestore = &metadataPart{Version: FormatLoupe, Path: firestoreDir, MetadataFile: firestoreDir + "/" + overallName + ".overall_export_metadata"}
		if err := writeManagedExport(filepath.Join(dst, firestoreDir), overallName, docs, at); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(src, authDir)); err == nil {
		meta.Auth = &metadataPart{Version: FormatLoupe, Path: authDir}
		if err := copyAuth(filepath.Join(src, authDir), filepath.Join(dst, authDir)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(src, databaseDir)); err == nil {
		meta.Database = &metadataPart{Version: FormatLoupe, Path: databaseDir}
		if err := copyDatabase(filepath.Join(src, databaseDir), filepath.Join(dst, databaseDir)); err != nil {
			return err
		}
	}
	buckets, objects, err := storage.ReadExport(src)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil {
		meta.Storage = &metadataPart{Version: FormatLoupe, Path: storageDir}
		if err := writeFirebaseStorage(filepath.Join(dst, storageDir), buckets, objects, place); err != nil {
			return err
		}
	}
	// firebase-tools reads a version other than its own; loupe reads this
	// file's "firebase" marker to tell the layout from its own.
	meta.Version = FormatFirebase + " (loupe)"
	data, _ := json.MarshalIndent(meta, "", "  ")
	return os.WriteFile(filepath.Join(dst, MetadataFile), data, 0o644)
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Converter implements server.Formats for the serving project.
type Converter struct {
	// Project is the project a Firebase export's documents are imported into.
	Project string
	// Warn receives the notes of an import (parts loupe leaves out).
	Warn func(msg string)
}

// Import converts the export at dir into loupe's layout (see Prepare).
func (c Converter) Import(dir string) (string, func(), error) {
	return c.ImportWithProgress(dir, nil)
}

// ImportWithProgress is Import, telling progress (when not nil) how many of
// the export's Firestore documents it has checked (server.ProgressFormats).
func (c Converter) ImportWithProgress(dir string, progress func(done, total int)) (string, func(), error) {
	p, err := PrepareWithProgress(dir, c.Project, progress)
	if err != nil {
		return "", nil, err
	}
	if c.Warn != nil {
		for _, n := range p.Notes {
			c.Warn(n)
		}
	}
	return p.Dir, func() { _ = p.Close() }, nil
}

// Export writes the export at loupeDir into dst in format, moving the
// Storage objects' content out of loupeDir (see server.Formats) rather
// than copying it where both are on one file system.
func (c Converter) Export(loupeDir, dst, format string) error {
	if format == FormatFirebase {
		return toFirebase(loupeDir, dst, time.Now(), moveFile)
	}
	return fmt.Errorf("unknown export format %q (known: %s, %s)", format, FormatLoupe, FormatFirebase)
}

package exports

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/storage"
)

// firebaseObject is an object's metadata file in firebase-tools' Storage
// export (storage_export/metadata/<disk name>.json), its fields in the order
// the Storage emulator writes them.
type firebaseObject struct {
	Name               string            `json:"name"`
	Bucket             string            `json:"bucket"`
	Metageneration     int64             `json:"metageneration"`
	Generation         int64             `json:"generation"`
	ContentType        string            `json:"contentType,omitempty"`
	StorageClass       string            `json:"storageClass,omitempty"`
	ContentDisposition string            `json:"contentDisposition,omitempty"`
	CacheControl       string            `json:"cacheControl,omitempty"`
	ContentLanguage    string            `json:"contentLanguage,omitempty"`
	ContentEncoding    string            `json:"contentEncoding,omitempty"`
	DownloadTokens     []string          `json:"downloadTokens"`
	Etag               string            `json:"etag,omitempty"`
	CustomMetadata     map[string]string `json:"customMetadata,omitempty"`
	TimeCreated        time.Time         `json:"timeCreated"`
	Updated            time.Time         `json:"updated"`
	Size               int64             `json:"size"`
	MD5Hash            string            `json:"md5Hash"`
	// CRC32C is the checksum's decimal digits (firebase-tools' form).
	CRC32C string `json:"crc32c"`
}

// bucketsFile is storage_export/buckets.json.
type bucketsFile struct {
	Buckets []struct {
		ID string `json:"id"`
	} `json:"buckets"`
}

const tokenKey = "firebaseStorageDownloadTokens"

// readFirebaseStorage reads firebase-tools' Storage export at dir: the
// buckets of buckets.json and every object of metadata/, whose content is at
// the same relative path under blobs/.
func readFirebaseStorage(dir string) ([]string, []storage.ExportedObject, error) {
	var bf bucketsFile
	data, err := os.ReadFile(filepath.Join(dir, "buckets.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if err == nil {
		if err := json.Unmarshal(data, &bf); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "buckets.json"), err)
		}
	}
	seen := map[string]bool{}
	var buckets []string
	for _, b := range bf.Buckets {
		if !seen[b.ID] {
			seen[b.ID] = true
			buckets = append(buckets, b.ID)
		}
	}
	var objects []storage.ExportedObject
	metaDir, blobDir := filepath.Join(dir, "metadata"), filepath.Join(dir, "blobs")
	err = filepath.WalkDir(metaDir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == metaDir {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(metaDir, path)
		blobRel, ok := strings.CutSuffix(rel, ".json")
		if !ok {
			return fmt.Errorf("%s: not a metadata file (.json)", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var fo firebaseObject
		if err := json.Unmarshal(data, &fo); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		o, err := fo.object()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		content := filepath.Join(blobDir, blobRel)
		if _, err := os.Stat(content); err != nil {
			// Older firebase-tools wrote the metadata file's name escaped.
			if unescaped, uerr := url.PathUnescape(blobRel); uerr == nil {
				content = filepath.Join(blobDir, unescaped)
			}
		}
		info, err := os.Stat(content)
		if err != nil {
			return fmt.Errorf("%s: its content %s is missing", path, filepath.Join(blobDir, blobRel))
		}
		if info.Size() != o.Size {
			return fmt.Errorf("%s: size %d, but its content %s holds %d bytes", path, o.Size, content, info.Size())
		}
		if !seen[o.Bucket] {
			seen[o.Bucket] = true
			buckets = append(buckets, o.Bucket)
		}
		objects = append(objects, storage.ExportedObject{Object: o, Content: content})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(buckets)
	return buckets, objects, nil
}

// moveFile moves the regular file src to dst, or copies it where it cannot
// be moved (another file system; src a link).
func moveFile(src, dst string) error {
	if info, err := os.Lstat(src); err == nil && info.Mode().IsRegular() && os.Rename(src, dst) == nil {
		return nil
	}
	return storage.CopyFile(src, dst)
}

// object is the metadata as loupe keeps it.
func (fo *firebaseObject) object() (storage.Object, error) {
	md5, err := base64.StdEncoding.DecodeString(fo.MD5Hash)
	if err != nil || len(md5) != 16 {
		return storage.Object{}, fmt.Errorf("md5Hash %q is not a base64 MD5", fo.MD5Hash)
	}
	crc, err := strconv.ParseUint(fo.CRC32C, 10, 32)
	if err != nil {
		return storage.Object{}, fmt.Errorf("crc32c %q is not a decimal CRC32C", fo.CRC32C)
	}
	o := storage.Object{
		Bucket: fo.Bucket, Name: windowsName(fo.Name), Size: fo.Size,
		ContentType: fo.ContentType, CacheControl: fo.CacheControl, ContentDisposition: fo.ContentDisposition,
		ContentEncoding: fo.ContentEncoding, ContentLanguage: fo.ContentLanguage,
		MD5: md5, CRC32C: uint32(crc),
		Generation: fo.Generation, Metageneration: max(fo.Metageneration, 1),
		Created: fo.TimeCreated, Updated: fo.Updated,
	}
	if len(fo.CustomMetadata) > 0 || len(fo.DownloadTokens) > 0 {
		o.Metadata = map[string]string{}
		for k, v := range fo.CustomMetadata {
			o.Metadata[k] = v
		}
		if len(fo.DownloadTokens) > 0 {
			o.Metadata[tokenKey] = strings.Join(fo.DownloadTokens, ",")
		}
	}
	return o, nil
}

// windowsName is an object name as firebase-tools imports it: one written
// on Windows, whose first separator is a backslash, has its backslashes
// turned into slashes.
func windowsName(name string) string {
	if i := strings.IndexAny(name, `/\`); i >= 0 && name[i] == '\\' {
		return strings.ReplaceAll(name, `\`, "/")
	}
	return name
}

// writeFirebaseStorage writes buckets and objects as firebase-tools' Storage
// export at dir, place putting each object's content file in blobs/. Each
// object's disk name is derived from its bucket and name, so the same
// content always exports to the same files.
func writeFirebaseStorage(dir string, buckets []string, objects []storage.ExportedObject, place func(src, dst string) error) error {
	metaDir, blobDir := filepath.Join(dir, "metadata"), filepath.Join(dir, "blobs")
	for _, d := range []string{metaDir, blobDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var bf bucketsFile
	for _, b := range buckets {
		bf.Buckets = append(bf.Buckets, struct {
			ID string `json:"id"`
		}{b})
	}
	if bf.Buckets == nil {
		bf.Buckets = bf.Buckets[:0]
	}
	data, _ := json.MarshalIndent(bf, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "buckets.json"), data, 0o644); err != nil {
		return err
	}
	for _, o := range objects {
		sum := sha256.Sum256([]byte(o.Bucket + "\x00" + o.Name))
		disk := hex.EncodeToString(sum[:16])
		if err := place(o.Content, filepath.Join(blobDir, disk)); err != nil {
			return err
		}
		fo := firebaseObject{
			Name: o.Name, Bucket: o.Bucket, Metageneration: o.Metageneration, Generation: o.Generation,
			ContentType: o.ContentType, StorageClass: "STANDARD", ContentDisposition: o.ContentDisposition,
			CacheControl: o.CacheControl, ContentLanguage: o.ContentLanguage, ContentEncoding: o.ContentEncoding,
			DownloadTokens: o.Tokens(), TimeCreated: o.Created, Updated: o.Updated, Size: o.Size,
			MD5Hash: base64.StdEncoding.EncodeToString(o.MD5), CRC32C: strconv.FormatUint(uint64(o.CRC32C), 10),
		}
		if fo.DownloadTokens == nil {
			fo.DownloadTokens = []string{}
		}
		for k, v := range o.Metadata {
			if k == tokenKey {
				continue
			}
			if fo.CustomMetadata == nil {
				fo.CustomMetadata = map[string]string{}
			}
			fo.CustomMetadata[k] = v
		}
		data, err := json.MarshalIndent(fo, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(metaDir, disk+".json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

package payments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/loupe-dev/loupe/functions/internal/mp4"
)

// Videos reads the requests' videos (the default Cloud Storage bucket).
type Videos interface {
	// Attrs is an object's size, content type and custom metadata.
	Attrs(ctx context.Context, name string) (size int64, contentType string, metadata map[string]string, err error)
	// ReaderAt reads the object's bytes at any offset.
	ReaderAt(ctx context.Context, name string) io.ReaderAt
}

// Bucket is Videos over a Cloud Storage bucket.
type Bucket struct{ *storage.BucketHandle }

// Attrs implements Videos.
func (b Bucket) Attrs(ctx context.Context, name string) (int64, string, map[string]string, error) {
	a, err := b.Object(name).Attrs(ctx)
	if err != nil {
		return 0, "", nil, err
	}
	return a.Size, a.ContentType, a.Metadata, nil
}

// ReaderAt implements Videos with one range read per call.
func (b Bucket) ReaderAt(ctx context.Context, name string) io.ReaderAt {
	return rangeReader{ctx, b.Object(name)}
}

type rangeReader struct {
	ctx context.Context
	obj *storage.ObjectHandle
}

func (r rangeReader) ReadAt(p []byte, off int64) (int, error) {
	rd, err := r.obj.NewRangeReader(r.ctx, off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	return io.ReadFull(rd, p)
}

// errUnplayable is a video that is not what its type says.
var errUnplayable = errors.New("the video is not a playable MP4 or MOV file")

// clipLength is how long a request's video runs, in seconds: read from the
// movie header of an MP4 or MOV, else the length the app recorded at upload
// (custom metadata durationSeconds). known is false when neither says;
// errUnplayable when an MP4 or MOV is not one.
func clipLength(ctx context.Context, videos Videos, name string) (seconds float64, known bool, err error) {
	size, contentType, meta, err := videos.Attrs(ctx, name)
	if err != nil {
		return 0, false, fmt.Errorf("read video %s: %w", name, err)
	}
	ext := strings.ToLower(path.Ext(name))
	if contentType == "video/mp4" || contentType == "video/quicktime" || contentType == "video/x-m4v" ||
		ext == ".mp4" || ext == ".mov" || ext == ".m4v" {
		d, err := mp4.Duration(videos.ReaderAt(ctx, name), size)
		if errors.Is(err, mp4.ErrNotMP4) {
			return 0, false, errUnplayable
		}
		if err != nil {
			return 0, false, fmt.Errorf("probe video %s: %w", name, err)
		}
		return d, true, nil
	}
	if d, err := strconv.ParseFloat(meta["durationSeconds"], 64); err == nil && d >= 0 {
		return d, true, nil
	}
	return 0, false, nil
}

// clock writes seconds as the app's player does: 1:30, 1:02:03.
func clock(seconds float64) string {
	s := int(seconds)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

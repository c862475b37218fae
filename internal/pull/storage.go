package pull

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// object is one Storage object a pull read: its attributes and the file
// its content was copied to.
type object struct {
	attrs *storage.ObjectAttrs
	file  string
}

// objectSet is the objects a pull read, with their content in files of a
// temporary folder (so that nothing is written before all is read, with
// memory bounded whatever the objects' sizes).
type objectSet struct {
	bucket  string
	objects []*object
	bytes   int64
	dir     string
}

func (s *objectSet) cleanup() { _ = os.RemoveAll(s.dir) }

// storageClient is a Cloud Storage client of an emulator at host (loupe's
// GCS JSON API, where every call is the owner's in local mode), or of
// production with opts.
func storageClient(ctx context.Context, host string, opts []option.ClientOption) (*storage.Client, error) {
	if host != "" {
		opts = []option.ClientOption{option.WithEndpoint("http://" + host + "/storage/v1/"), option.WithoutAuthentication()}
	}
	return storage.NewClient(ctx, opts...)
}

// readStorage lists the objects under each prefix of o's bucket and copies
// their content to files.
func readStorage(ctx context.Context, o *Options, p *progress) (*objectSet, error) {
	bucket := o.Bucket
	if bucket == "" {
		bucket = o.From.Project + ".appspot.com"
	}
	client, err := storageClient(ctx, o.From.Emulator, o.from)
	if err != nil {
		return nil, fmt.Errorf("storage client: %w", err)
	}
	defer client.Close()
	removeStaleCopies(os.TempDir())
	dir, err := os.MkdirTemp("", fmt.Sprintf("loupe-pull-%d-", os.Getpid()))
	if err != nil {
		return nil, err
	}
	set := &objectSet{bucket: bucket, dir: dir}
	seen := map[string]bool{}
	b := client.Bucket(bucket)
	for _, prefix := range o.Prefixes {
		for page, token := []*storage.ObjectAttrs(nil), ""; ; page = page[:0] {
			if token, err = listPage(ctx, b, prefix, token, &page); err != nil {
				return set, fmt.Errorf("list gs://%s/%s: %w", bucket, prefix, err)
			}
			if err := readObjects(ctx, o, b, set, seen, page, p); err != nil {
				return set, err
			}
			if token == "" {
				break
			}
		}
	}
	p.line("storage: read %d objects (%s) of gs://%s", len(set.objects), byteCount(set.bytes), bucket)
	return set, nil
}

// listPage reads into page one page of the objects under prefix from
// token on, within readTimeout, and returns the next page's token ("" after
// the last).
func listPage(ctx context.Context, b *storage.BucketHandle, prefix, token string, page *[]*storage.ObjectAttrs) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	return iterator.NewPager(b.Objects(ctx, &storage.Query{Prefix: prefix}), 1000, token).NextPage(page)
}

// readObjects adds the objects of page not seen before to set, with their
// content unless o is a dry run.
func readObjects(ctx context.Context, o *Options, b *storage.BucketHandle, set *objectSet, seen map[string]bool, page []*storage.ObjectAttrs, p *progress) error {
	for _, attrs := range page {
		if seen[attrs.Name] {
			continue
		}
		seen[attrs.Name] = true
		ob := &object{attrs: attrs, file: filepath.Join(set.dir, strconv.Itoa(len(set.objects)))}
		if !o.DryRun {
			if err := download(ctx, b, ob); err != nil {
				return fmt.Errorf("read gs://%s/%s: %w", set.bucket, attrs.Name, err)
			}
		}
		set.objects = append(set.objects, ob)
		set.bytes += attrs.Size
		p.tick("storage: %d objects read (%s)", len(set.objects), byteCount(set.bytes))
	}
	return nil
}

// removeStaleCopies removes the object copies that pulls which ended
// without cleaning up (killed) left in dir: those folders whose process
// (loupe-pull-PID-…) no longer runs.
func removeStaleCopies(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		var pid int
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "loupe-pull-") {
			continue
		}
		if _, err := fmt.Sscanf(strings.TrimPrefix(e.Name(), "loupe-pull-"), "%d-", &pid); err != nil || pid <= 0 || running(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// download copies the generation of ob that was listed into its file, as
// stored (no decompression), and checks it got every byte.
func download(ctx context.Context, b *storage.BucketHandle, ob *object) error {
	ctx, cancel := context.WithTimeout(ctx, readTimeout+time.Duration(ob.attrs.Size/minDownloadRate)*time.Second)
	defer cancel()
	r, err := b.Object(ob.attrs.Name).Generation(ob.attrs.Generation).ReadCompressed(true).NewReader(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(ob.file)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != ob.attrs.Size {
		err = fmt.Errorf("got %d of its %d bytes", n, ob.attrs.Size)
	}
	return err
}

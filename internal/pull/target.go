package pull

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"cloud.google.com/go/storage"
	"google.golang.org/protobuf/encoding/protojson"
)

// maxBatchBytes bounds one restore request's body (loupe takes 64 MiB).
const maxBatchBytes = 8 << 20

// maxAccountBatch is how many accounts one batchCreate takes.
const maxAccountBatch = 1000

// targetClient writes to a running loupe as the owner: documents through
// its restore endpoint, accounts through the admin API's batchCreate,
// objects through the GCS JSON API.
type targetClient struct {
	t    Target
	base string
}

func newTargetClient(t Target) *targetClient {
	return &targetClient{t: t, base: "http://" + t.Host}
}

// ErrStrict is the refusal to write into a loupe that runs with
// --strict-credentials, which others may rely on.
var ErrStrict = errors.New("the loupe at this address runs with --strict-credentials: pull writes into it only with --force (and --emulator set to its admin port)")

// checkWritable refuses a loupe that runs with --strict-credentials unless
// forced.
func (c *targetClient) checkWritable(ctx context.Context) error {
	var health struct {
		Credentials string `json:"credentials"`
	}
	if err := c.call(ctx, http.MethodGet, "/healthz", nil, &health); err != nil {
		return err
	}
	if health.Credentials == "strict" && !c.t.Force {
		return ErrStrict
	}
	return nil
}

// notFound is a GET or DELETE of something the target does not hold.
type notFound struct{ path string }

func (e *notFound) Error() string { return e.path + ": not found" }

// call sends a request as the owner and decodes a JSON answer into out.
func (c *targetClient) call(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach loupe at %s", c.t.Host)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode == http.StatusNotFound && method != http.MethodPost {
		return &notFound{path}
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			return errors.New(e.Error.Message)
		}
		return fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// maxBatchDocs is how many documents one restore request writes at most:
// as many as loupe commits at once (MaxWritesPerCommit), so that each batch
// is stored whole or not at all.
const maxBatchDocs = 500

// documentWriter writes the documents a pull reads into the target's
// database (of the target's project) as they come, in restore requests of
// at most maxBatchDocs documents and about maxBatchBytes, each of which
// saves with its documents the pull's checkpoint (where its reader stands
// after them).
type documentWriter struct {
	c        *targetClient
	path     string // the restore endpoint
	from, to string // the source's and the target's documents
	pull     string // the pull's id
	red      *redactor
	at       func() (*firestoreCheckpoint, error)
	p        *progress

	batch   []json.RawMessage
	size    int
	before  int // documents written by earlier runs
	written int // documents written by this run
	changed int // of those, how many changed
}

func (c *targetClient) documentWriter(o *Options, red *redactor, p *progress) *documentWriter {
	return &documentWriter{c: c, red: red, p: p, pull: o.pullID(),
		path: c.databasePath(o) + "/documents:restore",
		from: "projects/" + o.From.Project + "/databases/" + o.Database + "/documents",
		to:   "projects/" + c.t.Project + "/databases/" + o.Database + "/documents"}
}

// databasePath is the path of the emulator endpoints of the target's
// database.
func (c *targetClient) databasePath(o *Options) string {
	return "/emulator/v1/projects/" + c.t.Project + "/databases/" + o.Database
}

// add redacts d, moves it to the target's project and writes it with the
// batch it fills.
func (w *documentWriter) add(ctx context.Context, d *pb.Document) error {
	w.red.document(d)
	if w.from != w.to {
		d = moveDocument(d, w.from, w.to)
	}
	raw, err := protojson.Marshal(d)
	if err != nil {
		return err
	}
	w.batch = append(w.batch, raw)
	w.size += len(raw)
	if len(w.batch) >= maxBatchDocs || w.size >= maxBatchBytes {
		return w.flush(ctx, false)
	}
	return nil
}

// flush writes the batch with the checkpoint; done says it is the pull's
// last.
func (w *documentWriter) flush(ctx context.Context, done bool) error {
	cp, err := w.at()
	if err != nil {
		return err
	}
	cp.Documents, cp.Done = w.before+w.written+len(w.batch), done
	body, err := json.Marshal(map[string]any{"documents": w.batch, "checkpoint": map[string]any{"pull": w.pull, "state": cp}})
	if err != nil {
		return err
	}
	var out struct {
		Changed int `json:"changed"`
	}
	if err := w.c.call(ctx, http.MethodPost, w.path, body, &out); err != nil {
		return err
	}
	w.changed += out.Changed
	w.written += len(w.batch)
	w.batch, w.size = w.batch[:0], 0
	w.p.tick("firestore: %d documents written", w.before+w.written)
	return nil
}

// checkpoint reads the pull's checkpoint from the target: nil when it has
// none (the pull never ran, or finished).
func (c *targetClient) checkpoint(ctx context.Context, o *Options) (*firestoreCheckpoint, error) {
	var cp firestoreCheckpoint
	err := c.call(ctx, http.MethodGet, c.databasePath(o)+"/pulls/"+o.pullID(), nil, &cp)
	if errors.As(err, new(*notFound)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the checkpoint of an earlier run: %w", err)
	}
	if err := cp.decode(); err != nil {
		return nil, fmt.Errorf("the checkpoint of an earlier run: %w", err)
	}
	return &cp, nil
}

// forgetCheckpoint drops the pull's checkpoint once the whole pull is done,
// so that running it again reads everything afresh.
func (c *targetClient) forgetCheckpoint(ctx context.Context, o *Options) error {
	err := c.call(ctx, http.MethodDelete, c.databasePath(o)+"/pulls/"+o.pullID(), nil, nil)
	if errors.As(err, new(*notFound)) {
		return nil
	}
	return err
}

// moveDocument is d with its name and the references in its fields moved
// from one project's documents to another's.
func moveDocument(d *pb.Document, from, to string) *pb.Document {
	out := &pb.Document{Name: to + strings.TrimPrefix(d.Name, from), Fields: map[string]*pb.Value{},
		CreateTime: d.CreateTime, UpdateTime: d.UpdateTime}
	for k, v := range d.Fields {
		out.Fields[k] = mapValue(v, func(v *pb.Value) *pb.Value {
			if ref, ok := v.ValueType.(*pb.Value_ReferenceValue); ok && strings.HasPrefix(ref.ReferenceValue, from) {
				return refValue(to + strings.TrimPrefix(ref.ReferenceValue, from))
			}
			return v
		})
	}
	return out
}

// mapValue is v with f applied to every value in it (maps and arrays
// copied, leaves replaced by f's result).
func mapValue(v *pb.Value, f func(*pb.Value) *pb.Value) *pb.Value {
	switch x := v.ValueType.(type) {
	case *pb.Value_MapValue:
		m := &pb.MapValue{Fields: make(map[string]*pb.Value, len(x.MapValue.Fields))}
		for k, e := range x.MapValue.Fields {
			m.Fields[k] = mapValue(e, f)
		}
		return &pb.Value{ValueType: &pb.Value_MapValue{MapValue: m}}
	case *pb.Value_ArrayValue:
		a := &pb.ArrayValue{Values: make([]*pb.Value, len(x.ArrayValue.Values))}
		for i, e := range x.ArrayValue.Values {
			a.Values[i] = mapValue(e, f)
		}
		return &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: a}}
	}
	return f(v)
}

// writeAccounts imports the accounts into the target's project through
// batchCreate, with the source's hash parameters. Accounts that carry an
// emulator's own fake hash (a source that is itself an emulator) go
// without them, as an emulator export's accounts do.
func (c *targetClient) writeAccounts(ctx context.Context, set *accountSet, p *progress) error {
	var hashed, plain []*account
	for _, a := range set.users {
		if set.hash != nil && a.PasswordHash != "" && !strings.HasPrefix(a.PasswordHash, "fakeHash:") {
			hashed = append(hashed, a)
		} else {
			plain = append(plain, a)
		}
	}
	path := "/identitytoolkit.googleapis.com/v1/projects/" + c.t.Project + "/accounts:batchCreate"
	written := 0
	for _, group := range []struct {
		users []*account
		hash  *hashConfig
	}{{hashed, set.hash}, {plain, nil}} {
		for start := 0; start < len(group.users); start += maxAccountBatch {
			users := group.users[start:min(start+maxAccountBatch, len(group.users))]
			req := map[string]any{"users": users}
			if h := group.hash; h != nil {
				maps.Copy(req, map[string]any{"hashAlgorithm": h.Algorithm, "signerKey": h.SignerKey,
					"saltSeparator": h.SaltSeparator, "rounds": h.Rounds, "memoryCost": h.MemoryCost})
			}
			body, err := json.Marshal(req)
			if err != nil {
				return err
			}
			var out struct {
				Error []struct {
					Index   int    `json:"index"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := c.call(ctx, http.MethodPost, path, body, &out); err != nil {
				return err
			}
			if len(out.Error) > 0 {
				var msgs []string
				for _, e := range out.Error {
					msgs = append(msgs, users[e.Index].LocalID+": "+e.Message)
				}
				return fmt.Errorf("%d accounts were refused: %s", len(msgs), strings.Join(msgs, "; "))
			}
			written += len(users)
			p.tick("auth: %d of %d accounts written", written, len(set.users))
		}
	}
	p.line("auth: wrote %d accounts", written)
	return nil
}

// writeObjects uploads the objects that the target does not already hold
// as they are, and returns how many it uploaded.
func (c *targetClient) writeObjects(ctx context.Context, set *objectSet, p *progress) (int, error) {
	client, err := storageClient(ctx, c.t.Host, nil)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	b := client.Bucket(set.bucket)
	changed := 0
	var bytes int64
	for _, ob := range set.objects {
		have, err := b.Object(ob.attrs.Name).Attrs(ctx)
		if err == nil && sameObject(have, ob.attrs) {
			continue
		}
		if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
			return changed, fmt.Errorf("gs://%s/%s: %w", set.bucket, ob.attrs.Name, err)
		}
		if err := upload(ctx, b, ob); err != nil {
			return changed, fmt.Errorf("gs://%s/%s: %w", set.bucket, ob.attrs.Name, err)
		}
		changed++
		bytes += ob.attrs.Size
		p.tick("storage: %d objects written (%s)", changed, byteCount(bytes))
	}
	p.line("storage: wrote %d objects (%d changed, %s)", len(set.objects), changed, byteCount(bytes))
	return changed, nil
}

// sameObject reports whether have is the object want: the same content
// (MD5) and metadata.
func sameObject(have, want *storage.ObjectAttrs) bool {
	return bytes.Equal(have.MD5, want.MD5) && have.ContentType == want.ContentType &&
		have.ContentEncoding == want.ContentEncoding && have.CacheControl == want.CacheControl &&
		have.ContentDisposition == want.ContentDisposition && have.ContentLanguage == want.ContentLanguage &&
		maps.Equal(have.Metadata, want.Metadata)
}

// upload streams ob's file to the target in chunks (a resumable upload
// past the writer's chunk size).
func upload(ctx context.Context, b *storage.BucketHandle, ob *object) error {
	f, err := os.Open(ob.file)
	if err != nil {
		return err
	}
	defer f.Close()
	w := b.Object(ob.attrs.Name).NewWriter(ctx)
	w.ContentType = ob.attrs.ContentType
	w.ContentEncoding = ob.attrs.ContentEncoding
	w.ContentDisposition = ob.attrs.ContentDisposition
	w.ContentLanguage = ob.attrs.ContentLanguage
	w.CacheControl = ob.attrs.CacheControl
	w.Metadata = ob.attrs.Metadata
	w.ChunkSize = 8 << 20
	if _, err := io.Copy(w, f); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

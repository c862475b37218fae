package pull

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	firestoreapi "cloud.google.com/go/firestore/apiv1"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// pageSize is how many documents one query of a pull asks for.
const pageSize = 500

// documentSink takes the documents a pull reads, one at a time, in the
// order it reads them: the target's writer, or a dry run's counter.
type documentSink interface {
	add(ctx context.Context, d *pb.Document) error
}

// frame is where the reading of one collection stands: after the document
// doc (at cursor after), the read-th of the collection, and, while the
// subcollections of doc are read, the one being read (sub).
type frame struct {
	after *pb.Cursor
	doc   string
	read  int
	sub   string
}

// firestoreReader walks the documents a pull copies through the Firestore
// API's own client (which returns create and update times): each
// collection in pages, each document followed by its subcollections when
// the pull is recursive, all at one read time. Its position (stack) says
// where it is, so that a later run can continue from it.
type firestoreReader struct {
	c        *firestoreapi.Client
	o        *Options
	root     string // the source's projects/P/databases/D/documents
	readTime *timestamppb.Timestamp
	out      documentSink
	p        *progress

	target int     // the --collection, then --collection-group, being read
	stack  []frame // from the target's collection down to the one being read
	read   int     // documents read in this run
}

// firestoreTarget is one collection (or collection group) a pull names.
type firestoreTarget struct {
	parent, id string
	group      bool
}

// newFirestoreReader connects to the source's Firestore; close closes it.
func newFirestoreReader(ctx context.Context, o *Options, p *progress) (r *firestoreReader, close func() error, err error) {
	opts := slices.Clone(o.from)
	if o.From.Emulator != "" {
		opts = append(opts, option.WithEndpoint(o.From.Emulator),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	c, err := firestoreapi.NewClient(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("firestore client: %w", err)
	}
	root := "projects/" + o.From.Project + "/databases/" + o.Database + "/documents"
	return &firestoreReader{c: c, o: o, root: root, p: p}, c.Close, nil
}

// targets are the collections and collection groups o names, checked.
func (o *Options) firestoreTargets(root string) ([]firestoreTarget, error) {
	var out []firestoreTarget
	for _, path := range o.Collections {
		path = strings.Trim(path, "/")
		segs := strings.Split(path, "/")
		if path == "" || len(segs)%2 == 0 {
			return nil, fmt.Errorf("--collection %q is not a collection path (a collection id, or DOC_PATH/collection)", path)
		}
		parent := root
		if len(segs) > 1 {
			parent = root + "/" + strings.Join(segs[:len(segs)-1], "/")
		}
		out = append(out, firestoreTarget{parent: parent, id: segs[len(segs)-1]})
	}
	for _, id := range o.CollectionGroups {
		if id == "" || strings.Contains(id, "/") {
			return nil, fmt.Errorf("--collection-group %q is not a collection id", id)
		}
		out = append(out, firestoreTarget{parent: root, id: id, group: true})
	}
	return out, nil
}

// outgoing is ctx with the metadata every call to the source carries.
func (r *firestoreReader) outgoing(ctx context.Context) context.Context {
	md := metadata.Pairs("google-cloud-resource-prefix", "projects/"+r.o.From.Project+"/databases/"+r.o.Database)
	if r.o.From.Emulator != "" {
		// The owner credential every Admin SDK sends to an emulator.
		md = metadata.Join(md, metadata.Pairs("authorization", "Bearer owner"))
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// run reads every document o names into r.out, from the position at on
// (nil: from the start).
func (r *firestoreReader) run(ctx context.Context, at *firestoreCheckpoint) error {
	targets, err := r.o.firestoreTargets(r.root)
	if err != nil {
		return err
	}
	ctx = r.outgoing(ctx)
	limit := r.o.Limit
	if r.o.Sample > 0 && (limit == 0 || r.o.Sample < limit) {
		limit = r.o.Sample
	}
	for i, t := range targets {
		var resume []frame
		if at != nil {
			if i < at.Target {
				continue
			}
			if i == at.Target {
				resume = at.stack
			}
		}
		r.target = i
		if err := r.collection(ctx, 0, t.parent, t.id, t.group, r.o.Where, r.o.OrderBy, limit, resume); err != nil {
			kind := "collection"
			if t.group {
				kind = "collection group"
			}
			return fmt.Errorf("%s %s: %w", kind, r.rel(t.parent+"/"+t.id), err)
		}
	}
	return nil
}

// rel is name relative to the source's documents.
func (r *firestoreReader) rel(name string) string {
	return strings.TrimPrefix(strings.TrimPrefix(name, r.root), "/")
}

// collection reads the documents of a collection (or, with group, of every
// collection of that id under parent) that pass where, in order, up to
// limit (0: all), page by page, each followed by its subcollections when
// the pull is recursive. resume, when set, is where an earlier run stood
// in it (its frame, then those of the subcollections below).
func (r *firestoreReader) collection(ctx context.Context, depth int, parent, id string, group bool, where []Filter, orders []Order, limit int, resume []frame) error {
	order := effectiveOrder(orders, where)
	q := &pb.StructuredQuery{
		From:    []*pb.StructuredQuery_CollectionSelector{{CollectionId: id, AllDescendants: group}},
		Where:   whereOf(where, r.root, r.rel(parent+"/"+id)),
		OrderBy: orderOf(order),
	}
	var f frame
	if len(resume) > 0 {
		f = resume[0]
	}
	r.stack = append(r.stack[:depth], f)
	// A document an earlier run stopped at may not have had all of its
	// subcollections read: (the rest of) them first.
	if r.o.Recursive && f.doc != "" {
		if err := r.subcollections(ctx, depth, f.doc, f.sub, resume[1:]); err != nil {
			return err
		}
	}
	q.StartAt = f.after
	for limit == 0 || r.stack[depth].read < limit {
		size := pageSize
		if limit > 0 && limit-r.stack[depth].read < size {
			size = limit - r.stack[depth].read
		}
		q.Limit = wrapperspb.Int32(int32(size))
		page, err := r.runQuery(ctx, parent, q)
		if err != nil {
			return err
		}
		for _, d := range page {
			r.stack = r.stack[:depth+1]
			r.stack[depth] = frame{after: cursorAfter(d, order), doc: d.Name, read: r.stack[depth].read + 1}
			r.read++
			if err := r.out.add(ctx, d); err != nil {
				return err
			}
			r.p.tick("firestore: %d documents read", r.read)
			if r.o.Recursive {
				if err := r.subcollections(ctx, depth, d.Name, "", nil); err != nil {
					return err
				}
			}
		}
		if len(page) < size {
			break
		}
		q.StartAt = r.stack[depth].after
	}
	return nil
}

// subcollections reads every collection under the document doc (Sample
// documents of each, when set), recursively, in the order of their ids
// from the id from on; resume is where an earlier run stood in from.
func (r *firestoreReader) subcollections(ctx context.Context, depth int, doc, from string, resume []frame) error {
	ids, err := r.collectionIDs(ctx, doc)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id < from {
			continue
		}
		r.stack = r.stack[:depth+1]
		r.stack[depth].sub = id
		var at []frame
		if id == from {
			at = resume
		}
		if err := r.collection(ctx, depth+1, doc, id, false, nil, nil, r.o.Sample, at); err != nil {
			return fmt.Errorf("collection %s/%s: %w", r.rel(doc), id, err)
		}
	}
	return nil
}

// collectionIDs lists the ids of the collections under doc, sorted.
func (r *firestoreReader) collectionIDs(ctx context.Context, doc string) ([]string, error) {
	var ids []string
	err := r.atReadTime(ctx, func(ctx context.Context) error {
		ids = ids[:0]
		req := &pb.ListCollectionIdsRequest{Parent: doc}
		if r.readTime != nil {
			req.ConsistencySelector = &pb.ListCollectionIdsRequest_ReadTime{ReadTime: r.readTime}
		}
		it := r.c.ListCollectionIds(ctx, req)
		for {
			id, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("list the collections of %s: %w", r.rel(doc), err)
			}
			ids = append(ids, id)
		}
	})
	slices.Sort(ids)
	return ids, err
}

// runQuery runs one query at the pull's read time and returns its
// documents. The first query of a pull that has none sets it.
func (r *firestoreReader) runQuery(ctx context.Context, parent string, q *pb.StructuredQuery) ([]*pb.Document, error) {
	var out []*pb.Document
	err := r.atReadTime(ctx, func(ctx context.Context) error {
		out = out[:0]
		req := &pb.RunQueryRequest{Parent: parent, QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}}
		if r.readTime != nil {
			req.ConsistencySelector = &pb.RunQueryRequest_ReadTime{ReadTime: r.readTime}
		}
		stream, err := r.c.RunQuery(ctx, req)
		if err != nil {
			return err
		}
		for {
			res, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if r.readTime == nil {
				r.readTime = res.GetReadTime()
			}
			if d := res.GetDocument(); d != nil {
				out = append(out, d)
			}
		}
	})
	return out, err
}

// atReadTime runs read within readTimeout. When the source refuses the
// pull's read time as older than the versions it keeps (an hour in
// Firestore without point-in-time recovery), the pull goes on at the time
// of its next read, saying so once, and read runs again.
func (r *firestoreReader) atReadTime(ctx context.Context, read func(context.Context) error) error {
	for {
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		err := read(rctx)
		cancel()
		if err == nil || r.readTime == nil || !tooOld(err) {
			return err
		}
		r.p.line("firestore: the source no longer keeps the documents as of %s (%v); reading on at the current time, so documents read from now on may be newer than those before",
			r.readTime.AsTime().Format(time.RFC3339), status.Convert(err).Message())
		r.readTime = nil
	}
}

// tooOld reports whether err refuses a read time the source keeps no
// versions of.
func tooOld(err error) bool {
	s := status.Convert(err)
	msg := strings.ToLower(s.Message())
	return s.Code() == codes.FailedPrecondition ||
		(s.Code() == codes.InvalidArgument && (strings.Contains(msg, "read_time") || strings.Contains(msg, "read time")))
}

// firestoreCheckpoint is how far a pull's documents were written: saved
// in the target with each batch, read back by the pull's next run.
type firestoreCheckpoint struct {
	ReadTime  time.Time         `json:"readTime"`
	Target    int               `json:"target"`
	Stack     []checkpointFrame `json:"stack"`
	Documents int               `json:"documents"` // written before
	Changed   int               `json:"changed"`
	Done      bool              `json:"done,omitempty"` // every document written
	stack     []frame           // Stack, decoded
}

// checkpointFrame is a frame as saved.
type checkpointFrame struct {
	After json.RawMessage `json:"after"` // a Cursor in the API's JSON
	Doc   string          `json:"doc"`
	Read  int             `json:"read"`
	Sub   string          `json:"sub,omitempty"`
}

// checkpoint is where the reader stands, after its last document.
func (r *firestoreReader) checkpoint() (*firestoreCheckpoint, error) {
	c := &firestoreCheckpoint{Target: r.target}
	if r.readTime != nil {
		c.ReadTime = r.readTime.AsTime()
	}
	for _, f := range r.stack {
		after, err := protojson.Marshal(f.after)
		if err != nil {
			return nil, err
		}
		c.Stack = append(c.Stack, checkpointFrame{After: after, Doc: f.doc, Read: f.read, Sub: f.sub})
	}
	return c, nil
}

// decode fills c.stack from c.Stack.
func (c *firestoreCheckpoint) decode() error {
	for _, f := range c.Stack {
		after := &pb.Cursor{}
		if err := protojson.Unmarshal(f.After, after); err != nil {
			return err
		}
		c.stack = append(c.stack, frame{after: after, doc: f.Doc, read: f.Read, sub: f.Sub})
	}
	return nil
}

// pullID names o's Firestore documents as a pull into its target: the
// same source, database, collections, filters and redaction give the same
// id, so that only the same pull continues from a checkpoint.
func (o *Options) pullID() string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %q %q %q %q\n", o.From.Project, o.From.Emulator, o.Database, o.To.Project, o.Collections, o.CollectionGroups)
	for _, f := range o.Where {
		v, _ := protojson.Marshal(f.Value)
		fmt.Fprintf(h, "where %q %q %s\n", f.Field, f.Op, v)
	}
	fmt.Fprintf(h, "%v %d %v %d %q\n", o.OrderBy, o.Limit, o.Recursive, o.Sample, o.Redact)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// collectionCounter is a dry run's sink: it counts the documents of each
// collection path.
type collectionCounter struct {
	root   string
	counts map[string]int
	total  int
}

func (c *collectionCounter) add(_ context.Context, d *pb.Document) error {
	rel := strings.TrimPrefix(d.Name, c.root+"/")
	c.counts[rel[:strings.LastIndex(rel, "/")]]++
	c.total++
	return nil
}

type collectionCount struct {
	collection string
	n          int
}

// sorted is the counts by collection path.
func (c *collectionCounter) sorted() []collectionCount {
	out := make([]collectionCount, 0, len(c.counts))
	for path, n := range c.counts {
		out = append(out, collectionCount{path, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].collection < out[j].collection })
	return out
}

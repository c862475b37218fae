package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	firestoreapi "cloud.google.com/go/firestore/apiv1"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// pageSize is how many documents one query of a pull asks for.
const pageSize = 500

// docSet is the documents a pull read, in the order it read them, each
// once.
type docSet struct {
	docs []*pb.Document
	seen map[string]bool
	root string // the source's projects/P/databases/D/documents
}

func (s *docSet) add(d *pb.Document) bool {
	if s.seen[d.Name] {
		return false
	}
	s.seen[d.Name] = true
	s.docs = append(s.docs, d)
	return true
}

type collectionCount struct {
	collection string
	n          int
}

// collectionCounts is how many documents the set holds per collection path.
func (s *docSet) collectionCounts() []collectionCount {
	counts := map[string]int{}
	for _, d := range s.docs {
		rel := strings.TrimPrefix(d.Name, s.root+"/")
		counts[rel[:strings.LastIndex(rel, "/")]]++
	}
	out := make([]collectionCount, 0, len(counts))
	for c, n := range counts {
		out = append(out, collectionCount{c, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].collection < out[j].collection })
	return out
}

// firestoreReader reads documents from the source through the Firestore
// API's own client (which returns create and update times).
type firestoreReader struct {
	c   *firestoreapi.Client
	o   *Options
	set *docSet
	p   *progress
}

// readFirestore reads the documents o names.
func readFirestore(ctx context.Context, o *Options, p *progress) (*docSet, error) {
	opts := slices.Clone(o.from)
	md := metadata.Pairs("google-cloud-resource-prefix", "projects/"+o.From.Project+"/databases/"+o.Database)
	if o.From.Emulator != "" {
		opts = append(opts, option.WithEndpoint(o.From.Emulator),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
		// The owner credential every Admin SDK sends to an emulator.
		md = metadata.Join(md, metadata.Pairs("authorization", "Bearer owner"))
	}
	c, err := firestoreapi.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("firestore client: %w", err)
	}
	defer c.Close()
	root := "projects/" + o.From.Project + "/databases/" + o.Database + "/documents"
	r := &firestoreReader{c: c, o: o, set: &docSet{seen: map[string]bool{}, root: root}, p: p}
	ctx = metadata.NewOutgoingContext(ctx, md)
	limit := o.Limit
	if o.Sample > 0 && (limit == 0 || o.Sample < limit) {
		limit = o.Sample
	}
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
		if err := r.query(ctx, parent, segs[len(segs)-1], false, o.Where, o.OrderBy, limit); err != nil {
			return nil, fmt.Errorf("collection %s: %w", path, err)
		}
	}
	for _, id := range o.CollectionGroups {
		if id == "" || strings.Contains(id, "/") {
			return nil, fmt.Errorf("--collection-group %q is not a collection id", id)
		}
		if err := r.query(ctx, root, id, true, o.Where, o.OrderBy, limit); err != nil {
			return nil, fmt.Errorf("collection group %s: %w", id, err)
		}
	}
	p.line("firestore: read %d documents", len(r.set.docs))
	return r.set, nil
}

// query reads every document of a collection (or, with group, every
// collection of that id under parent) that passes where, in order, up to
// limit (0: all), page by page, and then their subcollections when the
// pull is recursive.
func (r *firestoreReader) query(ctx context.Context, parent, collection string, group bool, where []Filter, orders []Order, limit int) error {
	order := effectiveOrder(orders, where)
	rel := strings.TrimPrefix(strings.TrimPrefix(parent, r.set.root), "/")
	q := &pb.StructuredQuery{
		From:    []*pb.StructuredQuery_CollectionSelector{{CollectionId: collection, AllDescendants: group}},
		Where:   whereOf(where, r.set.root, strings.TrimPrefix(rel+"/"+collection, "/")),
		OrderBy: orderOf(order),
	}
	var found []*pb.Document
	for n := 0; limit == 0 || n < limit; {
		size := pageSize
		if limit > 0 && limit-n < size {
			size = limit - n
		}
		q.Limit = wrapperspb.Int32(int32(size))
		page, err := r.runQuery(ctx, parent, q)
		if err != nil {
			return err
		}
		for _, d := range page {
			if r.set.add(d) {
				found = append(found, d)
			}
		}
		n += len(page)
		r.p.tick("firestore: %d documents read", len(r.set.docs))
		if len(page) < size {
			break
		}
		q.StartAt = cursorAfter(page[len(page)-1], order)
	}
	if !r.o.Recursive {
		return nil
	}
	for _, d := range found {
		if err := r.subcollections(ctx, d.Name); err != nil {
			return err
		}
	}
	return nil
}

// subcollections reads every collection under the document doc (Sample
// documents of each, when set), recursively.
func (r *firestoreReader) subcollections(ctx context.Context, doc string) error {
	listCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var ids []string
	it := r.c.ListCollectionIds(listCtx, &pb.ListCollectionIdsRequest{Parent: doc})
	for {
		id, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return fmt.Errorf("list the collections of %s: %w", strings.TrimPrefix(doc, r.set.root+"/"), err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := r.query(ctx, doc, id, false, nil, nil, r.o.Sample); err != nil {
			return fmt.Errorf("collection %s/%s: %w", strings.TrimPrefix(doc, r.set.root+"/"), id, err)
		}
	}
	return nil
}

// runQuery runs one query and returns its documents.
func (r *firestoreReader) runQuery(ctx context.Context, parent string, q *pb.StructuredQuery) ([]*pb.Document, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	stream, err := r.c.RunQuery(ctx, &pb.RunQueryRequest{Parent: parent, QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: q}})
	if err != nil {
		return nil, err
	}
	var out []*pb.Document
	for {
		res, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if d := res.GetDocument(); d != nil {
			out = append(out, d)
		}
	}
}

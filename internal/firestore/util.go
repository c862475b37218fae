package firestore

import (
	"crypto/rand"
	"sort"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Mask keeps only the fields a request's DocumentMask names; a nil mask keeps
// the whole document (exported for transports).
func Mask(doc *pb.Document, mask *pb.DocumentMask) *pb.Document {
	if mask == nil || doc == nil {
		return doc
	}
	sel := &pb.StructuredQuery_Projection{}
	for _, f := range mask.GetFieldPaths() {
		sel.Fields = append(sel.Fields, &pb.StructuredQuery_FieldReference{FieldPath: f})
	}
	return Project([]*pb.Document{doc}, sel)[0]
}

// Project keeps only the selected fields of documents (exported for transports).
func Project(docs []*pb.Document, sel *pb.StructuredQuery_Projection) []*pb.Document {
	return project(docs, sel)
}

// NewID returns a random 20-character document id, as the SDKs make them.
func NewID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

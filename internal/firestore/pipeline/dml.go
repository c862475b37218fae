package pipeline

import (
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// dmlStage writes the rows before it (update, delete, insert, upsert) and
// puts out one row, {documents_modified: n}. Outside a transaction the
// writes commit in batches of the engine's limit; in an auto-commit
// transaction (the SDKs' atomic execution) they commit it, at most 500;
// in a transaction the client began they are staged in it, applied when
// it commits.
type dmlStage struct {
	op         string
	fields     []named  // update's transformations, upsert's additional fields
	collection []string // insert and upsert: the target collection; nil keeps the row's
	docID      expr     // insert and upsert: the new document's id; nil generates one
}

func compileDML(s *pb.Pipeline_Stage, depth int) (stage, error) {
	st := &dmlStage{op: s.GetName()}
	opts := s.GetOptions()
	if (st.op == "update" || st.op == "upsert") && len(s.GetArgs()) == 1 {
		f, err := namedMap(s.GetArgs()[0].GetMapValue().GetFields(), depth, false)
		if err != nil {
			return nil, err
		}
		st.fields = f
	}
	if c, ok := opts["collection"]; ok {
		segs := splitPath(c.GetReferenceValue())
		if len(segs)%2 != 1 || hasEmpty(segs) {
			return nil, invalid("Invalid collection path %q for %s.", c.GetReferenceValue(), st.op)
		}
		st.collection = segs
	}
	if d, ok := opts["document_id"]; ok {
		x, err := compileExpr(d, depth+1)
		if err != nil {
			return nil, err
		}
		st.docID = x
	}
	return st, nil
}

func (st *dmlStage) apply(r *run, outer *scope, in []*row) ([]*row, error) {
	if r.c.Transaction != nil && r.autoCommit && r.committed {
		return nil, invalid("Pipeline %s: an atomic execution commits its transaction with its first write stage; it can have no other.", st.op)
	}
	var writes []*pb.Write
	for _, rw := range in {
		s := scopeFor(r, outer, rw)
		name := rw.name
		if st.op == "insert" || st.op == "upsert" {
			var err error
			if name, err = st.target(r, s, rw); err != nil {
				return nil, err
			}
		}
		if name == "" {
			return nil, invalid("Pipeline %s needs documents: a row has no document name.", st.op)
		}
		w := &pb.Write{}
		switch st.op {
		case "delete":
			w.Operation = &pb.Write_Delete{Delete: name}
		case "update":
			fields := map[string]*pb.Value{}
			var mask []string
			for _, f := range st.fields {
				x := f.x.eval(s)
				if x.isError() {
					return nil, outputError(x)
				}
				mask = append(mask, f.path.String())
				if x.v != nil {
					setPath(fields, f.path, x.v)
				}
			}
			w.Operation = &pb.Write_Update{Update: &pb.Document{Name: name, Fields: fields}}
			w.UpdateMask = &pb.DocumentMask{FieldPaths: mask}
			w.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: true}}
		default: // insert, upsert
			fields := map[string]*pb.Value{}
			for k, v := range rw.fields {
				fields[k] = v
			}
			for _, f := range st.fields {
				x := f.x.eval(s)
				if x.isError() {
					return nil, outputError(x)
				}
				if x.v != nil {
					setPath(fields, f.path, x.v)
				}
			}
			w.Operation = &pb.Write_Update{Update: &pb.Document{Name: name, Fields: fields}}
			if st.op == "insert" {
				w.CurrentDocument = &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}}
			}
		}
		writes = append(writes, w)
	}
	switch {
	case r.c.Transaction != nil && !r.autoCommit:
		if err := r.eng.StageWrites(r.db, r.c.Transaction, writes); err != nil {
			return nil, err
		}
		return modified(len(writes)), nil
	case r.c.Transaction != nil:
		if _, err := r.eng.Commit(r.ctx, r.caller, r.db, writes, r.c.Transaction); err != nil {
			return nil, err
		}
		r.committed = true
		return modified(len(writes)), nil
	}
	for i := 0; i < len(writes); i += firestore.MaxWritesPerCommit {
		if _, err := r.eng.Commit(r.ctx, r.caller, r.db, writes[i:min(i+firestore.MaxWritesPerCommit, len(writes))], nil); err != nil {
			return nil, err
		}
	}
	return modified(len(writes)), nil
}

func modified(n int) []*row {
	return []*row{{fields: map[string]*pb.Value{"documents_modified": intV(int64(n))}}}
}

// target is the name an inserted or upserted row is written to.
func (st *dmlStage) target(r *run, s *scope, rw *row) (string, error) {
	coll := r.db + "/documents/" + strings.Join(st.collection, "/")
	if st.collection == nil {
		if rw.name == "" && st.docID == nil {
			return "", invalid("Pipeline %s needs a collection for rows that are not documents.", st.op)
		}
		if rw.name != "" {
			coll = rw.name[:strings.LastIndexByte(rw.name, '/')]
		}
	}
	if st.docID == nil {
		switch {
		case st.collection == nil:
			return rw.name, nil
		case rw.name != "": // the same id in the other collection
			return coll + rw.name[strings.LastIndexByte(rw.name, '/'):], nil
		}
		return coll + "/" + firestore.NewID(), nil
	}
	x := st.docID.eval(s)
	if x.isError() {
		return "", outputError(x)
	}
	if x.v == nil || kindOf(x.v) != kString || x.v.GetStringValue() == "" {
		return "", invalid("Pipeline %s document_id must be a non-empty string, not `%s`.", st.op, gotName(x))
	}
	return coll + "/" + x.v.GetStringValue(), nil
}

package firestore

import (
	"encoding/json"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
	"google.golang.org/protobuf/encoding/protowire"
)

// A verify write is the operation `string verify = 5` of
// google.firestore.v1.Write: the JS SDK sends one for each document a
// transaction read and did not write, so that the commit checks the
// document's precondition and writes nothing. The generated Go types loupe
// decodes requests with (cloud.google.com/go/firestore, pinned) predate the
// field, and it is the only field of the SDKs' Firestore protos they lack
// (grpcapi's TestSDKProtoFields checks this against the installed SDKs).
// Binary decoding keeps it among the Write's unknown fields, which is where
// the engine reads it; protojson drops it, so the JSON transports put it
// back there with RestoreVerifies.
const writeVerifyField protowire.Number = 5

// verifyOf returns the document a verify write names; ok is false for any
// other write.
func verifyOf(w *pb.Write) (name string, ok bool) {
	if w.GetOperation() != nil {
		return "", false
	}
	b := w.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return name, ok
		}
		b = b[n:]
		if num == writeVerifyField && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return name, ok
			}
			name, ok = string(v), true // the last occurrence wins, as for any proto field
			b = b[m:]
			continue
		}
		if m := protowire.ConsumeFieldValue(num, typ, b); m >= 0 {
			b = b[m:]
		} else {
			return name, ok
		}
	}
	return name, ok
}

// SetVerify makes w a verify write of the document name.
func SetVerify(w *pb.Write, name string) {
	w.Operation = nil
	b := protowire.AppendTag(nil, writeVerifyField, protowire.BytesType)
	b = protowire.AppendString(b, name)
	w.ProtoReflect().SetUnknown(append(w.ProtoReflect().GetUnknown(), b...))
}

// RestoreVerifies puts back the verify writes of a JSON request body
// (a CommitRequest, BatchWriteRequest or WriteRequest: each has its writes
// under "writes") into writes, its protojson decoding, which dropped them.
func RestoreVerifies(body []byte, writes []*pb.Write) error {
	var raw struct {
		Writes []struct {
			Verify *string `json:"verify"`
		} `json:"writes"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return errs.New(errs.InvalidArgument, "Invalid JSON payload received. "+err.Error())
	}
	for i, rw := range raw.Writes {
		if rw.Verify == nil || i >= len(writes) {
			continue
		}
		if writes[i].GetOperation() != nil {
			return errorf(errs.InvalidArgument, "Invalid value at 'writes[%d]' (oneof), oneof field 'operation' is already set. Cannot set 'verify'", i)
		}
		SetVerify(writes[i], *rw.Verify)
	}
	return nil
}

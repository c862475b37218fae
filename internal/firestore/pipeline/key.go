package pipeline

import (
	"math"
	"slices"
	"strconv"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
)

// groupKey is a string equal for values that are equal as pipelines
// compare them (1 and 1.0 are one key; NaN is one key).
func groupKey(vals []*pb.Value) string {
	var b strings.Builder
	for _, v := range vals {
		writeKey(&b, v)
		b.WriteByte(0)
	}
	return b.String()
}

func writeKey(b *strings.Builder, v *pb.Value) {
	switch t := v.GetValueType().(type) {
	case *pb.Value_IntegerValue:
		b.WriteString("n")
		b.WriteString(strconv.FormatInt(t.IntegerValue, 10))
	case *pb.Value_DoubleValue:
		f := t.DoubleValue
		switch {
		case math.IsNaN(f):
			b.WriteString("nan")
		case f == math.Trunc(f) && math.Abs(f) < 1<<63:
			b.WriteString("n")
			b.WriteString(strconv.FormatInt(int64(f), 10))
		default:
			b.WriteString("d")
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case *pb.Value_ArrayValue:
		b.WriteString("[")
		for _, el := range t.ArrayValue.GetValues() {
			writeKey(b, el)
			b.WriteByte(1)
		}
		b.WriteString("]")
	case *pb.Value_MapValue:
		b.WriteString("{")
		for _, k := range sortedKeys(t.MapValue.GetFields()) {
			b.WriteString(strconv.Quote(k))
			writeKey(b, t.MapValue.GetFields()[k])
			b.WriteByte(1)
		}
		b.WriteString("}")
	default:
		raw, _ := proto.MarshalOptions{Deterministic: true}.Marshal(v)
		b.WriteString("p")
		b.Write(raw)
	}
}

func sortedKeys(m map[string]*pb.Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

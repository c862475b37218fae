package pipeline

import (
	"math"
	"math/big"
	"slices"
	"strconv"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"google.golang.org/protobuf/proto"
)

// appendKey appends to b a key equal for values that are equal as
// pipelines compare them (1 and 1.0 are one key; NaN is one key). Each
// value's key is followed by a 0 byte.
func appendKey(b []byte, vals ...*pb.Value) []byte {
	for _, v := range vals {
		b = appendValueKey(b, v)
		b = append(b, 0)
	}
	return b
}

func appendValueKey(b []byte, v *pb.Value) []byte {
	switch t := v.GetValueType().(type) {
	case *pb.Value_NullValue:
		return append(b, 'z')
	case *pb.Value_BooleanValue:
		if t.BooleanValue {
			return append(b, 't')
		}
		return append(b, 'f')
	case *pb.Value_StringValue:
		// Length first, so that a string's bytes never end its key early.
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(t.StringValue)), 10)
		b = append(b, ':')
		return append(b, t.StringValue...)
	case *pb.Value_IntegerValue:
		b = append(b, 'n')
		return strconv.AppendInt(b, t.IntegerValue, 10)
	case *pb.Value_DoubleValue:
		f := t.DoubleValue
		switch {
		case math.IsNaN(f):
			return append(b, "nan"...)
		case f == math.Trunc(f) && math.Abs(f) < 1<<63:
			b = append(b, 'n')
			return strconv.AppendInt(b, int64(f), 10)
		default:
			b = append(b, 'd')
			return strconv.AppendFloat(b, f, 'g', -1, 64)
		}
	case *pb.Value_ArrayValue:
		b = append(b, '[')
		for _, el := range t.ArrayValue.GetValues() {
			b = appendValueKey(b, el)
			b = append(b, 1)
		}
		return append(b, ']')
	case *pb.Value_MapValue:
		switch kindOf(v) {
		case kInt32:
			b = append(b, 'n')
			return strconv.AppendInt(b, asInt(v), 10)
		case kDecimal128:
			return appendDecimalKey(b, asDecimal(v))
		}
		b = append(b, '{')
		for _, k := range sortedKeys(t.MapValue.GetFields()) {
			b = strconv.AppendQuote(b, k)
			b = appendValueKey(b, t.MapValue.GetFields()[k])
			b = append(b, 1)
		}
		return append(b, '}')
	}
	raw, _ := proto.MarshalOptions{Deterministic: true}.Marshal(v)
	b = append(b, 'p')
	return append(b, raw...)
}

// appendDecimalKey keys a Decimal128 by its value, as pipelines compare
// it: 1.50 and 1.5 are one key, an integral value is an integer's key and
// a value a double holds exactly is that double's.
func appendDecimalKey(b []byte, d firestore.Decimal) []byte {
	switch {
	case d.IsNaN():
		return append(b, "nan"...)
	case d.IsInf():
		return appendValueKey(b, doubleV(d.Float64()))
	}
	if i, ok := d.Int64(); ok {
		b = append(b, 'n')
		return strconv.AppendInt(b, i, 10)
	}
	r := d.Reduce()
	if adj := r.Exp(); adj > -1100 && adj < 310 {
		if f := d.Float64(); !math.IsInf(f, 0) && f != 0 && new(big.Rat).SetFloat64(f).Cmp(r.Rat()) == 0 {
			return appendValueKey(b, doubleV(f))
		}
	}
	b = append(b, 'D')
	return append(b, r.String()...)
}

func sortedKeys(m map[string]*pb.Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package firestore

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"math"
	"math/big"
	"strings"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/errs"
)

// The BSON types of Enterprise edition's MongoDB compatibility, as the SDKs
// write them: a map of one reserved key. An Int32 {__int__: integer}, a
// Decimal128 {__decimal128__: string}, an ObjectId {__oid__: 24 hex
// digits}, a BSON timestamp {__request_timestamp__: {seconds, increment}},
// a regular expression {__regex__: {pattern, options}}, binary data
// {__binary__: bytes whose first byte is the subtype}, MinKey {__min__:
// null} and MaxKey {__max__: null}.
var bsonKeys = map[string]int{
	"__int__": rankNumber, "__decimal128__": rankNumber, "__oid__": rankObjectID,
	"__request_timestamp__": rankBSONTimestamp, "__regex__": rankRegex, "__binary__": rankBinary,
	"__min__": rankMinKey, "__max__": rankMaxKey,
}

// bsonRank is the rank of a BSON value, ok false for any other map.
func bsonRank(v *pb.Value) (int, bool) {
	fields := v.GetMapValue().GetFields()
	if len(fields) != 1 {
		return 0, false
	}
	for k, x := range fields {
		r, ok := bsonKeys[k]
		if !ok || !bsonShape(k, x) {
			return 0, false
		}
		return r, true
	}
	return 0, false
}

// bsonShape reports whether a BSON key holds a value of its type.
func bsonShape(key string, x *pb.Value) bool {
	switch key {
	case "__int__":
		_, ok := x.GetValueType().(*pb.Value_IntegerValue)
		return ok
	case "__decimal128__", "__oid__":
		_, ok := x.GetValueType().(*pb.Value_StringValue)
		return ok
	case "__binary__":
		_, ok := x.GetValueType().(*pb.Value_BytesValue)
		return ok
	case "__min__", "__max__":
		return isNull(x)
	}
	return x.GetMapValue() != nil
}

func isBSON(v *pb.Value) bool {
	_, ok := bsonRank(v)
	return ok
}

func bsonField(v *pb.Value) *pb.Value {
	for _, x := range v.GetMapValue().GetFields() {
		return x
	}
	return nil
}

// bigNumber is a number's exact value (NaN: nil and nan true).
func bigNumber(v *pb.Value) (f *big.Float, nan bool) {
	switch t := v.GetValueType().(type) {
	case *pb.Value_IntegerValue:
		return new(big.Float).SetInt64(t.IntegerValue), false
	case *pb.Value_DoubleValue:
		if math.IsNaN(t.DoubleValue) {
			return nil, true
		}
		return new(big.Float).SetFloat64(t.DoubleValue), false
	}
	x := bsonField(v)
	if i, ok := x.GetValueType().(*pb.Value_IntegerValue); ok {
		return new(big.Float).SetInt64(i.IntegerValue), false
	}
	return ParseDecimal128(x.GetStringValue())
}

// ParseDecimal128 reads a Decimal128's string, NaN and infinities included,
// at 256 bits of precision; a string that is no number reads as NaN.
func ParseDecimal128(s string) (f *big.Float, nan bool) {
	switch strings.ToLower(strings.TrimPrefix(s, "+")) {
	case "nan", "-nan":
		return nil, true
	case "inf", "infinity":
		return new(big.Float).SetInf(false), false
	case "-inf", "-infinity":
		return new(big.Float).SetInf(true), false
	}
	f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
	if err != nil {
		return nil, true
	}
	return f, false
}

// compareBSONNumbers compares numbers when one is an Int32 or a
// Decimal128, by value, NaN first.
func compareBSONNumbers(a, b *pb.Value) int {
	fa, nanA := bigNumber(a)
	fb, nanB := bigNumber(b)
	switch {
	case nanA || nanB:
		return cmpBool(!nanA, !nanB)
	}
	return fa.Cmp(fb)
}

// compareBSON orders two BSON values of one rank (numbers excepted).
func compareBSON(rank int, a, b *pb.Value) int {
	xa, xb := bsonField(a), bsonField(b)
	switch rank {
	case rankObjectID:
		return strings.Compare(xa.GetStringValue(), xb.GetStringValue())
	case rankBinary:
		return bytes.Compare(xa.GetBytesValue(), xb.GetBytesValue())
	case rankBSONTimestamp:
		fa, fb := xa.GetMapValue().GetFields(), xb.GetMapValue().GetFields()
		if c := cmp.Compare(fa["seconds"].GetIntegerValue(), fb["seconds"].GetIntegerValue()); c != 0 {
			return c
		}
		return cmp.Compare(fa["increment"].GetIntegerValue(), fb["increment"].GetIntegerValue())
	case rankRegex:
		fa, fb := xa.GetMapValue().GetFields(), xb.GetMapValue().GetFields()
		if c := strings.Compare(fa["pattern"].GetStringValue(), fb["pattern"].GetStringValue()); c != 0 {
			return c
		}
		return strings.Compare(fa["options"].GetStringValue(), fb["options"].GetStringValue())
	}
	return 0
}

// validateBSON checks a BSON value as production does on write: an
// ObjectId of 24 hex digits, regex options among i, m, s, u and x, an
// Int32 in range, a Decimal128 that parses, a timestamp of two 32-bit
// unsigned parts, binary data with its subtype byte.
func validateBSON(v *pb.Value, field string) error {
	for k, x := range v.GetMapValue().GetFields() {
		switch k {
		case "__oid__":
			s := x.GetStringValue()
			if len(s) != 24 {
				return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: Object ID hex string has incorrect length.", field)
			}
			if _, err := hex.DecodeString(s); err != nil {
				return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: Object ID must be a hex string.", field)
			}
		case "__regex__":
			f := x.GetMapValue().GetFields()
			if _, ok := f["pattern"].GetValueType().(*pb.Value_StringValue); !ok || len(f) != 2 {
				return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: a regex holds a string pattern and options.", field)
			}
			for _, o := range f["options"].GetStringValue() {
				if !strings.ContainsRune("imsux", o) {
					return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: Invalid regex option %q.", field, o)
				}
			}
		case "__int__":
			if i := x.GetIntegerValue(); i < math.MinInt32 || i > math.MaxInt32 {
				return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: Int32 value out of range.", field)
			}
		case "__decimal128__":
			if _, ok := ParseDecimal(x.GetStringValue()); !ok {
				return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: Decimal128 string %q does not parse.", field, x.GetStringValue())
			}
		case "__request_timestamp__":
			f := x.GetMapValue().GetFields()
			for _, part := range []string{"seconds", "increment"} {
				n, ok := f[part].GetValueType().(*pb.Value_IntegerValue)
				if !ok || n.IntegerValue < 0 || n.IntegerValue > math.MaxUint32 || len(f) != 2 {
					return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: a timestamp holds 32-bit unsigned seconds and increment.", field)
				}
			}
		case "__binary__":
			if len(x.GetBytesValue()) == 0 {
				return errorf(errs.InvalidArgument, "Invalid BSON value in field %q: binary data needs its subtype byte.", field)
			}
		}
	}
	return nil
}

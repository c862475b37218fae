package pipeline

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// String functions; lengths and positions count code points.
func init() {
	str := func(v *pb.Value) string { return v.GetStringValue() }
	typedFn("char_length", 1, 1, specs(strT), func(_ *call, a []*pb.Value) val {
		return of(intV(int64(utf8.RuneCountInString(str(a[0])))))
	})
	typedFn("byte_length", 1, 1, specs(strOrB), func(_ *call, a []*pb.Value) val {
		if b, ok := a[0].GetValueType().(*pb.Value_BytesValue); ok {
			return of(intV(int64(len(b.BytesValue))))
		}
		return of(intV(int64(len(str(a[0])))))
	})
	typedFn("length", 1, 1, specs(spec{"String, Bytes, Array, Map or Vector", isKind(kString, kBytes, kArray, kMap, kVector)}), func(_ *call, a []*pb.Value) val {
		switch kindOf(a[0]) {
		case kString:
			return of(intV(int64(utf8.RuneCountInString(str(a[0])))))
		case kBytes:
			return of(intV(int64(len(a[0].GetBytesValue()))))
		case kArray:
			return of(intV(int64(len(a[0].GetArrayValue().GetValues()))))
		case kVector:
			return of(intV(int64(len(vectorOf(a[0])))))
		}
		return of(intV(int64(len(a[0].GetMapValue().GetFields()))))
	})
	typedFn("string_concat", 1, -1, specs(strT), func(_ *call, a []*pb.Value) val {
		var b strings.Builder
		for _, v := range a {
			b.WriteString(str(v))
		}
		return of(stringV(b.String()))
	})
	typedFn("concat", 1, -1, specs(spec{"String, Bytes or Array", isKind(kString, kBytes, kArray)}), func(c *call, a []*pb.Value) val {
		k := kindOf(a[0])
		for _, v := range a[1:] {
			if kindOf(v) != k {
				return failf("The function concat(...) requires arguments of one type but got `%s` and `%s`.", wireName[k], wireName[kindOf(v)])
			}
		}
		switch k {
		case kString:
			var b strings.Builder
			for _, v := range a {
				b.WriteString(str(v))
			}
			return of(stringV(b.String()))
		case kBytes:
			var out []byte
			for _, v := range a {
				out = append(out, v.GetBytesValue()...)
			}
			return of(bytesV(out))
		}
		var out []*pb.Value
		for _, v := range a {
			out = append(out, v.GetArrayValue().GetValues()...)
		}
		return of(arrayV(out))
	})
	search := func(name string, f func(s, t string) bool) {
		typedFn(name, 2, 2, specs(strT), func(_ *call, a []*pb.Value) val { return of(boolV(f(str(a[0]), str(a[1])))) })
	}
	search("starts_with", strings.HasPrefix)
	search("ends_with", strings.HasSuffix)
	search("string_contains", strings.Contains)
	typedFn("like", 2, 2, specs(strT), func(_ *call, a []*pb.Value) val {
		re, err := regexp.Compile(likePattern(str(a[1])))
		if err != nil {
			return failf("Invalid LIKE pattern %q.", str(a[1]))
		}
		return of(boolV(re.MatchString(str(a[0]))))
	})
	regex := func(name string, f func(re *regexp.Regexp, s string) val) {
		typedFn(name, 2, 2, specs(strT), func(_ *call, a []*pb.Value) val {
			re, err := regexp.Compile(str(a[1]))
			if err != nil {
				return failf("Invalid regular expression %q in %s(...): %v", str(a[1]), name, err)
			}
			return f(re, str(a[0]))
		})
	}
	regex("regex_contains", func(re *regexp.Regexp, s string) val { return of(boolV(re.MatchString(s))) })
	regex("regex_match", func(re *regexp.Regexp, s string) val {
		full := regexp.MustCompile(`^(?:` + re.String() + `)$`) // re compiled, so this does
		return of(boolV(full.MatchString(s)))
	})
	regex("regex_find", func(re *regexp.Regexp, s string) val {
		m := re.FindStringSubmatch(s)
		switch {
		case m == nil:
			return of(nullV)
		case len(m) > 1:
			return of(stringV(m[1]))
		}
		return of(stringV(m[0]))
	})
	regex("regex_find_all", func(re *regexp.Regexp, s string) val {
		out := []*pb.Value{}
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			if len(m) > 1 {
				out = append(out, stringV(m[1]))
			} else {
				out = append(out, stringV(m[0]))
			}
		}
		return of(arrayV(out))
	})
	typedFn("to_lower", 1, 1, specs(strT), func(_ *call, a []*pb.Value) val { return of(stringV(strings.ToLower(str(a[0])))) })
	typedFn("to_upper", 1, 1, specs(strT), func(_ *call, a []*pb.Value) val { return of(stringV(strings.ToUpper(str(a[0])))) })
	trim := func(name string, f func(s, cut string) string, space func(string) string, left, right bool) {
		typedFn(name, 1, 2, specs(strOrB), func(_ *call, a []*pb.Value) val {
			isB, bad := textKind(name, a)
			if bad != nil {
				return *bad
			}
			switch {
			case len(a) == 2 && isB:
				return of(bytesV([]byte(trimBytes(text(a[0]), text(a[1]), left, right))))
			case len(a) == 2:
				return of(stringV(f(str(a[0]), str(a[1]))))
			case isB:
				return of(bytesV([]byte(trimBytes(text(a[0]), " \t\n\r\v\f", left, right))))
			}
			return of(stringV(space(str(a[0]))))
		})
	}
	trim("trim", strings.Trim, strings.TrimSpace, true, true)
	trim("ltrim", strings.TrimLeft, func(s string) string { return strings.TrimLeft(s, " \t\n\r\v\f") }, true, false)
	trim("rtrim", strings.TrimRight, func(s string) string { return strings.TrimRight(s, " \t\n\r\v\f") }, false, true)
	typedFn("string_reverse", 1, 1, specs(strT), func(_ *call, a []*pb.Value) val { return of(stringV(reverseString(str(a[0])))) })
	typedFn("reverse", 1, 1, specs(spec{"String, Bytes or Array", isKind(kString, kBytes, kArray)}), func(_ *call, a []*pb.Value) val {
		switch kindOf(a[0]) {
		case kString:
			return of(stringV(reverseString(str(a[0]))))
		case kBytes:
			b := slices.Clone(a[0].GetBytesValue())
			slices.Reverse(b)
			return of(bytesV(b))
		}
		vs := slices.Clone(a[0].GetArrayValue().GetValues())
		slices.Reverse(vs)
		return of(arrayV(vs))
	})
	typedFn("substring", 2, 3, specs(strOrB, intT), func(_ *call, a []*pb.Value) val {
		length := int64(-1)
		if len(a) == 3 {
			if length = a[2].GetIntegerValue(); length < 0 {
				return failf("The function substring(...) requires a non-negative length.")
			}
		}
		if b, ok := a[0].GetValueType().(*pb.Value_BytesValue); ok {
			lo, hi := window(len(b.BytesValue), a[1].GetIntegerValue(), length)
			return of(bytesV(b.BytesValue[lo:hi]))
		}
		runes := []rune(str(a[0]))
		lo, hi := window(len(runes), a[1].GetIntegerValue(), length)
		return of(stringV(string(runes[lo:hi])))
	})
	typedFn("split", 2, 2, specs(strOrB), func(_ *call, a []*pb.Value) val {
		if kindOf(a[0]) != kindOf(a[1]) {
			return typeError("split", "String", of(a[1]))
		}
		if kindOf(a[0]) == kBytes {
			out := []*pb.Value{}
			for _, part := range splitBytes(a[0].GetBytesValue(), a[1].GetBytesValue()) {
				out = append(out, bytesV(part))
			}
			return of(arrayV(out))
		}
		out := []*pb.Value{}
		for _, part := range strings.Split(str(a[0]), str(a[1])) {
			out = append(out, stringV(part))
		}
		return of(arrayV(out))
	})
	typedFn("join", 2, 2, specs(arrT, strT), func(_ *call, a []*pb.Value) val {
		var parts []string
		for _, el := range a[0].GetArrayValue().GetValues() {
			switch kindOf(el) {
			case kNull:
				continue
			case kString:
				parts = append(parts, str(el))
			default:
				return typeError("join", "String", of(el))
			}
		}
		return of(stringV(strings.Join(parts, str(a[1]))))
	})
	typedFn("string_repeat", 2, 2, specs(strOrB, intT), func(_ *call, a []*pb.Value) val {
		n := a[1].GetIntegerValue()
		if n < 0 {
			return failf("The function string_repeat(...) requires a non-negative count.")
		}
		if int64(len(text(a[0])))*n > firestore.MaxDocumentBytes {
			return failf("The function string_repeat(...) would exceed the maximum string size.")
		}
		return of(textV(kindOf(a[0]) == kBytes, strings.Repeat(text(a[0]), int(n))))
	})
	replace := func(name string, n int) {
		typedFn(name, 3, 3, specs(strOrB), func(_ *call, a []*pb.Value) val {
			isB, bad := textKind(name, a)
			if bad != nil {
				return *bad
			}
			return of(textV(isB, strings.Replace(text(a[0]), text(a[1]), text(a[2]), n)))
		})
	}
	replace("string_replace_all", -1)
	replace("string_replace_one", 1)
	typedFn("string_index_of", 2, 2, specs(strOrB), func(_ *call, a []*pb.Value) val {
		isB, bad := textKind("string_index_of", a)
		if bad != nil {
			return *bad
		}
		i := strings.Index(text(a[0]), text(a[1]))
		switch {
		case i < 0:
			return of(intV(-1))
		case isB: // bytes count bytes, strings count characters
			return of(intV(int64(i)))
		}
		return of(intV(int64(utf8.RuneCountInString(str(a[0])[:i]))))
	})
}

// window is the [lo, hi) range of n elements that starts at offset (from
// the end when negative) and spans length of them (-1: to the end).
func window(n int, offset, length int64) (int, int) {
	if offset < 0 {
		offset += int64(n)
		if offset < 0 {
			offset = 0
		}
	}
	if offset > int64(n) {
		offset = int64(n)
	}
	end := int64(n)
	if length >= 0 && offset+length < end {
		end = offset + length
	}
	return int(offset), int(end)
}

func reverseString(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func splitBytes(b, sep []byte) [][]byte {
	if len(sep) == 0 {
		out := make([][]byte, len(b))
		for i := range b {
			out[i] = b[i : i+1]
		}
		return out
	}
	var out [][]byte
	for {
		i := strings.Index(string(b), string(sep))
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i])
		b = b[i+len(sep):]
	}
}

// likePattern turns a LIKE pattern (% any run, _ one character) into an
// anchored regular expression.
func likePattern(p string) string {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range p {
		switch r {
		case '%':
			b.WriteString(`.*`)
		case '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return b.String()
}

// textKind reports whether a string-or-bytes function works on bytes (its
// first argument is bytes), or the type error when the others differ.
func textKind(name string, a []*pb.Value) (bool, *val) {
	isB := kindOf(a[0]) == kBytes
	for _, x := range a[1:] {
		if (kindOf(x) == kBytes) != isB {
			want := "String"
			if isB {
				want = "Bytes"
			}
			e := typeError(name, want, of(x))
			return isB, &e
		}
	}
	return isB, nil
}

// text is a string's or bytes' content; textV makes the same kind back.
func text(v *pb.Value) string {
	if kindOf(v) == kBytes {
		return string(v.GetBytesValue())
	}
	return v.GetStringValue()
}

func textV(isB bool, s string) *pb.Value {
	if isB {
		return bytesV([]byte(s))
	}
	return stringV(s)
}

// trimBytes trims any of cut's bytes (not characters) from s's ends.
func trimBytes(s, cut string, left, right bool) string {
	in := func(b byte) bool { return strings.IndexByte(cut, b) >= 0 }
	lo, hi := 0, len(s)
	for left && lo < hi && in(s[lo]) {
		lo++
	}
	for right && hi > lo && in(s[hi-1]) {
		hi--
	}
	return s[lo:hi]
}

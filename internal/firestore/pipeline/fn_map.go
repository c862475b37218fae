package pipeline

import (
	"maps"
	"slices"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
)

// Map functions; keys come out in sorted order.
func init() {
	fields := func(v *pb.Value) map[string]*pb.Value { return v.GetMapValue().GetFields() }
	register("map", 0, -1, func(c *call, s *scope) val {
		if len(c.args)%2 != 0 {
			return failf("The function map(...) requires key and value pairs.")
		}
		out := make(map[string]*pb.Value, len(c.args)/2)
		for i := 0; i < len(c.args); i += 2 {
			k, v := c.arg(s, i), c.arg(s, i+1)
			if k.isError() {
				return k
			}
			if k.v == nil || kindOf(k.v) != kString {
				return typeError("map", "String", k)
			}
			if v.isError() {
				return v
			}
			if v.v != nil {
				out[k.v.GetStringValue()] = v.v
			}
		}
		return of(mapV(out))
	})
	get := func(name string) func(c *call, s *scope) val {
		return func(c *call, s *scope) val {
			m, k := c.arg(s, 0), c.arg(s, 1)
			switch {
			case m.isError():
				return m
			case m.isAbsent():
				return absent
			case m.isNull():
				return of(nullV)
			case kindOf(m.v) != kMap:
				return typeError(name, "Map", m)
			}
			if k.isError() {
				return k
			}
			if k.v == nil || kindOf(k.v) != kString {
				return typeError(name, "String", k)
			}
			key := k.v.GetStringValue()
			if name == "get_field" {
				if path, err := firestore.ParseFieldPath(key); err == nil {
					if v, ok := firestore.GetField(fields(m.v), path); ok {
						return of(v)
					}
					return absent
				}
			}
			if v, ok := fields(m.v)[key]; ok {
				return of(v)
			}
			return absent
		}
	}
	register("map_get", 2, 2, get("map_get"))
	register("get_field", 2, 2, get("get_field"))
	register("map_set", 3, -1, func(c *call, s *scope) val {
		m := c.arg(s, 0)
		switch {
		case m.isError():
			return m
		case m.isNull():
			return of(nullV)
		case m.isAbsent() || kindOf(m.v) != kMap:
			return typeError("map_set", "Map", m)
		}
		if len(c.args)%2 != 1 {
			return failf("The function map_set(...) requires key and value pairs after the map.")
		}
		out := maps.Clone(fields(m.v))
		if out == nil {
			out = map[string]*pb.Value{}
		}
		for i := 1; i < len(c.args); i += 2 {
			k, v := c.arg(s, i), c.arg(s, i+1)
			if k.isError() {
				return k
			}
			if k.v == nil || kindOf(k.v) != kString {
				return typeError("map_set", "String", k)
			}
			if v.isError() {
				return v
			}
			if v.isAbsent() {
				delete(out, k.v.GetStringValue())
			} else {
				out[k.v.GetStringValue()] = v.v
			}
		}
		return of(mapV(out))
	})
	typedFn("map_remove", 2, 2, specs(mapT, strT), func(_ *call, a []*pb.Value) val {
		out := maps.Clone(fields(a[0]))
		delete(out, a[1].GetStringValue())
		return of(mapV(out))
	})
	typedFn("map_merge", 1, -1, specs(mapT), func(_ *call, a []*pb.Value) val {
		out := map[string]*pb.Value{}
		for _, m := range a {
			maps.Copy(out, fields(m))
		}
		return of(mapV(out))
	})
	typedFn("map_keys", 1, 1, specs(mapT), func(_ *call, a []*pb.Value) val {
		out := []*pb.Value{}
		for _, k := range slices.Sorted(maps.Keys(fields(a[0]))) {
			out = append(out, stringV(k))
		}
		return of(arrayV(out))
	})
	typedFn("map_values", 1, 1, specs(mapT), func(_ *call, a []*pb.Value) val {
		out := []*pb.Value{}
		f := fields(a[0])
		for _, k := range slices.Sorted(maps.Keys(f)) {
			out = append(out, f[k])
		}
		return of(arrayV(out))
	})
	typedFn("map_entries", 1, 1, specs(mapT), func(_ *call, a []*pb.Value) val {
		out := []*pb.Value{}
		f := fields(a[0])
		for _, k := range slices.Sorted(maps.Keys(f)) {
			out = append(out, mapV(map[string]*pb.Value{"k": stringV(k), "v": f[k]}))
		}
		return of(arrayV(out))
	})
}

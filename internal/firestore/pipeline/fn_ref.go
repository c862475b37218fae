package pipeline

import "strings"

// Reference functions. A reference is
// projects/{p}/databases/{d}/documents[/collection/id...]; segments count
// in collection and document pairs.
func init() {
	register("document_id", 1, 1, func(c *call, s *scope) val {
		return withPath(c, s, func(root string, segs []string) val {
			if len(segs)%2 != 0 || len(segs) == 0 {
				return of(nullV)
			}
			return of(stringV(segs[len(segs)-1]))
		})
	})
	register("collection_id", 1, 1, func(c *call, s *scope) val {
		return withPath(c, s, func(root string, segs []string) val {
			if len(segs) == 0 {
				return of(nullV)
			}
			return of(stringV(segs[(len(segs)-1)/2*2]))
		})
	})
	register("parent", 1, 1, func(c *call, s *scope) val {
		return withPath(c, s, func(root string, segs []string) val {
			if len(segs) < 2 {
				return of(nullV)
			}
			return of(refV(joinRef(root, segs[:(len(segs)-1)/2*2])))
		})
	})
	register("reference_slice", 3, 3, func(c *call, s *scope) val {
		off, n := c.arg(s, 1), c.arg(s, 2)
		for _, x := range []val{off, n} {
			if x.isError() {
				return x
			}
			if x.v == nil || kindOf(x.v) != kInt {
				return typeError("reference_slice", "Int64", x)
			}
		}
		if n.v.GetIntegerValue() < 0 {
			return failf("The function reference_slice(...): length must be non-negative.")
		}
		return withPath(c, s, func(root string, segs []string) val {
			pairs := (len(segs) + 1) / 2
			lo, hi := window(pairs, off.v.GetIntegerValue(), n.v.GetIntegerValue())
			return of(refV(joinRef(root, segs[lo*2:min(hi*2, len(segs))])))
		})
	})
}

// withPath splits the reference (or document path string) argument into the database's documents
// root and the path segments below it.
func withPath(c *call, s *scope, f func(root string, segs []string) val) val {
	x := c.arg(s, 0)
	switch {
	case x.isError():
		return x
	case x.isNull() || x.isAbsent(): // as production answers document_id(field('__path__'))
		return of(nullV)
	case kindOf(x.v) != kReference && kindOf(x.v) != kString:
		return typeError(c.fn.name, "Reference", x)
	}
	ref := x.v.GetReferenceValue()
	if kindOf(x.v) == kString { // a document path, relative to the database or whole
		if ref = x.v.GetStringValue(); !strings.HasPrefix(ref, "projects/") {
			ref = s.run.db + "/documents/" + strings.Trim(ref, "/")
		}
	}
	const sep = "/documents"
	i := strings.Index(ref, sep)
	if i < 0 {
		return failf("The function %s(...) got an invalid reference %q.", c.fn.name, ref)
	}
	root, rest := ref[:i+len(sep)], strings.Trim(ref[i+len(sep):], "/")
	if rest == "" {
		return f(root, nil)
	}
	return f(root, strings.Split(rest, "/"))
}

func joinRef(root string, segs []string) string {
	if len(segs) == 0 {
		return root
	}
	return root + "/" + strings.Join(segs, "/")
}

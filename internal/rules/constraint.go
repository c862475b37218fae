package rules

// constraint stands for a field that a list query bounds with range, != or not-in filters: the rule
// sees it as an interval minus excluded values, and a comparison is true only when every value the
// query admits satisfies it; otherwise the comparison is an error (the rule cannot be proven).
type constraint struct {
	lo, hi         any
	loIncl, hiIncl bool
	not            []any
}

var errUnproven = errf("Unable to prove the rule for every document the query can return.")

// add narrows the constraint by one filter.
func (c *constraint) add(op string, v any) {
	switch op {
	case ">", ">=":
		if c.lo == nil {
			c.lo, c.loIncl = v, op == ">="
		} else if k, err := compare(v, c.lo); err == nil && (k > 0 || (k == 0 && op == ">")) {
			c.lo, c.loIncl = v, op == ">="
		}
	case "<", "<=":
		if c.hi == nil {
			c.hi, c.hiIncl = v, op == "<="
		} else if k, err := compare(v, c.hi); err == nil && (k < 0 || (k == 0 && op == "<")) {
			c.hi, c.hiIncl = v, op == "<="
		}
	case "!=":
		c.not = append(c.not, v)
	case "not-in":
		l, _ := asList(v)
		c.not = append(c.not, l...)
	}
}

// implies reports whether "x op k" holds for every x the constraint admits.
func (c *constraint) implies(op string, k any) bool {
	cmp := func(a any) (int, bool) {
		r, err := compare(a, k)
		return r, err == nil
	}
	switch op {
	case ">", ">=":
		if c.lo == nil {
			return false
		}
		r, ok := cmp(c.lo)
		return ok && (r > 0 || (r == 0 && (op == ">=" || !c.loIncl)))
	case "<", "<=":
		if c.hi == nil {
			return false
		}
		r, ok := cmp(c.hi)
		return ok && (r < 0 || (r == 0 && (op == "<=" || !c.hiIncl)))
	case "!=":
		return contains(c.not, k) || c.implies(">", k) || c.implies("<", k)
	}
	return false
}

var flipped = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

// constraintOp evaluates a comparison in which one side is a query constraint.
func constraintOp(op string, l, r any) (any, error) {
	c, ok := l.(*constraint)
	if !ok {
		c, op, r = r.(*constraint), flipped[op], l
	}
	switch op {
	case "==":
		if c.implies("!=", r) {
			return false, nil
		}
	case "!=":
		if c.implies("!=", r) {
			return true, nil
		}
	default:
		if c.implies(op, r) {
			return true, nil
		}
	}
	return nil, errUnproven
}

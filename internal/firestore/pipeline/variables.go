package pipeline

import (
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// checkVariables refuses a pipeline that reads a variable nothing binds
// where it is read, before it runs, as production does (even when no row
// would reach the expression). A let (define) stage binds its names for the
// stages after it, an array_transform or array_filter binds its element
// (and index) names in its body, and a subquery sees the variables of the
// pipeline around it.
func checkVariables(p *pb.Pipeline, outer map[string]bool) error {
	bound := outer
	for _, st := range p.GetStages() {
		for _, a := range st.GetArgs() {
			if err := checkValueVariables(a, bound); err != nil {
				return err
			}
		}
		for _, o := range st.GetOptions() {
			if err := checkValueVariables(o, bound); err != nil {
				return err
			}
		}
		if st.GetName() == "let" && len(st.GetArgs()) == 1 {
			names := st.GetArgs()[0].GetMapValue().GetFields()
			next := make(map[string]bool, len(bound)+len(names))
			for k := range bound {
				next[k] = true
			}
			for k := range names {
				next[k] = true
			}
			bound = next
		}
	}
	return nil
}

func checkValueVariables(v *pb.Value, bound map[string]bool) error {
	switch x := v.GetValueType().(type) {
	case *pb.Value_VariableReferenceValue:
		if !bound[x.VariableReferenceValue] {
			return invalid("Unknown variable %q: no define stage or array function before it binds that name.", x.VariableReferenceValue)
		}
	case *pb.Value_PipelineValue:
		return checkVariables(x.PipelineValue, bound)
	case *pb.Value_ArrayValue:
		for _, el := range x.ArrayValue.GetValues() {
			if err := checkValueVariables(el, bound); err != nil {
				return err
			}
		}
	case *pb.Value_MapValue:
		for _, el := range x.MapValue.GetFields() {
			if err := checkValueVariables(el, bound); err != nil {
				return err
			}
		}
	case *pb.Value_FunctionValue:
		return checkCallVariables(x.FunctionValue, bound)
	}
	return nil
}

// checkCallVariables checks a function's arguments; the body of
// array_transform and array_filter (their last argument) also sees the
// names they bind, when those are written as strings (any other name is
// left for the run to judge).
func checkCallVariables(f *pb.Function, bound map[string]bool) error {
	args := f.GetArgs()
	for _, o := range f.GetOptions() {
		if err := checkValueVariables(o, bound); err != nil {
			return err
		}
	}
	lambda := (f.GetName() == "array_transform" || f.GetName() == "array_filter") && len(args) >= 3
	if !lambda {
		for _, a := range args {
			if err := checkValueVariables(a, bound); err != nil {
				return err
			}
		}
		return nil
	}
	inner := make(map[string]bool, len(bound)+2)
	for k := range bound {
		inner[k] = true
	}
	for i, a := range args[:len(args)-1] {
		if err := checkValueVariables(a, bound); err != nil {
			return err
		}
		if i == 0 {
			continue
		}
		if _, ok := a.GetValueType().(*pb.Value_StringValue); !ok {
			return nil
		}
		inner[a.GetStringValue()] = true
	}
	return checkValueVariables(args[len(args)-1], inner)
}

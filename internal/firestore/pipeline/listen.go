package pipeline

import (
	"context"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/loupe-dev/loupe/internal/identity"
)

// realtimeStages are the stages a realtime pipeline (a Listen target) may
// have: a source, then the filters, orders and bounds the SDKs' realtime
// pipelines and their query-to-pipeline listeners send. Anything else
// (writes above all) is refused rather than run again on every commit.
var realtimeStages = map[string]bool{
	"collection": true, "collection_group": true, "database": true, "documents": true,
	"where": true, "sort": true, "limit": true, "offset": true,
}

// Listener returns the reader of a realtime pipeline Listen target: the
// pipeline run for caller as of a read time (zero: now), or the error that
// refuses it.
func Listener(eng *firestore.Engine, caller identity.Principal, database string, sp *pb.StructuredPipeline) firestore.PipelineRead {
	return func(at time.Time) ([]*pb.Document, error) {
		for _, st := range sp.GetPipeline().GetStages() {
			if !realtimeStages[st.GetName()] {
				return nil, invalid("Stage %q is not supported in a realtime pipeline.", st.GetName())
			}
		}
		res, err := Execute(context.Background(), eng, caller, Request{Database: database, Pipeline: sp, Consistency: firestore.Consistency{ReadTime: at}})
		if err != nil {
			return nil, err
		}
		return res.Docs, nil
	}
}

// Scope is what a realtime pipeline reads, for the engine to run it again
// only on commits there: the collection or collection group of its source
// stage; the whole database for any other source, or when an expression
// holds a subquery (which may read anywhere).
func Scope(sp *pb.StructuredPipeline) firestore.PipelineScope {
	stages := sp.GetPipeline().GetStages()
	for _, st := range stages {
		for _, a := range st.GetArgs() {
			if holdsPipeline(a) {
				return firestore.PipelineScope{}
			}
		}
	}
	if len(stages) == 0 {
		return firestore.PipelineScope{}
	}
	args := stages[0].GetArgs()
	switch stages[0].GetName() {
	case "collection":
		if len(args) == 1 {
			return firestore.PipelineScope{Collection: strings.Join(splitPath(args[0].GetReferenceValue()), "/")}
		}
	case "collection_group":
		if len(args) == 2 && args[1].GetStringValue() != "" {
			return firestore.PipelineScope{Collection: args[1].GetStringValue(), Group: true}
		}
	}
	return firestore.PipelineScope{}
}

// holdsPipeline reports whether v is, or holds anywhere inside, a pipeline
// (a subquery).
func holdsPipeline(v *pb.Value) bool {
	switch x := v.GetValueType().(type) {
	case *pb.Value_PipelineValue:
		return true
	case *pb.Value_FunctionValue:
		for _, a := range x.FunctionValue.GetArgs() {
			if holdsPipeline(a) {
				return true
			}
		}
	case *pb.Value_ArrayValue:
		for _, a := range x.ArrayValue.GetValues() {
			if holdsPipeline(a) {
				return true
			}
		}
	case *pb.Value_MapValue:
		for _, a := range x.MapValue.GetFields() {
			if holdsPipeline(a) {
				return true
			}
		}
	}
	return false
}

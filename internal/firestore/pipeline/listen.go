package pipeline

import (
	"context"
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

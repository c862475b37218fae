package pipeline

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
)

// explainLog records, while explaining, how each source was read (the
// query pushed down and the index the engine used, or a scan of the
// whole collection when no filter or order was pushed down) and how
// many rows each stage put out. Its methods do nothing on a nil log.
type explainLog struct {
	lines []string
	json  bool // explain_options.output_format "json": the same as a JSON object
}

func (l *explainLog) source(what string, q *pb.StructuredQuery, index string, pushed, rows int) {
	if l == nil {
		return
	}
	access := "scan"
	if index != "" && q != nil && (q.Where != nil || len(q.OrderBy) > 0) {
		access = "index " + index
	}
	line := fmt.Sprintf("%s: %s", what, access)
	if q != nil && (q.Where != nil || len(q.OrderBy) > 0 || q.Limit != nil || q.Offset > 0) {
		body, _ := protojson.Marshal(&pb.StructuredQuery{Where: q.Where, OrderBy: q.OrderBy, Limit: q.Limit, Offset: q.Offset})
		line += fmt.Sprintf(", %d stage(s) run by the query planner as %s", pushed, body)
	}
	l.lines = append(l.lines, fmt.Sprintf("%s → %d rows", line, rows))
}

func (l *explainLog) stage(st stage, rows int) {
	if l == nil {
		return
	}
	l.lines = append(l.lines, fmt.Sprintf("%s → %d rows", stageName(st), rows))
}

func stageName(st stage) string {
	n := strings.TrimSuffix(strings.TrimPrefix(reflect.TypeOf(st).String(), "*pipeline."), "Stage")
	switch s := st.(type) {
	case *selectStage:
		if s.keep {
			return "add_fields"
		}
	case *sliceStage:
		if s.offset >= 0 {
			return "offset"
		}
		return "limit"
	case *aggregateStage:
		if len(s.accs) == 0 {
			return "distinct"
		}
	}
	return n
}

// text is the explain text after running: one line per source and stage.
func (l *explainLog) text(took time.Duration) string {
	if l.json {
		return toJSON(map[string]any{"execution": l.lines, "executionTime": took.String()})
	}
	return fmt.Sprintf("Execution:\n  %s\nExecution time: %s\n", strings.Join(l.lines, "\n  "), took)
}

// plan is the explain text of a pipeline that is not run.
func (l *explainLog) plan(p *compiled) string {
	var lines []string
	if src, ok := p.source.(*collectionSource); ok {
		q, rest, _ := push(p.stages)
		line := describeSource(src) + " through the query planner"
		if pushed := len(p.stages) - len(rest); pushed > 0 {
			body, _ := protojson.Marshal(q)
			line += fmt.Sprintf(" (%d stage(s): %s)", pushed, body)
		}
		lines = append(lines, line)
		for _, st := range rest {
			lines = append(lines, stageName(st))
		}
	} else {
		lines = append(lines, fmt.Sprintf("%T", p.source))
		for _, st := range p.stages {
			lines = append(lines, stageName(st))
		}
	}
	if l.json {
		return toJSON(map[string]any{"plan": lines})
	}
	return "Plan:\n  " + strings.Join(lines, "\n  ") + "\n"
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

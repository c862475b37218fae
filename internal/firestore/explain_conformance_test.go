package firestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/iterator"
)

func indexesUsed(m *firestore.ExplainMetrics) []map[string]any {
	if m == nil || m.PlanSummary == nil {
		return nil
	}
	var out []map[string]any
	for _, ix := range m.PlanSummary.IndexesUsed {
		out = append(out, *ix)
	}
	return out
}

func collectionIndex(props string) []map[string]any {
	return []map[string]any{{"properties": props, "query_scope": "Collection"}}
}

// TestConformance_ExplainQuery: explain without analyze plans only; with
// analyze it returns the results and then the execution statistics; the
// plan names the index production reads (the figures are those of the Go
// SDK's own integration tests against production).
func TestConformance_ExplainQuery(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	docs := map[string]map[string]any{}
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		docs[id] = map[string]any{"N": i, "city": []string{"x", "y"}[i%2]}
	}
	seed(t, c, "ex", docs)
	q := c.Collection("ex").OrderBy("N", firestore.Asc)

	it := q.WithRunOptions(firestore.ExplainOptions{}).Documents(ctx)
	got, err := it.GetAll()
	if err != nil || len(got) != 0 {
		t.Fatalf("plan only: %d documents, %v", len(got), err)
	}
	m, err := it.ExplainMetrics()
	if err != nil || m.ExecutionStats != nil || !reflect.DeepEqual(indexesUsed(m), collectionIndex("(N ASC, __name__ ASC)")) {
		t.Errorf("plan only: %+v %v %v", m, indexesUsed(m), err)
	}

	// Streamed: the metrics come after the last document.
	it = q.WithRunOptions(firestore.ExplainOptions{Analyze: true}).Documents(ctx)
	var ids []string
	for {
		d, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.Ref.ID)
	}
	m, err = it.ExplainMetrics()
	if err != nil || strings.Join(ids, ",") != "a,b,c,d,e" || m.ExecutionStats == nil {
		t.Fatalf("analyze: %v %+v %v", ids, m, err)
	}
	st := m.ExecutionStats
	if st.ResultsReturned != 5 || st.ReadOperations != 5 || (*st.DebugStats)["documents_scanned"] != "5" || (*st.DebugStats)["index_entries_scanned"] != "5" || st.ExecutionDuration == nil {
		t.Errorf("analyze stats: %+v %v", st, *st.DebugStats)
	}
	if !reflect.DeepEqual(indexesUsed(m), collectionIndex("(N ASC, __name__ ASC)")) {
		t.Errorf("analyze plan: %v", indexesUsed(m))
	}

	for _, tc := range []struct {
		q    firestore.Query
		want []map[string]any
	}{
		{c.Collection("ex").Query, collectionIndex("(__name__ ASC)")},
		{c.Collection("ex").Where("city", "==", "x").OrderBy("N", firestore.Desc), collectionIndex("(city ASC, N DESC, __name__ DESC)")},
		{c.Collection("ex").Where("N", ">", 1).OrderBy("city", firestore.Asc), collectionIndex("(city ASC, N ASC, __name__ ASC)")},
		{c.Collection("ex").Where("city", "==", "x").Where("N", "==", 2), append(collectionIndex("(city ASC, __name__ ASC)"), collectionIndex("(N ASC, __name__ ASC)")...)},
		{c.CollectionGroup("ex").Where("N", "<", 3), []map[string]any{{"properties": "(N ASC, __name__ ASC)", "query_scope": "Collection group"}}},
	} {
		it := tc.q.WithRunOptions(firestore.ExplainOptions{}).Documents(ctx)
		if _, err := it.GetAll(); err != nil {
			t.Fatal(err)
		}
		m, _ := it.ExplainMetrics()
		if got := indexesUsed(m); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("plan = %v, want %v", got, tc.want)
		}
	}

	// REST runQuery: the metrics ride on the last document.
	resp, err := http.Post(inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents:runQuery", "application/json",
		strings.NewReader(`{"structuredQuery":{"from":[{"collectionId":"ex"}],"orderBy":[{"field":{"fieldPath":"N"},"direction":"DESCENDING"}],"limit":2},"explainOptions":{"analyze":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || len(out) != 2 || out[0]["document"] == nil || out[1]["document"] == nil || out[1]["explainMetrics"] == nil {
		t.Fatalf("REST explain: %v %v", out, err)
	}
	if s, _ := json.Marshal(out[1]["explainMetrics"]); !strings.Contains(string(s), `"properties":"(N DESC, __name__ DESC)"`) || !strings.Contains(string(s), `"resultsReturned":"2"`) {
		t.Errorf("REST explain metrics: %s", s)
	}

	// Explain reads outside transactions only.
	resp, err = http.Post(inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents:beginTransaction", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var txn struct{ Transaction string }
	_ = json.NewDecoder(resp.Body).Decode(&txn)
	resp.Body.Close()
	resp, err = http.Post(inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents:runQuery", "application/json",
		strings.NewReader(`{"structuredQuery":{"from":[{"collectionId":"ex"}]},"transaction":"`+txn.Transaction+`","explainOptions":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "INVALID_ARGUMENT") {
		t.Errorf("explain in a transaction: %d %s", resp.StatusCode, body)
	}
}

// TestConformance_ExplainAggregation: the Go SDK's integration test against
// production, replayed: count, sum and avg of three documents read three
// index entries and no document, billed one read.
func TestConformance_ExplainAggregation(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	seed(t, c, "agg", map[string]map[string]any{
		"a": {"weight": 0.5, "height": 99, "model": "A"},
		"b": {"weight": 0.5, "height": 98, "model": "A"},
		"c": {"weight": 0.5, "height": 97, "model": "B"},
	})
	aq := func(opts ...firestore.RunOption) *firestore.AggregationQuery {
		q := c.Collection("agg").Where("weight", "<=", 1).WithRunOptions(opts...)
		return q.NewAggregationQuery().
			WithCount("count1").WithAvg("weight", "weight_avg1").WithSum("weight", "weight_sum1")
	}
	plan := collectionIndex("(weight ASC, __name__ ASC)")
	res, err := aq(firestore.ExplainOptions{}).GetResponse(ctx)
	if err != nil || res.Result != nil || res.ExplainMetrics == nil || res.ExplainMetrics.ExecutionStats != nil || !reflect.DeepEqual(indexesUsed(res.ExplainMetrics), plan) {
		t.Fatalf("plan only: %+v %v", res, err)
	}
	res, err = aq(firestore.ExplainOptions{Analyze: true}).GetResponse(ctx)
	if err != nil || res.ExplainMetrics == nil || res.ExplainMetrics.ExecutionStats == nil {
		t.Fatalf("analyze: %+v %v", res, err)
	}
	if res.Result["count1"].(*firestorepb.Value).GetIntegerValue() != 3 {
		t.Errorf("count = %v", res.Result["count1"])
	}
	st := res.ExplainMetrics.ExecutionStats
	if st.ResultsReturned != 1 || st.ReadOperations != 1 || (*st.DebugStats)["documents_scanned"] != "0" || (*st.DebugStats)["index_entries_scanned"] != "3" {
		t.Errorf("stats: %+v %v", st, *st.DebugStats)
	}
	if !reflect.DeepEqual(indexesUsed(res.ExplainMetrics), plan) {
		t.Errorf("plan: %v", indexesUsed(res.ExplainMetrics))
	}
}

// TestConformance_ExplainScanCounts: analyze reports what the executor read,
// which is more than it returns when the index cannot serve a filter, when
// a limit is reached past rows the filter drops, or when a union meets the
// same document twice. Reads bill the documents read, plus index entries
// (one read per 1,000) only with range filters on several fields, and at
// least one read, as production bills them.
func TestConformance_ExplainScanCounts(t *testing.T) {
	ctx := context.Background()
	_, c := start(t)
	docs := map[string]map[string]any{}
	for i := range 10 {
		d := map[string]any{"N": i, "M": 9 - i, "city": []string{"x", "y"}[i%2]}
		if i < 3 {
			d["tags"] = [][]string{{"a", "b"}, {"a"}, {"c"}}[i]
		}
		docs[fmt.Sprint("d", i)] = d
	}
	seed(t, c, "scan", docs)
	coll := c.Collection("scan")

	type counts struct {
		results, reads        int64
		entries, docs, billed string
		minCost               string
	}
	got := func(st *firestore.ExecutionStats) counts {
		debug := *st.DebugStats
		billing, _ := debug["billing_details"].(map[string]any)
		return counts{st.ResultsReturned, st.ReadOperations, fmt.Sprint(debug["index_entries_scanned"]),
			fmt.Sprint(debug["documents_scanned"]), fmt.Sprint(billing["index_entries_billable"]), fmt.Sprint(billing["min_query_cost"])}
	}
	for _, tc := range []struct {
		name string
		q    firestore.Query
		want counts
	}{
		// != is no index range: every city row and document is read.
		{"not-equal", coll.Where("city", "!=", "x"), counts{5, 10, "10", "10", "0", "0"}},
		// The five x rows come first and are dropped; the limit stops the read at the second y.
		{"not-equal limit", coll.Where("city", "!=", "x").Limit(2), counts{2, 7, "7", "7", "0", "0"}},
		// Rows in full query order: the read stops at the limit.
		{"limit", coll.OrderBy("N", firestore.Asc).Limit(3), counts{3, 3, "3", "3", "0", "0"}},
		// Two range fields, ordered M then N: M's index from 5 up (d0–d4),
		// N filtered per document; the entries are billed too.
		{"two ranges", coll.Where("N", ">=", 2).Where("M", ">=", 5), counts{3, 6, "5", "5", "5", "0"}},
		// d0 has both tags: three rows, two documents.
		{"array-contains-any union", coll.Where("tags", "array-contains-any", []string{"a", "b"}), counts{2, 2, "3", "2", "0", "0"}},
		{"in union", coll.Where("N", "in", []int{1, 3, 42}), counts{2, 2, "2", "2", "0", "0"}},
		// d0 is in both members of the or.
		{"or union", coll.WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{
			firestore.PropertyFilter{Path: "N", Operator: "==", Value: 0},
			firestore.PropertyFilter{Path: "city", Operator: "==", Value: "x"},
		}}), counts{5, 5, "6", "5", "0", "0"}},
		// Nothing read still costs one read.
		{"empty", coll.Where("N", "==", 42), counts{0, 1, "0", "0", "0", "1"}},
	} {
		it := tc.q.WithRunOptions(firestore.ExplainOptions{Analyze: true}).Documents(ctx)
		all, err := it.GetAll()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		m, err := it.ExplainMetrics()
		if err != nil || m.ExecutionStats == nil {
			t.Fatalf("%s: %+v %v", tc.name, m, err)
		}
		if g := got(m.ExecutionStats); g != tc.want || int64(len(all)) != g.results {
			t.Errorf("%s: %d documents, stats %+v, want %+v", tc.name, len(all), g, tc.want)
		}
	}

	// FindNearest compares every vector of the field (those of the query's
	// dimension) and reads the documents it returns.
	seed(t, c, "vec", map[string]map[string]any{
		"v0": {"v": firestore.Vector64{1, 0}}, "v1": {"v": firestore.Vector64{0, 1}},
		"v2": {"v": firestore.Vector64{1, 1}}, "v3": {"v": "not a vector"},
	})
	it := c.Collection("vec").WithRunOptions(firestore.ExplainOptions{Analyze: true}).
		FindNearest("v", firestore.Vector64{1, 0}, 2, firestore.DistanceMeasureEuclidean, nil).Documents(ctx)
	if all, err := it.GetAll(); err != nil || len(all) != 2 {
		t.Fatalf("FindNearest: %d documents, %v", len(all), err)
	}
	if m, err := it.ExplainMetrics(); err != nil || m.ExecutionStats == nil {
		t.Errorf("FindNearest: %+v %v", m, err)
	} else if g, want := got(m.ExecutionStats), (counts{2, 2, "3", "2", "0", "0"}); g != want {
		t.Errorf("FindNearest: stats %+v, want %+v", g, want)
	}

	// Aggregations: the index rows read, no document, one read per 1,000 rows.
	for _, tc := range []struct {
		name  string
		q     firestore.Query
		count int64
		want  counts
	}{
		// Counted from city's index alone.
		{"count from index", coll.Where("city", "==", "x"), 5, counts{1, 1, "5", "0", "5", "0"}},
		{"count limit", coll.Limit(2), 2, counts{1, 1, "2", "0", "2", "0"}},
		// != needs the documents: every city row is read.
		{"count not-equal", coll.Where("city", "!=", "x"), 5, counts{1, 1, "10", "0", "10", "0"}},
	} {
		q := tc.q.WithRunOptions(firestore.ExplainOptions{Analyze: true})
		res, err := q.NewAggregationQuery().WithCount("n").GetResponse(ctx)
		if err != nil || res.ExplainMetrics == nil || res.ExplainMetrics.ExecutionStats == nil {
			t.Fatalf("%s: %+v %v", tc.name, res, err)
		}
		if n := res.Result["n"].(*firestorepb.Value).GetIntegerValue(); n != tc.count {
			t.Errorf("%s: count = %d, want %d", tc.name, n, tc.count)
		}
		if g := got(res.ExplainMetrics.ExecutionStats); g != tc.want {
			t.Errorf("%s: stats %+v, want %+v", tc.name, g, tc.want)
		}
	}
}

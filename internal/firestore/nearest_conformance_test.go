package firestore_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
)

// nearestFixture writes 2-dimensional vectors (and documents FindNearest
// must pass over) into collection "near".
func nearestFixture(t *testing.T, c *firestore.Client) {
	t.Helper()
	seed(t, c, "near", map[string]map[string]any{
		"a":     {"v": firestore.Vector64{1, 0}, "color": "red"},
		"b":     {"v": firestore.Vector64{0, 1}, "color": "blue"},
		"c":     {"v": firestore.Vector64{1, 1}, "color": "red"},
		"d":     {"v": firestore.Vector64{3, 4}, "color": "red"},
		"e":     {"v": firestore.Vector32{-1, 0}, "color": "red"},
		"z":     {"v": firestore.Vector64{0, 0}, "color": "blue"},
		"three": {"v": firestore.Vector64{1, 0, 0}, "color": "red"},
		"array": {"v": []float64{1, 0}, "color": "red"},
		"none":  {"color": "red"},
	})
}

func vectorIDs(t *testing.T, q firestore.VectorQuery) string {
	t.Helper()
	snaps, err := q.Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatalf("find nearest: %v", err)
	}
	var out []string
	for _, s := range snaps {
		out = append(out, s.Ref.ID)
	}
	return strings.Join(out, ",")
}

// TestConformance_FindNearest: exact nearest neighbours by each distance,
// with limits, pre-filters, thresholds and the distance returned; documents
// without a vector of the query's dimension never match.
func TestConformance_FindNearest(t *testing.T) {
	ctx := context.Background()
	inst, c := start(t)
	nearestFixture(t, c)
	coll := c.Collection("near")
	q := firestore.Vector64{1, 0}
	for _, tc := range []struct {
		name string
		q    firestore.VectorQuery
		want string
	}{
		{"euclidean", coll.FindNearest("v", q, 10, firestore.DistanceMeasureEuclidean, nil), "a,c,z,b,e,d"},
		{"euclidean limit", coll.FindNearest("v", q, 3, firestore.DistanceMeasureEuclidean, nil), "a,c,z"},
		{"cosine skips the zero vector", coll.FindNearest("v", []float32{1, 0}, 10, firestore.DistanceMeasureCosine, nil), "a,c,d,b,e"},
		{"dot product, largest first", coll.FindNearest("v", q, 10, firestore.DistanceMeasureDotProduct, nil), "d,a,c,b,z,e"},
		{"euclidean threshold", coll.FindNearest("v", q, 10, firestore.DistanceMeasureEuclidean, &firestore.FindNearestOptions{DistanceThreshold: firestore.Ptr(1.5)}), "a,c,z,b"},
		{"dot product threshold is a floor", coll.FindNearest("v", q, 10, firestore.DistanceMeasureDotProduct, &firestore.FindNearestOptions{DistanceThreshold: firestore.Ptr(1.0)}), "d,a,c"},
		{"pre-filter", coll.Where("color", "==", "red").FindNearest("v", q, 2, firestore.DistanceMeasureEuclidean, nil), "a,c"},
		{"pre-filter and threshold", coll.Where("color", "==", "blue").FindNearest("v", q, 5, firestore.DistanceMeasureCosine, &firestore.FindNearestOptions{DistanceThreshold: firestore.Ptr(0.5)}), ""},
		{"absent field", coll.FindNearest("missing", q, 10, firestore.DistanceMeasureEuclidean, nil), ""},
		{"not a vector", coll.FindNearest("color", q, 10, firestore.DistanceMeasureEuclidean, nil), ""},
		{"three dimensions", coll.FindNearest("v", firestore.Vector64{1, 0, 0}, 10, firestore.DistanceMeasureEuclidean, nil), "three"},
	} {
		if got := vectorIDs(t, tc.q); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}

	// The search index follows later writes.
	if _, err := c.Doc("near/a").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("near/b").Set(ctx, map[string]any{"v": firestore.Vector64{1, 0.5}}); err != nil {
		t.Fatal(err)
	}
	if got := vectorIDs(t, coll.FindNearest("v", q, 3, firestore.DistanceMeasureEuclidean, nil)); got != "b,c,z" {
		t.Errorf("after a delete and an update: %q, want b,c,z", got)
	}
	seed(t, c, "near", map[string]map[string]any{"a": {"v": firestore.Vector64{1, 0}, "color": "red"}, "b": {"v": firestore.Vector64{0, 1}, "color": "blue"}})

	snaps, err := coll.FindNearest("v", q, 3, firestore.DistanceMeasureEuclidean, &firestore.FindNearestOptions{DistanceResultField: "dist"}).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0, 1, 1} {
		if got, _ := snaps[i].DataAt("dist"); got != want {
			t.Errorf("%s dist = %v, want %v", snaps[i].Ref.ID, got, want)
		}
	}
	if d, _ := c.Doc("near/a").Get(ctx); d.Data()["dist"] != nil {
		t.Error("the distance field was stored in the document")
	}
	snaps, _ = coll.FindNearest("v", q, 1, firestore.DistanceMeasureCosine, &firestore.FindNearestOptions{DistanceResultField: "m.cos"}).Documents(ctx).GetAll()
	if len(snaps) != 1 {
		t.Fatalf("cosine limit 1: %d documents", len(snaps))
	}
	if got, _ := snaps[0].DataAt("m.cos"); got != 0.0 || snaps[0].Data()["color"] != "red" {
		t.Errorf("nested distance field: %v", snaps[0].Data())
	}

	// REST runQuery speaks the same stage.
	body := `{"structuredQuery":{"from":[{"collectionId":"near"}],"findNearest":{"vectorField":{"fieldPath":"v"},` +
		`"queryVector":{"mapValue":{"fields":{"__type__":{"stringValue":"__vector__"},"value":{"arrayValue":{"values":[{"doubleValue":3},{"doubleValue":4}]}}}}},` +
		`"distanceMeasure":"EUCLIDEAN","limit":1,"distanceResultField":"d"}}}`
	resp, err := http.Post(inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents:runQuery", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(out), "documents/near/d") || !strings.Contains(string(out), `"d":{"doubleValue":0}`) || strings.Contains(string(out), "near/a") {
		t.Errorf("REST findNearest: %d %s", resp.StatusCode, out)
	}
}

// TestConformance_FindNearestBadArguments: Firestore's INVALID_ARGUMENT for
// each malformed FindNearest stage, through gRPC and REST.
func TestConformance_FindNearestBadArguments(t *testing.T) {
	inst, c := start(t)
	nearestFixture(t, c)
	coll := c.Collection("near")
	big := make(firestore.Vector64, 2049)
	for _, tc := range []struct {
		name string
		q    firestore.VectorQuery
		msg  string
	}{
		{"limit 0", coll.FindNearest("v", firestore.Vector64{1, 0}, 0, firestore.DistanceMeasureEuclidean, nil), "limit must be a positive integer of no more than 1000"},
		{"limit 1001", coll.FindNearest("v", firestore.Vector64{1, 0}, 1001, firestore.DistanceMeasureEuclidean, nil), "limit must be a positive integer of no more than 1000"},
		{"empty vector", coll.FindNearest("v", firestore.Vector64{}, 5, firestore.DistanceMeasureEuclidean, nil), "between 1 and 2048 dimensions"},
		{"2049 dimensions", coll.FindNearest("v", big, 5, firestore.DistanceMeasureEuclidean, nil), "between 1 and 2048 dimensions, not 2049"},
		{"no measure", coll.FindNearest("v", firestore.Vector64{1, 0}, 5, firestore.DistanceMeasure(0), nil), "distance_measure"},
		{"with limit", coll.Limit(3).FindNearest("v", firestore.Vector64{1, 0}, 5, firestore.DistanceMeasureEuclidean, nil), "cannot be combined"},
		{"with a cursor", coll.OrderBy("v", firestore.Asc).StartAt(1).FindNearest("v", firestore.Vector64{1, 0}, 5, firestore.DistanceMeasureEuclidean, nil), "cannot be combined"},
	} {
		_, err := tc.q.Documents(context.Background()).GetAll()
		wantCode(t, err, codes.InvalidArgument, tc.msg)
	}
	// A plain array is not a query vector.
	body := `{"structuredQuery":{"from":[{"collectionId":"near"}],"findNearest":{"vectorField":{"fieldPath":"v"},` +
		`"queryVector":{"arrayValue":{"values":[{"doubleValue":1},{"doubleValue":0}]}},"distanceMeasure":"COSINE","limit":3}}}`
	resp, err := http.Post(inst.URL+"/v1/projects/demo-loupe/databases/(default)/documents:runQuery", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(out), "INVALID_ARGUMENT") || !strings.Contains(string(out), "Query Value must be of type vector.") {
		t.Errorf("array query vector: %d %s", resp.StatusCode, out)
	}
}

package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// benchClient starts loupe serve with the functions process and returns an
// Admin SDK Firestore client on it and loupe's base URL.
func benchClient(b *testing.B) (*firestore.Client, string) {
	b.Helper()
	inst, _ := startWithFunctions(b)
	b.Setenv("FIRESTORE_EMULATOR_HOST", inst.Host)
	db, err := firestore.NewClient(context.Background(), "demo-loupe")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db, inst.URL
}

// firstDelivery polls the delivery log until trigger has delivered an event
// of document, and returns that attempt.
func firstDelivery(b *testing.B, loupeURL, trigger, document string) triggers.Attempt {
	b.Helper()
	target := loupeURL + "/emulator/v1/functions/events?" + url.Values{"trigger": {trigger}, "document": {document}}.Encode()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		resp, err := http.Get(target)
		if err != nil {
			b.Fatal(err)
		}
		var out struct{ Events []triggers.Attempt }
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range out.Events {
			if a.Delivered {
				return a
			}
		}
	}
	b.Fatalf("%s never delivered %s", trigger, document)
	return triggers.Attempt{}
}

// BenchmarkFunctions_CommitToFunctionStart measures, through loupe serve and
// the real functions process, the time from a comment's commit to the start
// of its CloudEvent POST to the comment-counters function (p50, p99; target
// p50 < 10 ms), and how long the function took to answer.
func BenchmarkFunctions_CommitToFunctionStart(b *testing.B) {
	ctx := context.Background()
	db, loupeURL := benchClient(b)
	comments := db.Collection("feedbackRequests").Doc("bench").Collection("comments")
	var start, answer []time.Duration
	b.ResetTimer()
	for i := range b.N {
		doc := comments.Doc(fmt.Sprint("c", i))
		if _, err := doc.Set(ctx, map[string]any{"userId": "bench", "content": "timing", "isReply": false, "deleted": false}); err != nil {
			b.Fatal(err)
		}
		a := firstDelivery(b, loupeURL, "comment-counters", "feedbackRequests/bench/comments/"+doc.ID)
		start, answer = append(start, a.Latency), append(answer, a.Duration)
	}
	b.StopTimer()
	reportPercentiles(b, start, "start")
	reportPercentiles(b, answer, "answer")
}

func reportPercentiles(b *testing.B, ds []time.Duration, name string) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, name+"-p99-ms")
}

// BenchmarkFunctions_SustainedEvents creates b.N replies from 16 writers,
// spread over 64 parent comments, through loupe serve and the real functions
// process, and waits until the comment-counters function has applied every
// one (the parents' repliesCount add up to b.N): replies per second from the
// first commit until the last count landed. A lost or doubled event fails
// the benchmark.
func BenchmarkFunctions_SustainedEvents(b *testing.B) {
	ctx := context.Background()
	db, _ := benchClient(b)
	comments := db.Collection("feedbackRequests").Doc("bench").Collection("comments")
	const parents, writers = 64, 16
	for p := range parents {
		if _, err := comments.Doc(fmt.Sprint("p", p)).Set(ctx, map[string]any{"userId": "bench", "content": "parent",
			"isReply": false, "deleted": false, "repliesCount": 0}); err != nil {
			b.Fatal(err)
		}
	}
	total := func() int64 {
		parents, err := comments.Where("isReply", "==", false).Documents(ctx).GetAll()
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for _, p := range parents {
			v, _ := p.DataAt("repliesCount")
			c, _ := v.(int64)
			n += c
		}
		return n
	}
	b.ResetTimer()
	began := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if _, err := comments.Doc(fmt.Sprint("r", i)).Set(ctx, map[string]any{"userId": "bench", "content": "reply",
					"isReply": true, "parentCommentId": fmt.Sprint("p", i%parents), "deleted": false}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		n := total()
		if n == int64(b.N) {
			break
		}
		if n > int64(b.N) || time.Now().After(deadline) {
			b.Fatalf("the parents count %d replies, want %d", n, b.N)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "events/s")
}

package firestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/loupetest"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The differential test runs the same seeded sequence of operations through
// the Go client against loupe and against Google's official Cloud Firestore
// emulator (the Cloud SDK's `gcloud emulators firestore`), and compares every
// answer: documents read, query results in order, aggregations, listener
// snapshots and error codes. Where the official emulator is known to differ
// from production the generator does not produce that case; docs/fidelity.md
// lists each with its evidence.
//
// `go test ./internal/firestore -run TestDifferential` runs a short fixed
// slice (make test); LOUPE_DIFFERENTIAL_SEEDS=N runs N seeds (make
// differential runs 200).

// differentialSteps is the number of operations per seed.
const differentialSteps = 150

func TestDifferential_AgainstTheOfficialEmulator(t *testing.T) {
	official := startOfficialFirestore(t)
	loupe := loupetest.Start(t, loupetest.Options{InMemory: true})
	oc := clientFor(t, official)
	lc := clientFor(t, loupe.Host)
	seeds := 3
	if n, err := strconv.Atoi(os.Getenv("LOUPE_DIFFERENTIAL_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			g := &generator{r: rand.New(rand.NewPCG(uint64(seed), 0x10ad)), coll: fmt.Sprintf("diff%d", seed)}
			for step := range differentialSteps {
				o := g.next()
				want := o.run(oc, g.coll)
				got := o.run(lc, g.coll)
				if comparable(got) != comparable(want) {
					t.Fatalf("seed %d step %d: %s\nofficial emulator: %s\nloupe:             %s", seed, step, o.desc, want, got)
				}
			}
		})
	}
}

// startOfficialFirestore starts the Cloud SDK's Firestore emulator on a free
// port in its own process group and returns its host:port; the test skips
// where the emulator is not installed.
func startOfficialFirestore(t *testing.T) string {
	t.Helper()
	gcloud, err := exec.LookPath("gcloud")
	if err != nil {
		t.Skip("the official Firestore emulator is not installed (gcloud not found): the differential test did not run")
	}
	if _, err := os.Stat("/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator"); err != nil {
		t.Skip("the official Firestore emulator is not installed (apt package google-cloud-cli-firestore-emulator): the differential test did not run")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	cmd := exec.Command(gcloud, "emulators", "firestore", "start", "--host-port="+host)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		var log strings.Builder
		s := bufio.NewScanner(out)
		for s.Scan() {
			log.WriteString(s.Text() + "\n")
			if strings.Contains(s.Text(), "Dev App Server is now running") {
				ready <- nil
				for s.Scan() {
				}
				return
			}
		}
		ready <- errors.New("the official emulator stopped before it was ready:\n" + log.String())
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the official emulator was not ready after 2 minutes")
	}
	return host
}

// clientFor is a Go client in emulator mode for the emulator at host.
func clientFor(t *testing.T, host string) *firestore.Client {
	t.Helper()
	t.Setenv("FIRESTORE_EMULATOR_HOST", host)
	c, err := firestore.NewClient(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// operation is one generated step: desc says what it does, run does it
// through a client and renders what the client saw.
type operation struct {
	desc string
	run  func(c *firestore.Client, coll string) string
}

type generator struct {
	r    *rand.Rand
	coll string
}

// docIDs are the document ids the operations touch: plain, numeric-looking,
// upper and lower case, non-ASCII, punctuation.
var docIDs = []string{"a", "b", "B", "c", "1", "10", "2", "é", "日本", "a b", "-", "~"}

// values are the values the operations write: every type, with the edges
// of each (zero, negative zero, NaN, infinities, extremes, empty).
var values = []any{
	nil, true, false,
	int64(-1), int64(0), int64(1), int64(2), int64(1<<53 + 1), int64(math.MaxInt64), int64(math.MinInt64),
	math.Copysign(0, -1), 0.5, 1.0, 2.5, -1.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e300,
	"", "a", "B", "b", "é", "日本", "😀", "a\x00b",
	time.Unix(100, 123456000).UTC(), time.Unix(0, 0).UTC(),
	[]byte{}, []byte{0, 1}, []byte{255},
	&latlng.LatLng{Latitude: 1, Longitude: 2}, &latlng.LatLng{Latitude: -90, Longitude: 180},
	ref("a"), ref("b"),
	[]any{}, []any{int64(1), "a"}, []any{nil, 1.5}, []any{int64(1)},
	map[string]any{}, map[string]any{"x": int64(1)}, map[string]any{"a": map[string]any{"b": int64(1)}},
}

// ref is a reference value to a document of the operation's collection,
// made per client.
type ref string

func (g *generator) id() string   { return docIDs[g.r.IntN(len(docIDs))] }
func (g *generator) value() any   { return values[g.r.IntN(len(values))] }
func (g *generator) small() any   { return int64(g.r.IntN(5)) }
func (g *generator) chance() bool { return g.r.IntN(2) == 0 }

// data is a document's fields: v any value, n a small number, tags an
// array, m a map, each present or not.
func (g *generator) data() map[string]any {
	d := map[string]any{}
	if g.r.IntN(4) > 0 {
		d["v"] = g.value()
	}
	if g.r.IntN(4) > 0 {
		d["n"] = g.small()
	}
	if g.chance() {
		d["tags"] = []any{fmt.Sprint("t", g.r.IntN(3)), fmt.Sprint("t", g.r.IntN(3))}
	}
	if g.chance() {
		d["m"] = map[string]any{"x": g.small()}
	}
	return d
}

func (g *generator) next() operation {
	switch k := g.r.IntN(100); {
	case k < 20:
		return g.set()
	case k < 27:
		return g.create()
	case k < 40:
		return g.update()
	case k < 46:
		return g.delete()
	case k < 52:
		return g.batch()
	case k < 57:
		return g.transaction()
	case k < 65:
		return g.get()
	case k < 88:
		return g.query(false)
	case k < 94:
		return g.query(true)
	default:
		return g.aggregate()
	}
}

func (g *generator) set() operation {
	id, d, merge := g.id(), g.data(), g.r.IntN(3) == 0
	return operation{fmt.Sprintf("set %s %s merge=%v", id, render(d), merge), func(c *firestore.Client, coll string) string {
		var opts []firestore.SetOption
		if merge {
			opts = append(opts, firestore.MergeAll)
		}
		_, err := c.Collection(coll).Doc(id).Set(ctx(), resolve(c, coll, d), opts...)
		return outcome(err)
	}}
}

func (g *generator) create() operation {
	id, d := g.id(), g.data()
	return operation{fmt.Sprintf("create %s %s", id, render(d)), func(c *firestore.Client, coll string) string {
		_, err := c.Collection(coll).Doc(id).Create(ctx(), resolve(c, coll, d))
		return outcome(err)
	}}
}

// updates are field updates of every kind: values, transforms, deletes.
func (g *generator) updates() ([]firestore.Update, string) {
	var ups []firestore.Update
	var desc []string
	for range 1 + g.r.IntN(3) {
		var u firestore.Update
		var d string
		switch g.r.IntN(8) {
		case 0:
			u = firestore.Update{Path: "v", Value: g.value()}
		case 1:
			n := g.value()
			u, d = firestore.Update{Path: "n", Value: firestore.Increment(n)}, "n+="+render(n)
		case 2:
			u = firestore.Update{Path: "m.x", Value: g.small()}
		case 3:
			// Not an array: the official emulator stores an array in an
			// array through arrayUnion, which production refuses as it
			// refuses nested arrays everywhere (docs/fidelity.md).
			t, v := fmt.Sprint("t", g.r.IntN(3)), g.value()
			if _, isArray := v.([]any); isArray {
				v = g.small()
			}
			u, d = firestore.Update{Path: "tags", Value: firestore.ArrayUnion(t, v)}, fmt.Sprintf("tags∪{%q,%s}", t, render(v))
		case 4:
			t := fmt.Sprint("t", g.r.IntN(3))
			u, d = firestore.Update{Path: "tags", Value: firestore.ArrayRemove(t)}, fmt.Sprintf("tags∖{%q}", t)
		case 5:
			u, d = firestore.Update{Path: "v", Value: firestore.Delete}, "v deleted"
		case 6:
			n := g.value()
			u, d = firestore.Update{Path: "n", Value: firestore.FieldTransformMaximum(n)}, "n=max(n,"+render(n)+")"
		default:
			u = firestore.Update{Path: "w", Value: g.value()}
		}
		if d == "" {
			d = u.Path + "=" + render(u.Value)
		}
		ups = append(ups, u)
		desc = append(desc, d)
	}
	return ups, strings.Join(desc, " ")
}

func (g *generator) update() operation {
	id := g.id()
	ups, desc := g.updates()
	return operation{fmt.Sprintf("update %s %s", id, desc), func(c *firestore.Client, coll string) string {
		_, err := c.Collection(coll).Doc(id).Update(ctx(), resolveUpdates(c, coll, ups))
		return outcome(err)
	}}
}

func (g *generator) delete() operation {
	id, exists := g.id(), g.chance()
	return operation{fmt.Sprintf("delete %s exists=%v", id, exists), func(c *firestore.Client, coll string) string {
		var pre []firestore.Precondition
		if exists {
			pre = append(pre, firestore.Exists)
		}
		_, err := c.Collection(coll).Doc(id).Delete(ctx(), pre...)
		return outcome(err)
	}}
}

func (g *generator) batch() operation {
	type write struct {
		id     string
		d      map[string]any
		ups    []firestore.Update
		delete bool
	}
	var ws []write
	var desc []string
	for range 2 + g.r.IntN(3) {
		w := write{id: g.id()}
		switch g.r.IntN(3) {
		case 0:
			w.d = g.data()
			desc = append(desc, "set "+w.id+" "+render(w.d))
		case 1:
			var d string
			w.ups, d = g.updates()
			desc = append(desc, "update "+w.id+" "+d)
		default:
			w.delete = true
			desc = append(desc, "delete "+w.id)
		}
		ws = append(ws, w)
	}
	return operation{"batch [" + strings.Join(desc, "; ") + "]", func(c *firestore.Client, coll string) string {
		//lint:ignore SA1019 WriteBatch is the SDKs' batched Commit, which both emulators serve
		b := c.Batch()
		for _, w := range ws {
			doc := c.Collection(coll).Doc(w.id)
			switch {
			case w.d != nil:
				b.Set(doc, resolve(c, coll, w.d))
			case w.ups != nil:
				b.Update(doc, resolveUpdates(c, coll, w.ups))
			default:
				b.Delete(doc)
			}
		}
		_, err := b.Commit(ctx())
		return outcome(err)
	}}
}

func (g *generator) transaction() operation {
	from, to := g.id(), g.id()
	return operation{fmt.Sprintf("transaction: read %s, set %s.n to its n+1", from, to), func(c *firestore.Client, coll string) string {
		err := c.RunTransaction(ctx(), func(_ context.Context, tx *firestore.Transaction) error {
			snap, err := tx.Get(c.Collection(coll).Doc(from))
			if err != nil && status.Code(err) != codes.NotFound {
				return err
			}
			n := int64(0)
			if snap.Exists() {
				if v, ok := snap.Data()["n"].(int64); ok {
					n = v
				}
			}
			return tx.Set(c.Collection(coll).Doc(to), map[string]any{"n": n + 1}, firestore.MergeAll)
		}, firestore.MaxAttempts(1))
		return outcome(err)
	}}
}

func (g *generator) get() operation {
	id := g.id()
	return operation{"get " + id, func(c *firestore.Client, coll string) string {
		snap, err := c.Collection(coll).Doc(id).Get(ctx())
		if err != nil {
			return outcome(err)
		}
		return render(snap.Data())
	}}
}

// filterOps are the operators a generated filter uses.
var filterOps = []string{"==", "!=", "<", "<=", ">", ">=", "in", "not-in", "array-contains", "array-contains-any"}

// filter is a random filter on v, n or tags; a list operand for the list
// operators.
func (g *generator) filter() firestore.PropertyFilter {
	op := filterOps[g.r.IntN(len(filterOps))]
	path := []string{"v", "n", "tags", "m.x"}[g.r.IntN(4)]
	var operand any
	switch op {
	case "in", "not-in", "array-contains-any":
		operand = []any{g.value(), g.small()}
	default:
		if g.chance() {
			operand = g.small()
		} else {
			operand = g.value()
		}
	}
	return firestore.PropertyFilter{Path: path, Operator: op, Value: operand}
}

func (g *generator) query(listen bool) operation {
	var filters []firestore.EntityFilter
	var desc []string
	for range g.r.IntN(3) {
		f := g.filter()
		filters = append(filters, f)
		desc = append(desc, fmt.Sprintf("%s %s %s", f.Path, f.Operator, render(f.Value)))
	}
	or := len(filters) > 1 && g.chance()
	order := ""
	dir := firestore.Asc
	if g.chance() {
		order = []string{"v", "n", "m.x", firestore.DocumentID}[g.r.IntN(4)]
		// Ordered by the key alone, descending: the official emulator
		// refuses it ("Firestore does not support descending key scans");
		// production serves it from a __name__ DESC single-field index
		// (docs/fidelity.md).
		if g.chance() && order != firestore.DocumentID {
			dir = firestore.Desc
		}
		desc = append(desc, fmt.Sprintf("order by %s %v", order, dir))
	}
	limit := 0
	if g.chance() {
		limit = 1 + g.r.IntN(4)
		desc = append(desc, fmt.Sprintf("limit %d", limit))
	}
	var cursor any
	if order != "" && order != firestore.DocumentID && g.r.IntN(3) == 0 {
		cursor = g.value()
		desc = append(desc, "start after "+render(cursor))
	}
	kind := "query"
	if listen {
		kind = "listen"
	}
	return operation{kind + " " + strings.Join(desc, ", ") + fmt.Sprintf(" or=%v", or), func(c *firestore.Client, coll string) string {
		q := c.Collection(coll).Query
		resolved := make([]firestore.EntityFilter, len(filters))
		for i, f := range filters {
			pf := f.(firestore.PropertyFilter)
			pf.Value = resolveValue(c, coll, pf.Value)
			resolved[i] = pf
		}
		switch {
		case or:
			q = q.WhereEntity(firestore.OrFilter{Filters: resolved})
		case len(resolved) > 0:
			q = q.WhereEntity(firestore.AndFilter{Filters: resolved})
		}
		if order != "" {
			q = q.OrderBy(order, dir)
		}
		if cursor != nil {
			q = q.StartAfter(resolveValue(c, coll, cursor))
		}
		if limit > 0 {
			q = q.Limit(limit)
		}
		var docs []*firestore.DocumentSnapshot
		var err error
		if listen {
			it := q.Snapshots(ctx())
			var snap *firestore.QuerySnapshot
			if snap, err = it.Next(); err == nil {
				docs, err = snap.Documents.GetAll()
			}
			it.Stop()
			if err != nil {
				// A listen is compared by whether it is refused: the
				// official emulator refuses some invalid queries with
				// FAILED_PRECONDITION on Listen where its RunQuery says
				// INVALID_ARGUMENT (docs/fidelity.md).
				return "listen refused" + messageSeparator + outcome(err)
			}
		} else {
			docs, err = q.Documents(ctx()).GetAll()
		}
		if err != nil {
			return outcome(err)
		}
		var out []string
		for _, d := range docs {
			out = append(out, d.Ref.ID+"="+render(d.Data()))
		}
		return "[" + strings.Join(out, " ") + "]"
	}}
}

func (g *generator) aggregate() operation {
	f := g.filter()
	return operation{fmt.Sprintf("count, sum(n), avg(n) where %s %s %s", f.Path, f.Operator, render(f.Value)), func(c *firestore.Client, coll string) string {
		pf := f
		pf.Value = resolveValue(c, coll, pf.Value)
		q := c.Collection(coll).WhereEntity(pf)
		a := q.NewAggregationQuery().WithCount("c").WithSum("n", "s").WithAvg("n", "a")
		res, err := a.Get(ctx())
		if err != nil {
			return outcome(err)
		}
		return render(res.Data())
	}}
}

// ctx is every operation's context: the test's deadline bounds them.
func ctx() context.Context { return context.Background() }

// outcome renders an operation's error: ok, or its gRPC code and message.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if s, ok := status.FromError(err); ok {
		return "error " + s.Code().String() + messageSeparator + s.Message()
	}
	return "error " + err.Error()
}

// messageSeparator divides an error's code from its message: the test
// compares codes (the two emulators word many messages differently) and
// shows the messages of a difference.
const messageSeparator = " — "

// comparable is what of an outcome the two emulators must agree on.
func comparable(outcome string) string {
	code, _, _ := strings.Cut(outcome, messageSeparator)
	return code
}

func resolve(c *firestore.Client, coll string, d map[string]any) map[string]any {
	out := make(map[string]any, len(d))
	for k, v := range d {
		out[k] = resolveValue(c, coll, v)
	}
	return out
}

func resolveUpdates(c *firestore.Client, coll string, ups []firestore.Update) []firestore.Update {
	out := make([]firestore.Update, len(ups))
	for i, u := range ups {
		u.Value = resolveValue(c, coll, u.Value)
		out[i] = u
	}
	return out
}

// resolveValue turns a ref into the client's document reference, inside
// lists and maps too.
func resolveValue(c *firestore.Client, coll string, v any) any {
	switch x := v.(type) {
	case ref:
		return c.Collection(coll).Doc(string(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolveValue(c, coll, e)
		}
		return out
	case map[string]any:
		return resolve(c, coll, x)
	}
	return v
}

// render is a value's canonical text: its type and value, maps sorted by
// key, references by path, NaN and -0 spelled out.
func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ":" + render(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case float64:
		switch {
		case math.IsNaN(x):
			return "double(NaN)"
		case x == 0 && math.Signbit(x):
			return "double(-0)"
		}
		return "double(" + strconv.FormatFloat(x, 'g', -1, 64) + ")"
	case int64:
		return "int(" + strconv.FormatInt(x, 10) + ")"
	case string:
		return strconv.Quote(x)
	case []byte:
		return fmt.Sprintf("bytes(%x)", x)
	case time.Time:
		return "time(" + x.UTC().Format(time.RFC3339Nano) + ")"
	case *latlng.LatLng:
		return fmt.Sprintf("geo(%v,%v)", x.GetLatitude(), x.GetLongitude())
	case *firestore.DocumentRef:
		return "ref(" + x.Path + ")"
	case ref:
		return "ref(" + string(x) + ")"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// Command peers is make bench-peers: it runs the same workloads through the
// same official clients against loupe and against Google's own emulators
// that this machine has (the Cloud SDK's Firestore and Pub/Sub emulators,
// firebase-tools' Storage emulator from the peers cache), one server at a
// time, the order alternating between rounds; times the whole suite's cold
// start and measures its memory under loupe emulators:start and firebase
// emulators:start; runs the emulators codelab's tests under each side's
// emulators:exec; and prints one table of ratios, which -doc also writes
// into docs/benchmarks.md. -only picks workloads (-only pubsub: the
// Pub/Sub rows alone).
//
// Firestore and Pub/Sub go through the Go clients; Storage through the Node
// Admin SDK (storage.mjs). A peer that is absent is named and its rows are
// skipped. It is not part of loupe.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	loupe, cache, doc   string
	only                map[string]bool // the workloads to run; empty: all
	inMemory            bool
	rounds              int
	commits, concurrent int
	queryDocs, samples  int
	messages, msgSize   int
	small, smallSize    int
	smallConcurrency    int
	large, largeSize    int
}

func run() error {
	var o options
	flag.StringVar(&o.loupe, "loupe", os.Getenv("LOUPE_BIN"), "the loupe binary (default $LOUPE_BIN)")
	flag.StringVar(&o.cache, "cache", filepath.Join(os.Getenv("HOME"), ".cache", "loupe-peers"), "where firebase-tools and the rules runtime stand-in are installed")
	flag.StringVar(&o.doc, "doc", "", "write the table into this markdown file (its bench-peers section)")
	flag.BoolVar(&o.inMemory, "in-memory", false, "run loupe with --in-memory (default: on disk, every write synced)")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds; the order of loupe and the official emulators alternates")
	flag.IntVar(&o.commits, "commits", 300, "Firestore sequential commits")
	flag.IntVar(&o.concurrent, "concurrent", 3000, "Firestore commits from 64 goroutines")
	flag.IntVar(&o.queryDocs, "query-docs", 20000, "documents in the queried collection")
	flag.IntVar(&o.samples, "samples", 200, "Firestore queries and write → snapshot samples")
	flag.IntVar(&o.messages, "messages", 20000, "Pub/Sub messages")
	flag.IntVar(&o.msgSize, "message-size", 1024, "Pub/Sub message bytes")
	flag.IntVar(&o.small, "small", 200, "small Storage objects")
	flag.IntVar(&o.smallSize, "small-size", 64<<10, "small Storage object bytes")
	flag.IntVar(&o.smallConcurrency, "small-concurrency", 16, "small Storage objects in flight at once in the concurrent rows")
	flag.IntVar(&o.large, "large", 5, "large Storage objects")
	flag.IntVar(&o.largeSize, "large-size", 50<<20, "large Storage object bytes")
	only := flag.String("only", "", "run only these workloads, comma-separated: firestore, pubsub, storage, suite (the whole suite's start and the codelab); default all")
	flag.Parse()
	if *only != "" {
		o.only = map[string]bool{}
		for _, w := range strings.Split(*only, ",") {
			if !slices.Contains([]string{"firestore", "pubsub", "storage", "suite"}, w) {
				return fmt.Errorf("-only: unknown workload %q", w)
			}
			o.only[w] = true
		}
	}
	if o.loupe == "" {
		return fmt.Errorf("set LOUPE_BIN or -loupe to the loupe binary")
	}
	_, self, _, _ := runtime.Caller(0)
	work, err := os.MkdirTemp("", "bench-peers-")
	if err != nil {
		return err
	}
	p := &peers{loupe: o.loupe, inMemory: o.inMemory, project: "demo-peers", work: work,
		emuPath: filepath.Join(o.cache, "emulators")}
	absent := p.find(o.cache)
	for _, a := range absent {
		fmt.Println("skipped:", a)
	}
	b := &bench{o: o, p: p, dir: filepath.Dir(self), results: map[string][]float64{}}
	loadBefore := loadAverage()
	for r := 0; r < o.rounds; r++ {
		sides := []func(context.Context, int) error{b.loupeSide, b.officialSide}
		if r%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			if err := side(context.Background(), r); err != nil {
				return err
			}
		}
	}
	if len(b.failures) == 0 {
		os.RemoveAll(work)
	} else {
		fmt.Println("the servers' logs are kept in", work)
	}
	table := b.table()
	for _, f := range b.failures {
		table += "\nFailed, its rows are left out: " + f + "\n"
	}
	header := fmt.Sprintf("%s, %d rounds alternating, load average %s before and %s after (`/proc/loadavg`, 1/5/15 min);\n"+
		"loupe %s; flags `%s`.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), o.rounds, loadBefore, loadAverage(),
		map[bool]string{true: "--in-memory", false: "on disk"}[o.inMemory], strings.Join(os.Args[1:], " "))
	fmt.Print("\n" + header + table)
	if o.doc != "" {
		if err := writeSection(o.doc, header+table, absent); err != nil {
			return err
		}
	}
	if len(b.failures) > 0 {
		return fmt.Errorf("%d workloads failed", len(b.failures))
	}
	return nil
}

// bench holds one run's figures: per figure and side ("loupe"/"official"),
// one value a round.
type bench struct {
	o        options
	p        *peers
	dir      string // this command's folder, where storage.mjs is
	results  map[string][]float64
	failures []string // workloads that failed, with their first error line
}

// failed notes a workload that failed; the run goes on without its figures.
func (b *bench) failed(err error) {
	line, _, _ := strings.Cut(err.Error(), "\n")
	fmt.Println("  failed:", line)
	b.failures = append(b.failures, line)
}

// runs says whether the workload (firestore, pubsub, storage, suite) is run.
func (b *bench) runs(workload string) bool { return len(b.o.only) == 0 || b.o.only[workload] }

func (b *bench) put(side, figure string, v float64) {
	b.results[side+" "+figure] = append(b.results[side+" "+figure], v)
	fmt.Printf("  %-8s %-28s %.3f\n", side, figure, v)
}

// loupeSide starts one loupe and runs every workload against it, then
// starts the whole suite and runs the codelab's tests, each with a loupe of
// its own.
func (b *bench) loupeSide(ctx context.Context, round int) error {
	fmt.Printf("round %d: loupe\n", round+1)
	dir, err := os.MkdirTemp(b.p.work, "loupe-")
	if err != nil {
		return err
	}
	e, err := b.p.startLoupe(dir)
	if err != nil {
		return err
	}
	b.put("loupe", "start", e.start.Seconds())
	if b.p.gcloud != "" && b.runs("firestore") {
		if err := b.firestore(ctx, "loupe", e); err != nil {
			b.failed(err)
		}
	}
	if b.p.gcloud != "" && b.runs("pubsub") {
		if err := b.pubsub(ctx, "loupe", e); err != nil {
			b.failed(err)
		}
	}
	if b.p.firebase != "" && b.runs("storage") {
		if err := b.storage(ctx, "loupe", e); err != nil {
			b.failed(err)
		}
	}
	b.put("loupe", "rss", e.rssMB())
	e.stop()
	return b.suiteAndCodelab("loupe")
}

// officialSide starts each official emulator in turn, runs its workload and
// stops it, then starts the whole suite under firebase-tools and runs the
// codelab's tests under it.
func (b *bench) officialSide(ctx context.Context, round int) error {
	fmt.Printf("round %d: official\n", round+1)
	var rss float64
	for _, s := range []struct {
		name  string
		start func(string) (*emulator, error)
		run   func(context.Context, string, *emulator) error
	}{
		{"firestore", b.p.startFirestore, b.firestore},
		{"pubsub", b.p.startPubSub, b.pubsub},
		{"storage", b.p.startStorage, b.storage},
	} {
		if !b.runs(s.name) {
			continue
		}
		dir, err := os.MkdirTemp(b.p.work, s.name+"-")
		if err != nil {
			return err
		}
		e, err := s.start(dir)
		if err == errAbsent {
			continue
		}
		if err != nil {
			b.failed(err)
			continue
		}
		b.put("official", s.name+" start", e.start.Seconds())
		if err := s.run(ctx, "official", e); err != nil {
			b.failed(err)
		}
		rss += e.rssMB()
		e.stop()
	}
	b.put("official", "rss", rss)
	return b.suiteAndCodelab("official")
}

// suiteAndCodelab starts the whole suite on one side ("loupe" or
// "official"), times it until ready and measures its processes' memory, then
// stops it and runs the codelab's tests; what the peers cache lacks, or
// -only leaves out, is skipped.
func (b *bench) suiteAndCodelab(side string) error {
	if !b.runs("suite") {
		return nil
	}
	if b.p.suite != "" {
		dir, err := os.MkdirTemp(b.p.work, "suite-")
		if err != nil {
			return err
		}
		fixture := filepath.Join(b.dir, "..", "..", "web", "e2e", "fixtures", "functions", "v1")
		if e, err := b.p.startSuite(dir, fixture, side); err != nil {
			b.failed(fmt.Errorf("%s whole suite: %w", side, err))
		} else {
			b.put(side, "suite start", e.start.Seconds())
			b.put(side, "suite rss", e.rssMB())
			e.stop()
		}
	}
	if b.p.codelab != "" {
		dir, err := os.MkdirTemp(b.p.work, "codelab-")
		if err != nil {
			return err
		}
		if f, err := b.p.runCodelab(dir, side); err != nil {
			b.failed(fmt.Errorf("%s codelab: %w", side, err))
		} else {
			b.put(side, "codelab wall", f.wall.Seconds())
			b.put(side, "codelab tests", float64(f.tests))
			b.put(side, "codelab passed", float64(f.passed))
			b.put(side, "codelab hooks failed", float64(f.hooksFailed))
		}
	}
	return nil
}

func (b *bench) firestore(ctx context.Context, side string, e *emulator) error {
	return withEnv(ctx, map[string]string{"FIRESTORE_EMULATOR_HOST": e.host}, func(ctx context.Context) error {
		f, err := firestoreWorkload(ctx, b.p.project, b.o.commits, b.o.concurrent, b.o.queryDocs, b.o.samples)
		if err != nil {
			return fmt.Errorf("%s firestore: %w", side, err)
		}
		b.put(side, "firestore seq", f.seqPerSec)
		b.put(side, "firestore conc", f.concPerSec)
		b.put(side, "firestore query", ms(f.queryP50))
		b.put(side, "firestore snapshot", ms(f.snapshotP50))
		return nil
	})
}

func (b *bench) pubsub(ctx context.Context, side string, e *emulator) error {
	return withEnv(ctx, map[string]string{"PUBSUB_EMULATOR_HOST": e.host}, func(ctx context.Context) error {
		f, err := pubsubWorkload(ctx, b.p.project, b.o.messages, b.o.msgSize)
		if err != nil {
			return fmt.Errorf("%s pubsub: %w", side, err)
		}
		b.put(side, "pubsub publish", f.publish)
		b.put(side, "pubsub pull", f.pull)
		b.put(side, "pubsub e2e", f.endToEnd)
		return nil
	})
}

func (b *bench) storage(ctx context.Context, side string, e *emulator) error {
	f, err := storageWorkload(ctx, b.dir, e.host, b.p.project, b.o)
	if err != nil {
		return fmt.Errorf("%s storage: %w", side, err)
	}
	b.put(side, "storage small up", f.SmallUpPerSec)
	b.put(side, "storage small down", f.SmallDownPerSec)
	b.put(side, "storage small up concurrent", f.SmallUpConcurrentPerSec)
	b.put(side, "storage small down concurrent", f.SmallDownConcurrentPerSec)
	b.put(side, "storage large up", f.LargeUpMBps)
	b.put(side, "storage large down", f.LargeDownMBps)
	b.put(side, "storage large down novalid", f.LargeDownNoValidationMBps)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// writeSection replaces the bench-peers section of a markdown file (from its
// heading to the next one), or appends it.
func writeSection(path, body string, absent []string) error {
	const heading = "## Side by side with Google's emulators (`make bench-peers`)"
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString(heading + "\n\n" + sectionIntro)
	for _, a := range absent {
		sb.WriteString("Skipped on this run: " + a + ".\n")
	}
	sb.WriteString("\n" + body)
	text := string(old)
	if i := strings.Index(text, heading); i >= 0 {
		rest := text[i+len(heading):]
		end := len(text)
		if j := strings.Index(rest, "\n## "); j >= 0 {
			end = i + len(heading) + j + 1
		}
		text = text[:i] + sb.String() + "\n" + text[end:]
	} else {
		text = strings.TrimRight(text, "\n") + "\n\n" + sb.String()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.WriteString(f, text)
	return err
}

const sectionIntro = `Command: ` + "`make bench-peers`" + ` (written by ` + "`bench/peers`" + `). One server at a time on this machine: loupe
(Firestore, Pub/Sub and Storage in one process) and the Cloud SDK's Firestore and Pub/Sub emulators and
firebase-tools 14.27's Storage emulator (all three in memory), each started, driven and stopped in turn; the order
alternates between rounds. Firestore and Pub/Sub through the Go clients, Storage through the Node Admin SDK. Then each
side (` + "`loupe`" + `, ` + "`firebase`" + ` 14.27) runs ` + "`emulators:start --only firestore,auth,functions,storage,pubsub`" + ` in one
folder holding the functions fixture ` + "`web/e2e/fixtures/functions/v1`" + ` (JavaScript, triggers of all five), timed from
spawn until it prints "All emulators ready!", its memory the summed RSS of its process tree's loupe, node and java
processes at that moment; and runs the tests of the public emulators codelab (firebase/emulators-codelab's
` + "`codelab-final-state`" + `: mocha, ` + "`@firebase/rules-unit-testing`" + ` 1.x, ` + "`firebase-functions`" + ` 3.x) as its CI does,
` + "`emulators:exec --project demo-peers 'npm test'`" + ` in its functions folder, timed from spawn to exit; its firebase.json's
ports are swapped for free ones and the console is off, and passes are counted from mocha's xunit report (a failed
hook, such as an ` + "`after all`" + ` past the codelab's ` + "`--timeout 5000`" + `, is named beside them).

How the peers run here, with no internet and nothing downloaded: ` + "`bench/peers/setup.sh`" + ` installs firebase-tools, the
functions fixtures' npm packages and the codelab (from ` + "`EMULATORS_CODELAB_GIT`" + `, a git directory of it, else cloned) with
its npm packages (install scripts off) into ` + "`~/.cache/loupe-peers`" + `, and fills ` + "`emulators/`" + ` there, firebase-tools'
` + "`FIREBASE_EMULATORS_PATH`" + `, under the names it would download to: its Firestore and Pub/Sub emulators are the Cloud
SDK's (Debian packages google-cloud-cli-firestore-emulator and -pubsub-emulator, Firestore 1.19.9 and Pub/Sub 0.8.20
where firebase-tools pins 1.19.8 and 0.8.17): a jar whose manifest only names the Cloud SDK's Firestore jar and main
class (firebase-tools runs ` + "`java -jar`" + ` on it) and a link to the Pub/Sub emulator's folder; its Storage rules runtime is
a stand-in (` + "`bench/peers/RulesStandIn.java`" + `) that denies every check, so only the Admin SDK's paths, which never ask
rules, are measured. Each cell gives the rounds' range; the ratio compares the rounds' means (throughput: loupe ÷
official; latency, time and memory: official ÷ loupe, so above 1× loupe is ahead).
`

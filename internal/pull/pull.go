// Package pull copies a slice of a Firebase project (production, or another
// emulator) into a running loupe: Firestore documents with their create and
// update times, Auth accounts with their password hashes, Storage objects
// with their metadata and download tokens, Realtime Database locations. It
// reads through the Firestore and Storage clients and the Identity Toolkit
// and Realtime Database REST APIs with the caller's credentials, and writes
// only to loupe.
//
// A pull reads the accounts and objects it was asked for before it writes
// anything (what cannot be read fails the pull, naming it), and streams
// the documents in batches, each stored whole with a checkpoint, so that
// a pull that stops part way continues where it stopped when run again.
// Writes are idempotent (equal documents, accounts and objects are left
// alone), so a rerun leaves every document, account and object once.
package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Source is where a pull reads: a project in production (with application
// default credentials, or CredentialsFile), or on an emulator at Emulator.
type Source struct {
	Project         string
	Emulator        string // host:port; "" reads production
	CredentialsFile string
}

// Target is the running loupe a pull writes to.
type Target struct {
	Host    string // host:port
	Project string
	// Force writes into a loupe that runs with --strict-credentials.
	Force bool
}

// Options say what a pull copies.
type Options struct {
	From Source
	To   Target

	// Firestore: the collections (paths) and collection groups (ids) to
	// copy, each read with Where, OrderBy and Limit; Recursive adds every
	// copied document's subcollections; Sample caps each collection.
	Database         string
	Collections      []string
	CollectionGroups []string
	Where            []Filter
	OrderBy          []Order
	Limit            int
	Recursive        bool
	Sample           int

	// Auth: Users copies accounts (all, or those of UIDs, or those
	// UserQuery matches); WithPasswords copies their password hashes and
	// the project's hash parameters.
	Users         bool
	UIDs          []string
	UserQuery     []Filter
	WithPasswords bool

	// Storage: the objects of Bucket under each of Prefixes.
	Bucket   string
	Prefixes []string

	// Realtime Database: the whole trees at DatabasePaths of the instance
	// Namespace (see databaseSource).
	DatabasePaths []string
	Namespace     string

	// Redact replaces these fields (account attributes, and document
	// fields of the same name) with stable fake values.
	Redact []string
	// DryRun reads and reports what a pull would copy, and writes nothing.
	DryRun bool
	// Progress receives progress lines (nil: none).
	Progress io.Writer

	// from are the source's client options (its credentials).
	from []option.ClientOption
}

// Report is what a pull read and what it changed in loupe.
type Report struct {
	Documents        int   `json:"documents"`
	DocumentsWritten int   `json:"documentsChanged"`
	Users            int   `json:"users"`
	Objects          int   `json:"objects"`
	ObjectsWritten   int   `json:"objectsChanged"`
	Bytes            int64 `json:"bytes"`
	DatabaseBytes    int64 `json:"databaseBytes"`
	DryRun           bool  `json:"dryRun,omitempty"`
}

// wants reports whether o asks for anything of each service.
func (o *Options) wants() (firestore, auth, storage, database bool) {
	return len(o.Collections) > 0 || len(o.CollectionGroups) > 0, o.Users || len(o.UIDs) > 0 || len(o.UserQuery) > 0,
		len(o.Prefixes) > 0, len(o.DatabasePaths) > 0
}

// Check reports what is wrong with o before anything is read.
func (o *Options) Check() error {
	fs, auth, st, db := o.wants()
	if !fs && !auth && !st && !db {
		return errors.New("nothing to pull: name --collection, --collection-group, --users (or --uids, --user-query), --prefix or --database-path")
	}
	if o.Namespace != "" && !db {
		return errors.New("--ns names the Realtime Database instance of --database-path")
	}
	if o.From.Project == "" {
		return errors.New("no project to pull from: pass --from-project")
	}
	if (len(o.Where) > 0 || len(o.OrderBy) > 0 || o.Limit > 0) && !fs {
		return errors.New("--where, --order-by and --limit filter --collection and --collection-group")
	}
	for _, r := range o.Redact {
		if r == "" {
			return errors.New("--redact names fields, as in email,phoneNumber")
		}
	}
	if o.Limit < 0 || o.Sample < 0 {
		return errors.New("--limit and --sample are positive")
	}
	return nil
}

// Run pulls what o asks for. It reads the accounts (into memory) and the
// Storage objects (into files under a temporary folder) first, so that
// what cannot be read of them fails the pull before anything is written;
// then it streams the documents into loupe (see pullFirestore); then it
// writes the accounts and the objects.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Database == "" {
		o.Database = "(default)"
	}
	if o.To.Project == "" {
		o.To.Project = o.From.Project
	}
	var err error
	if o.from, err = o.From.clientOptions(); err != nil {
		return nil, err
	}
	p := &progress{w: o.Progress}
	r := &Report{DryRun: o.DryRun}
	red := newRedactor(o.Redact)
	t := newTargetClient(o.To)
	if !o.DryRun {
		if err := t.checkWritable(ctx); err != nil {
			return nil, err
		}
	}
	if err := o.From.checkReachable(ctx); err != nil {
		return nil, err
	}
	wantFS, wantAuth, wantStorage, wantDatabase := o.wants()

	var accounts *accountSet
	var objects *objectSet
	if wantAuth {
		if accounts, err = readAuth(ctx, &o, p); err != nil {
			return nil, fmt.Errorf("read auth (nothing was written): %w", err)
		}
		red.accounts(accounts.users)
		r.Users = len(accounts.users)
	}
	if wantStorage {
		objects, err = readStorage(ctx, &o, p)
		if objects != nil {
			defer objects.cleanup()
		}
		if err != nil {
			return nil, fmt.Errorf("read storage (nothing was written): %w", err)
		}
		r.Objects, r.Bytes = len(objects.objects), objects.bytes
	}
	if wantFS {
		if err := pullFirestore(ctx, &o, t, red, p, r); err != nil {
			if o.DryRun {
				return nil, fmt.Errorf("read firestore: %w", err)
			}
			return r, fmt.Errorf("firestore: %w (%d documents are written: run the pull again to continue)", err, r.Documents)
		}
	}
	if wantDatabase {
		if err := pullDatabase(ctx, &o, p, r); err != nil {
			return r, fmt.Errorf("realtime database: %w (run the pull again to finish it)", err)
		}
	}
	if o.DryRun {
		p.dryRun(accounts, objects)
		return r, nil
	}
	if accounts != nil {
		if err = t.writeAccounts(ctx, accounts, p); err != nil {
			return r, fmt.Errorf("write accounts: %w (run the pull again to finish it)", err)
		}
	}
	if objects != nil {
		if r.ObjectsWritten, err = t.writeObjects(ctx, objects, p); err != nil {
			return r, fmt.Errorf("write objects: %w (run the pull again to finish it)", err)
		}
	}
	if wantFS {
		if err := t.forgetCheckpoint(ctx, &o); err != nil {
			return r, fmt.Errorf("forget the pull's checkpoint: %w", err)
		}
	}
	return r, nil
}

// pullFirestore streams the documents o names into the target as it reads
// them (or, in a dry run, counts them), a batch at a time, each batch
// stored whole with the pull's checkpoint; memory holds a page and a batch,
// whatever the number of documents. Every read is at the read time of the
// pull's first, so the copy is the source as of one moment, unless the
// pull outlasts the source's version retention (see atReadTime). A pull
// that stopped (killed, or a failed read or write) continues from its
// checkpoint, at the same read time, when run again; one that finished its
// documents but not its accounts or objects does not read them again.
func pullFirestore(ctx context.Context, o *Options, t *targetClient, red *redactor, p *progress, r *Report) error {
	reader, closeReader, err := newFirestoreReader(ctx, o, p)
	if err != nil {
		return err
	}
	defer closeReader()
	if o.DryRun {
		counter := &collectionCounter{root: reader.root, counts: map[string]int{}}
		reader.out = counter
		err := reader.run(ctx, nil)
		for _, c := range counter.sorted() {
			p.line("would copy %d documents of %s", c.n, c.collection)
		}
		r.Documents = counter.total
		return err
	}
	at, err := t.checkpoint(ctx, o)
	if err != nil {
		return err
	}
	w := t.documentWriter(o, red, p)
	reader.out, w.at = w, reader.checkpoint
	if at != nil {
		w.before = at.Documents
		r.Documents = at.Documents
		if at.Done {
			p.line("firestore: an earlier run of this pull wrote its %d documents", at.Documents)
			return nil
		}
		reader.readTime = timestamppb.New(at.ReadTime)
		p.line("firestore: continuing the pull that stopped after %d documents, reading as of %s", at.Documents, at.ReadTime.Format(time.RFC3339Nano))
	}
	err = reader.run(ctx, at)
	if err == nil {
		err = w.flush(ctx, true)
	}
	r.Documents, r.DocumentsWritten = w.before+w.written, w.changed
	if err != nil {
		return err
	}
	p.line("firestore: read %d documents", reader.read)
	if at != nil {
		p.line("firestore: wrote %d documents, %d of them in this run (%d changed)", r.Documents, w.written, w.changed)
	} else {
		p.line("firestore: wrote %d documents (%d changed)", w.written, w.changed)
	}
	return nil
}

// How long a pull waits for its source: to connect to an emulator, and for
// each read (a page of a query or a listing; an object's download gets
// readTimeout more for each minDownloadRate of its size). The clients
// retry an unreachable source until their context ends, so without these a
// pull from nowhere never ended.
const (
	reachTimeout    = 10 * time.Second
	readTimeout     = time.Minute
	minDownloadRate = 1 << 20 // bytes a second
)

// checkReachable fails, naming it, when the source emulator takes no TCP
// connection within reachTimeout (a host that does not resolve, a port
// nothing listens on). Production is reached as its clients reach it
// (through a proxy, say), so its reads' deadlines speak for it.
func (s Source) checkReachable(ctx context.Context) error {
	if s.Emulator == "" {
		return nil
	}
	d := net.Dialer{Timeout: reachTimeout}
	c, err := d.DialContext(ctx, "tcp", s.Emulator)
	if err != nil {
		return fmt.Errorf("cannot reach the emulator to pull from at %s (--from-emulator): %w", s.Emulator, err)
	}
	return c.Close()
}

// clientOptions are the options of the source's Google clients: the
// emulator's endpoint without credentials, or production with
// CredentialsFile (else application default credentials).
func (s Source) clientOptions() ([]option.ClientOption, error) {
	if s.Emulator != "" {
		return []option.ClientOption{option.WithoutAuthentication()}, nil
	}
	if s.CredentialsFile == "" {
		return nil, nil
	}
	// The file's type is checked, so that a file of another kind (an
	// external account's, which runs commands) is not used by surprise.
	data, err := os.ReadFile(s.CredentialsFile)
	if err != nil {
		return nil, fmt.Errorf("read --credentials: %w", err)
	}
	var f struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &f) != nil {
		return nil, errors.New("--credentials is not a JSON credentials file")
	}
	types := map[string]option.CredentialsType{"service_account": option.ServiceAccount, "authorized_user": option.AuthorizedUser,
		"impersonated_service_account": option.ImpersonatedServiceAccount}
	t, ok := types[f.Type]
	if !ok {
		return nil, fmt.Errorf("--credentials is a %q file: pull reads service_account, authorized_user and impersonated_service_account files", f.Type)
	}
	return []option.ClientOption{option.WithAuthCredentialsJSON(t, data)}, nil
}

// progress prints a line per step and, while a step runs, one at most
// every second with its counts and bytes.
type progress struct {
	w    io.Writer
	mu   sync.Mutex
	last time.Time
}

// tick reports a running count unless one was reported within a second.
func (p *progress) tick(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < time.Second {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// line reports a finished step.
func (p *progress) line(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// dryRun prints the accounts and objects a pull would copy.
func (p *progress) dryRun(accounts *accountSet, objects *objectSet) {
	if accounts != nil {
		p.line("would copy %d accounts%s", len(accounts.users), accounts.passwordsNote())
	}
	if objects != nil {
		for _, ob := range objects.objects {
			p.line("would copy gs://%s/%s (%s)", objects.bucket, ob.attrs.Name, byteCount(ob.attrs.Size))
		}
	}
}

// byteCount is n in B, KiB, MiB or GiB.
func byteCount(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 2; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMG"[exp])
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/loupe-dev/loupe/internal/app"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/server"

	"github.com/loupe-dev/loupe/internal/pull"
	"github.com/spf13/cobra"
)

// pullFlags are the flags of `loupe data pull` as typed.
type pullFlags struct {
	o                         pull.Options
	where, orderBy, userQuery []string
	users                     []string
	dataDir                   string
}

// newCmdPull builds `loupe data pull`: a slice of a project (production,
// or another emulator with --from-emulator) copied into the running loupe
// that --emulator names, or into the data dir --data-dir names.
func newCmdPull(target *TargetOptions) *cobra.Command {
	var f pullFlags
	cmd := &cobra.Command{
		Use:   "pull",
		Short: "Copy a slice of a Firebase project (Firestore documents, Auth accounts, Storage objects, Realtime Database locations) into a running loupe",
		Long: `Copy a slice of a Firebase project into a running loupe (--emulator HOST:PORT),
or into a loupe data folder that no loupe serves (--data-dir DIR; then
loupe serve --data-dir DIR serves what was pulled).

It reads production through the Google APIs with application default
credentials (GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth
application-default login), or --credentials FILE, or another emulator with
--from-emulator HOST:PORT. It never writes to the project it reads. Accounts
and objects are read before anything is written: what cannot be read of them
fails the pull and loupe is left as it was. Documents are streamed, read at
one read time and written in batches of at most 500, each with the pull's
checkpoint in the target: a pull that stopped part way continues where it
stopped when run again with the same flags. Running a pull again changes
nothing that is already there.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o := &f.o
			for _, w := range f.where {
				ff, err := pull.ParseFilter(w, false)
				if err != nil {
					return usageErrorf("--where %v", err)
				}
				o.Where = append(o.Where, ff)
			}
			for _, s := range f.orderBy {
				ord, err := pull.ParseOrder(s)
				if err != nil {
					return usageErrorf("--order-by %v", err)
				}
				o.OrderBy = append(o.OrderBy, ord)
			}
			for _, q := range f.userQuery {
				ff, err := pull.ParseFilter(q, true)
				if err == nil {
					err = pull.CheckUserQueryField(ff.Field)
				}
				if err != nil {
					return usageErrorf("--user-query %v", err)
				}
				o.UserQuery = append(o.UserQuery, ff)
			}
			for _, u := range f.users {
				if u == "all" {
					o.Users = true
				} else if u = strings.TrimSpace(u); u != "" {
					o.UIDs = append(o.UIDs, u)
				}
			}
			if len(o.UserQuery) > 0 {
				o.Users = true
			}
			if err := o.Check(); err != nil {
				return &UsageError{err}
			}
			o.To.Project = target.Project
			if f.dataDir != "" && target.Emulator != "" {
				return usageErrorf("--data-dir and --emulator: pull into a data dir or into a running loupe, not both")
			}
			var closeDir func() error
			if !o.DryRun && f.dataDir != "" {
				host, stop, err := openDataDir(c.Context(), f.dataDir, firstNonEmpty(o.To.Project, o.From.Project), c.ErrOrStderr())
				if err != nil {
					return err
				}
				o.To.Host, closeDir = host, stop
			} else if !o.DryRun {
				client, err := target.emulatorOnly(c.Context(), "data pull")
				if err != nil {
					return err
				}
				o.To.Host = strings.TrimPrefix(client.base, "http://")
			}
			o.Progress = c.ErrOrStderr()
			report, err := pull.Run(c.Context(), *o)
			if closeDir != nil {
				if cerr := closeDir(); err == nil && cerr != nil {
					err = fmt.Errorf("close data dir %s: %w", f.dataDir, cerr)
				}
			}
			if err != nil {
				return err
			}
			p := printer{out: c.OutOrStdout(), json: target.JSON}
			verb := "pulled"
			if o.DryRun {
				verb = "would pull"
			}
			return p.done(fmt.Sprintf("%s %d documents, %d accounts, %d objects (%d bytes) from %s", verb,
				report.Documents, report.Users, report.Objects, report.Bytes, o.From.Project), report)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.o.From.Project, "from-project", "", "project to read (required)")
	fl.StringVar(&f.o.From.Emulator, "from-emulator", "", "read another emulator (a loupe, or firebase emulators) at HOST:PORT instead of production")
	fl.StringVar(&f.o.From.CredentialsFile, "credentials", "", "service account key file to read production with (default: application default credentials)")
	fl.StringArrayVar(&f.o.Collections, "collection", nil, "Firestore collection to copy, as a path (users, or users/u1/posts); repeatable")
	fl.StringArrayVar(&f.o.CollectionGroups, "collection-group", nil, "every collection with this id, at any depth; repeatable")
	fl.StringArrayVar(&f.where, "where", nil, `filter of the collections: "FIELD OP VALUE", as in "age >= 18" or "tags array-contains \"a\""; repeatable`)
	fl.StringArrayVar(&f.orderBy, "order-by", nil, `order of the collections: "FIELD [asc|desc]" (with --limit, which documents are copied); repeatable`)
	fl.IntVar(&f.o.Limit, "limit", 0, "at most this many documents of each --collection and --collection-group")
	fl.BoolVar(&f.o.Recursive, "recursive", false, "copy the subcollections of every document copied, at any depth")
	fl.IntVar(&f.o.Sample, "sample", 0, "at most this many documents of each collection, subcollections included")
	fl.StringVar(&f.o.Database, "database", "(default)", "Firestore database to copy (into the database of the same id)")
	fl.StringSliceVar(&f.users, "users", nil, "Auth accounts to copy: all, or UID,UID,…")
	fl.StringArrayVar(&f.userQuery, "user-query", nil, `copy the accounts whose attribute passes "FIELD OP VALUE" (`+pull.UserQueryFields+`; OP also matches, a glob); repeatable`)
	fl.BoolVar(&f.o.WithPasswords, "with-passwords", false, "copy password hashes and the project's hash parameters, so accounts sign in with their passwords")
	fl.StringVar(&f.o.Bucket, "bucket", "", "Storage bucket to copy from (default PROJECT.appspot.com)")
	fl.StringArrayVar(&f.o.Prefixes, "prefix", nil, `Storage objects to copy: those whose name starts with this ("" for all); repeatable`)
	fl.StringArrayVar(&f.o.DatabasePaths, "database-path", nil, "Realtime Database location to copy, with everything under it (\"/\" for the whole instance); repeatable")
	fl.StringVar(&f.o.Namespace, "ns", "", "Realtime Database instance of --database-path (default PROJECT-default-rtdb; a host such as NAME.europe-west1.firebasedatabase.app for another region)")
	fl.StringSliceVar(&f.o.Redact, "redact", nil, "replace these fields of accounts and documents with stable fake values: email,phoneNumber,displayName,photoURL or any field name")
	fl.BoolVar(&f.o.DryRun, "dry-run", false, "read and print what would be copied, write nothing")
	fl.StringVar(&f.dataDir, "data-dir", "", "write into this loupe data folder (what loupe serve --data-dir serves) instead of a running loupe; refused while a loupe serves it")
	fl.BoolVar(&f.o.To.Force, "force", false, "write into a loupe that runs with --strict-credentials")
	return cmd
}

// openDataDir serves the data dir dir on a free port of 127.0.0.1 (its
// Firestore, Auth, Storage and Realtime Database, as loupe serve --data-dir would, holding its
// lock) for a pull to write into. It returns the host to write to and stop,
// which closes the services, flushing what they hold, and frees the dir.
func openDataDir(ctx context.Context, dir, project string, logs io.Writer) (host string, stop func() error, err error) {
	a, err := app.New(ctx, app.Options{
		Project:       project,
		Host:          "127.0.0.1",
		DataDir:       dir,
		Config:        &config.Firebase{Dir: "."},
		Only:          []string{"firestore", "auth", "storage", "database"},
		HistoryBudget: 64 << 20,
		IdleTimeout:   server.DefaultIdleTimeout,
		Logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	var inUse *app.DataDirInUseError
	if errors.As(err, &inUse) {
		return "", nil, fmt.Errorf("data dir %s is served by a running loupe: pull into that loupe with --emulator HOST:PORT instead, or stop it first", dir)
	}
	if err != nil {
		return "", nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	if err := a.Listen(); err != nil {
		return "", nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	select {
	case <-a.Ready():
	case err := <-done:
		cancel()
		return "", nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	stop = func() error {
		cancel()
		return <-done
	}
	return strings.TrimPrefix(a.URL(), "http://"), stop, nil
}

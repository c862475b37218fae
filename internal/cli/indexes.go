package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/config"
	"github.com/loupe-dev/loupe/internal/firestore"
	"github.com/spf13/cobra"
)

// IndexesMissingOptions are the flags of `loupe indexes missing`.
type IndexesMissingOptions struct {
	Emulator   string
	Project    string
	Database   string
	ConfigPath string
	Write      bool

	Stdout io.Writer
}

// NewCmdIndexes builds `loupe indexes missing`. runF replaces the run
// function in tests.
func NewCmdIndexes(runF func(context.Context, *IndexesMissingOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "indexes", Short: "Firestore composite indexes the running loupe saw queries need"}
	opts := &IndexesMissingOptions{}
	missing := &cobra.Command{
		Use:   "missing",
		Short: "Print (or --write into firestore.indexes.json) the composite indexes queries needed that are not declared",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Stdout = cmd.OutOrStdout()
			if opts.Emulator == "" {
				opts.Emulator = os.Getenv("FIRESTORE_EMULATOR_HOST")
			}
			if opts.Emulator == "" {
				return usageErrorf("no running loupe: pass --emulator host:port or set FIRESTORE_EMULATOR_HOST")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return indexesMissingRun(cmd.Context(), opts)
		},
	}
	f := missing.Flags()
	f.StringVar(&opts.Emulator, "emulator", "", "host:port of a running loupe (default $FIRESTORE_EMULATOR_HOST)")
	f.StringVar(&opts.Project, "project", "demo-loupe", "project id")
	f.StringVar(&opts.Database, "database", "(default)", "database id")
	f.StringVar(&opts.ConfigPath, "config", "firebase.json", "firebase.json naming the indexes file (firestore.indexes)")
	f.BoolVar(&opts.Write, "write", false, "merge the missing indexes into the indexes file instead of printing them")
	cmd.AddCommand(missing)
	return cmd
}

func indexesMissingRun(ctx context.Context, o *IndexesMissingOptions) error {
	st, err := fetchIndexStatus(ctx, o)
	if err != nil {
		return err
	}
	need := firestore.IndexFile{Indexes: []firestore.IndexDef{}, FieldOverrides: []firestore.FieldOverride{}}
	for _, m := range st.Missing {
		if m.Index != nil {
			need.Indexes = append(need.Indexes, *m.Index)
		}
		if m.FieldOverride != nil {
			need.FieldOverrides, _ = firestore.MergeFieldOverrides(need.FieldOverrides, []firestore.FieldOverride{*m.FieldOverride})
		}
	}
	if !o.Write {
		out, _ := json.MarshalIndent(need, "", "  ")
		_, err := fmt.Fprintf(o.Stdout, "%s\n", out)
		return err
	}
	path, err := indexesPath(o.ConfigPath, o.Database)
	if err != nil {
		return err
	}
	added, err := mergeIndexes(path, need)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.Stdout, "added %d index(es) to %s\n", added, path)
	return err
}

// fetchIndexStatus asks the running loupe's admin endpoint.
func fetchIndexStatus(ctx context.Context, o *IndexesMissingOptions) (*firestore.IndexStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := fmt.Sprintf("http://%s/emulator/v1/projects/%s/databases/%s/indexes", o.Emulator, url.PathEscape(o.Project), url.PathEscape(o.Database))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask loupe at %s: %w", o.Emulator, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("ask loupe at %s: %s: %s", o.Emulator, resp.Status, bytes.TrimSpace(body))
	}
	st := &firestore.IndexStatus{}
	if err := json.NewDecoder(resp.Body).Decode(st); err != nil {
		return nil, fmt.Errorf("ask loupe at %s: %w", o.Emulator, err)
	}
	return st, nil
}

// indexesPath is the indexes file firebase.json names for the database,
// or firestore.indexes.json beside it.
func indexesPath(configPath, database string) (string, error) {
	cfg, err := config.Load(configPath, false)
	if err != nil {
		return "", err
	}
	for _, entry := range cfg.FirestoreConfigs {
		db := entry.Database
		if db == "" {
			db = config.DefaultDatabase
		}
		if db == database && entry.Indexes != "" {
			return cfg.Path(entry.Indexes), nil
		}
	}
	return cfg.Path("firestore.indexes.json"), nil
}

// mergeIndexes adds the indexes the file does not declare yet to its
// indexes and fieldOverrides, keeping the rest of the file, and returns
// how many it added.
func mergeIndexes(path string, need firestore.IndexFile) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte(`{"indexes": [], "fieldOverrides": []}`)
	} else if err != nil {
		return 0, err
	}
	// The file as firebase-tools reads it: its comments are not kept.
	data = config.JSONC(data)
	file, err := firestore.ParseIndexFile(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	indexes, added := firestore.MergeIndexDefs(file.Indexes, need.Indexes)
	overrides, addedOverrides := firestore.MergeFieldOverrides(file.FieldOverrides, need.FieldOverrides)
	if added+addedOverrides == 0 {
		return 0, nil
	}
	raw["indexes"], raw["fieldOverrides"] = indexes, overrides
	added += addedOverrides
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return 0, err
	}
	return added, atomicfile.Write(path, append(out, '\n'), "")
}

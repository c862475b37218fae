package firestore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
)

// ExportDir is the folder of an export (in the firebase-tools layout) that
// holds Firestore's data: documents.jsonl, one document per line as the
// proto3 JSON of google.firestore.v1.Document (full name, fields,
// createTime, updateTime), sorted by name.
const ExportDir = "firestore_export"

// Export writes every document of every database to root/firestore_export.
func (e *Engine) Export(root string) error {
	e.mu.RLock()
	var docs []*pb.Document
	at := e.readAt(time.Time{})
	for name := range e.dbs {
		e.eachDocAt(name, at, func(_ string, doc *pb.Document) { docs = append(docs, doc) })
	}
	e.mu.RUnlock()
	return WriteExport(root, docs)
}

// WriteExport writes docs, sorted by name, as root/firestore_export in
// loupe's layout.
func WriteExport(root string, docs []*pb.Document) error {
	dir := filepath.Join(root, ExportDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	docs = slices.Clone(docs)
	sort.Slice(docs, func(i, j int) bool { return docs[i].Name < docs[j].Name })
	f, err := os.Create(filepath.Join(dir, "documents.jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, doc := range docs {
		raw, err := protojson.Marshal(doc)
		if err != nil {
			f.Close()
			return err
		}
		// protojson varies its whitespace on purpose; compacting makes
		// exports byte-stable, so they diff and round-trip cleanly.
		var line bytes.Buffer
		if err := json.Compact(&line, raw); err != nil {
			f.Close()
			return err
		}
		line.WriteByte('\n')
		if _, err := w.Write(line.Bytes()); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Import replaces every database's documents with the export under root.
// A root without firestore_export clears nothing and imports nothing.
func (e *Engine) Import(root string) error { return e.ImportWithProgress(root, nil) }

// Progress is told how many of total documents an operation has done so
// far: once with done 0 as soon as total is known, then as it goes, and
// last with done == total.
type Progress func(done, total int)

// ImportWithProgress is Import, telling progress (when not nil) how many of
// the export's documents it has read and checked. The import stays all or
// nothing: the documents replace the data only once every one is read.
func (e *Engine) ImportWithProgress(root string, progress Progress) error {
	docs, err := ReadExportWithProgress(root, progress)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	dbs := map[string]*database{}
	var latest time.Time
	for _, doc := range docs {
		n, _ := ParseDocumentName(doc.Name)
		d := dbs[n.Database]
		if d == nil {
			d = &database{name: n.Database, docs: docTable{}}
			dbs[n.Database] = d
		}
		d.docs.set(strings.Join(n.Path, "/"), doc)
		if t := doc.UpdateTime.AsTime(); t.After(latest) {
			latest = t
		}
	}
	for _, d := range dbs {
		d.install(d.build(byCollection, nil))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var commits []Commit
	for name, old := range e.dbs {
		c := Commit{Time: e.nextTime(), Import: true}
		for path, doc := range old.docs.all() {
			c.Changes = append(c.Changes, Change{Database: name, Path: path, Old: doc})
		}
		if len(c.Changes) > 0 {
			commits = append(commits, c)
		}
	}
	e.dbs = dbs
	if latest.After(e.lastTime) {
		e.lastTime = latest
	}
	e.hist.reset(e.lastTime)
	for name, d := range dbs {
		c := Commit{Time: e.nextTime(), Import: true}
		for path, doc := range d.docs.all() {
			c.Changes = append(c.Changes, Change{Database: name, Path: path, New: doc})
		}
		commits = append(commits, c)
	}
	if e.log != nil {
		if err := e.log.rewrite(e.dbs, e.lastTime); err != nil {
			return fmt.Errorf("persist import: %w", err)
		}
	}
	e.queued = e.lastTime
	e.markDurable(e.lastTime)
	for _, c := range commits {
		e.pipeline.publishOnly(c)
	}
	return nil
}

// ReadExport reads root/firestore_export in loupe's layout, checking every
// document's name and times. A root without the file gives an error that is
// os.ErrNotExist.
func ReadExport(root string) ([]*pb.Document, error) { return ReadExportWithProgress(root, nil) }

// ReadExportWithProgress is ReadExport, telling progress (when not nil) the
// number of documents (the file's non-blank lines) before it reads the
// first, then how many it has read.
func ReadExportWithProgress(root string, progress Progress) ([]*pb.Document, error) {
	path := filepath.Join(root, ExportDir, "documents.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	total := 0
	for _, line := range lines {
		if strings.TrimSpace(line) != "" {
			total++
		}
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, total)
	docs := make([]*pb.Document, 0, total)
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		doc := &pb.Document{}
		if err := protojson.Unmarshal([]byte(line), doc); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		if _, err := ParseDocumentName(doc.Name); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		if doc.UpdateTime == nil || doc.CreateTime == nil {
			return nil, fmt.Errorf("%s line %d: document %s has no createTime or updateTime", path, i+1, doc.Name)
		}
		docs = append(docs, doc)
		progress(len(docs), total)
	}
	return docs, nil
}

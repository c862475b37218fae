package firestore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/loupe-dev/loupe/internal/identity"
	"github.com/loupe-dev/loupe/internal/wal"
)

// TestOpen_ReplaysOlderJSONRecords checks that a data folder written by an
// older version, whose records hold protobuf JSON documents, still opens.
func TestOpen_ReplaysOlderJSONRecords(t *testing.T) {
	dir := t.TempDir()
	payload, err := json.Marshal(logRecord{Database: ixDB, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Puts: []json.RawMessage{
		[]byte(`{"name":"` + ixDB + `/documents/items/old","fields":{"n":{"integerValue":"7"}},"createTime":"2026-01-02T03:04:05Z","updateTime":"2026-01-02T03:04:05Z"}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, logFile), wal.Frame(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	doc, err := e.Get(context.Background(), identity.Owner, ixDB+"/documents/items/old")
	if err != nil || doc.GetFields()["n"].GetIntegerValue() != 7 {
		t.Fatalf("replayed %v, %v", doc, err)
	}
	if _, err := e.Commit(context.Background(), identity.Owner, ixDB, []*pb.Write{setDoc("new", 1)}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCommitLog_Rewrite checks that folding the log into the binary
// snapshot keeps every document and replaces an older JSON snapshot.
func TestCommitLog_Rewrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, snapshotFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var writes []*pb.Write
	for i := range 600 { // more than one frame
		writes = append(writes, setDoc(fmt.Sprintf("d%03d", i), int64(i)))
	}
	for i := 0; i < len(writes); i += MaxWritesPerCommit {
		if _, err := e.Commit(context.Background(), identity.Owner, ixDB, writes[i:min(i+MaxWritesPerCommit, len(writes))], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.log.rewrite(e.dbs, e.lastTime); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Commit(context.Background(), identity.Owner, ixDB, []*pb.Write{{Operation: &pb.Write_Delete{Delete: ixDB + "/documents/items/d007"}}}, nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, err := os.Stat(filepath.Join(dir, snapshotFile)); !os.IsNotExist(err) {
		t.Errorf("the JSON snapshot is still there: %v", err)
	}
	e, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := len(e.dbs[ixDB].docs); got != 599 {
		t.Errorf("reopened with %d documents, want 599", got)
	}
	if doc, _ := e.Get(context.Background(), identity.Owner, ixDB+"/documents/items/d599"); doc.GetFields()["n"].GetIntegerValue() != 599 {
		t.Errorf("d599 = %v", doc)
	}
}

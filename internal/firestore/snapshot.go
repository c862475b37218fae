package firestore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"
)

// The snapshot file is binary so that a large data folder opens quickly: a
// sequence of frames, each "<payload length, 4 bytes LE><crc32 of the
// payload, 4 bytes LE><payload>", whose payload is a ListDocumentsResponse
// holding up to snapshotBatch documents of one database, the database's
// name in its next_page_token field. Frames decode in parallel.
const (
	snapshotBinFile = "snapshot.bin"
	snapshotBatch   = 256
)

// writeSnapshot writes every document of dbs as frames to w.
func writeSnapshot(w io.Writer, dbs map[string]*database) error {
	var header [8]byte
	for name, d := range dbs {
		batch := &pb.ListDocumentsResponse{NextPageToken: name}
		flush := func() error {
			if len(batch.Documents) == 0 {
				return nil
			}
			payload, err := proto.Marshal(batch)
			if err != nil {
				return err
			}
			batch.Documents = batch.Documents[:0]
			binary.LittleEndian.PutUint32(header[:4], uint32(len(payload)))
			binary.LittleEndian.PutUint32(header[4:], crc32.ChecksumIEEE(payload))
			if _, err := w.Write(header[:]); err != nil {
				return err
			}
			_, err = w.Write(payload)
			return err
		}
		for _, doc := range d.docs {
			batch.Documents = append(batch.Documents, doc)
			if len(batch.Documents) == snapshotBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return nil
}

// replaySnapshot replays the frames of path, decoding them on every core.
// A missing file replays nothing; a damaged one is an error.
func replaySnapshot(path string, replay replayFunc) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	type decoded struct {
		batch *pb.ListDocumentsResponse
		t     time.Time
		err   error
	}
	frames := make(chan []byte, 16)
	results := make(chan decoded, 16)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for payload := range frames {
				batch := &pb.ListDocumentsResponse{}
				if err := proto.Unmarshal(payload, batch); err != nil {
					results <- decoded{err: err}
					continue
				}
				var latest time.Time
				for _, doc := range batch.Documents {
					if t := doc.GetUpdateTime().AsTime(); t.After(latest) {
						latest = t
					}
				}
				results <- decoded{batch: batch, t: latest}
			}
		})
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(frames)
		r := bufio.NewReaderSize(f, 1<<20)
		var header [8]byte
		for offset := int64(0); ; {
			if _, err := io.ReadFull(r, header[:]); err != nil {
				if err == io.EOF {
					err = nil
				}
				readErr <- err
				return
			}
			payload := make([]byte, binary.LittleEndian.Uint32(header[:4]))
			if _, err := io.ReadFull(r, payload); err != nil {
				readErr <- fmt.Errorf("truncated frame at byte %d: %w", offset, err)
				return
			}
			if crc32.ChecksumIEEE(payload) != binary.LittleEndian.Uint32(header[4:]) {
				readErr <- fmt.Errorf("checksum mismatch at byte %d", offset)
				return
			}
			offset += int64(len(header) + len(payload))
			frames <- payload
		}
	}()
	go func() { workers.Wait(); close(results) }()
	var firstErr error
	for res := range results {
		if res.err != nil {
			firstErr = firstError(firstErr, res.err)
			continue
		}
		if firstErr == nil {
			replay(res.batch.NextPageToken, res.t, res.batch.Documents, nil)
		}
	}
	if err := firstError(<-readErr, firstErr); err != nil {
		return fmt.Errorf("%s is corrupt: %w", path, err)
	}
	return nil
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

package firestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The snapshot file is binary so that a large data folder opens quickly: a
// sequence of frames, each "<payload length, 4 bytes LE><crc32 of the
// payload, 4 bytes LE><payload>", whose payload is an encoded
// ListDocumentsResponse holding up to snapshotBatch documents of one
// database, the database's name in its next_page_token field. Opening reads
// each document's name and update time from its bytes and keeps the bytes;
// frames are checked and split on every core.
const (
	snapshotBinFile = "snapshot.bin"
	snapshotBatch   = 256
)

// Field numbers of google.firestore.v1.ListDocumentsResponse.
const (
	frameDocumentsField = 1
	frameDatabaseField  = 2
)

// writeSnapshot writes every document of dbs as frames to w.
func writeSnapshot(w io.Writer, dbs map[string]*database) error {
	var header [8]byte
	var payload []byte
	for name, d := range dbs {
		count := 0
		flush := func() error {
			if count == 0 {
				return nil
			}
			payload = protowire.AppendTag(payload, frameDatabaseField, protowire.BytesType)
			payload = protowire.AppendString(payload, name)
			binary.LittleEndian.PutUint32(header[:4], uint32(len(payload)))
			binary.LittleEndian.PutUint32(header[4:], crc32.ChecksumIEEE(payload))
			if _, err := w.Write(header[:]); err != nil {
				return err
			}
			_, err := w.Write(payload)
			payload, count = payload[:0], 0
			return err
		}
		for _, s := range d.docs {
			raw, err := s.bytes()
			if err != nil {
				return err
			}
			payload = protowire.AppendTag(payload, frameDocumentsField, protowire.BytesType)
			payload = protowire.AppendBytes(payload, raw)
			if count++; count == snapshotBatch {
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

// frame is one snapshot frame, split into its documents.
type frame struct {
	database string
	docs     []encodedDoc
	latest   time.Time // the latest update time among docs
}

// parseFrame splits a frame's payload into its documents, which keep
// pointing into payload.
func parseFrame(payload []byte) (frame, error) {
	var fr frame
	err := eachField(payload, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case frameDocumentsField:
			doc, err := parseEncodedDoc(v)
			if err != nil {
				return err
			}
			if doc.updateTime.After(fr.latest) {
				fr.latest = doc.updateTime
			}
			fr.docs = append(fr.docs, doc)
		case frameDatabaseField:
			fr.database = string(v)
		}
		return nil
	})
	if err == nil && fr.database == "" {
		err = errors.New("a frame names no database")
	}
	return fr, err
}

// replaySnapshot replays the frames of path, checking and splitting them on
// every core. A missing file replays nothing; a damaged one is an error.
func replaySnapshot(path string, replay replayFunc) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	type parsed struct {
		frame frame
		err   error
	}
	type rawFrame struct {
		offset  int64
		sum     uint32
		payload []byte
	}
	frames := make(chan rawFrame, 64)
	results := make(chan parsed, 64)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for raw := range frames {
				if crc32.ChecksumIEEE(raw.payload) != raw.sum {
					results <- parsed{err: fmt.Errorf("checksum mismatch at byte %d", raw.offset)}
					continue
				}
				fr, err := parseFrame(raw.payload)
				if err != nil {
					err = fmt.Errorf("frame at byte %d: %w", raw.offset, err)
				}
				results <- parsed{frame: fr, err: err}
			}
		})
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(frames)
		// Frames are read straight into their own buffers, which the
		// documents then point into: one copy from the kernel, none after.
		var header [8]byte
		for offset := int64(0); ; {
			if _, err := io.ReadFull(f, header[:]); err != nil {
				if err == io.EOF {
					err = nil
				}
				readErr <- err
				return
			}
			payload := make([]byte, binary.LittleEndian.Uint32(header[:4]))
			if _, err := io.ReadFull(f, payload); err != nil {
				readErr <- fmt.Errorf("truncated frame at byte %d: %w", offset, err)
				return
			}
			frames <- rawFrame{offset: offset, sum: binary.LittleEndian.Uint32(header[4:]), payload: payload}
			offset += int64(len(header) + len(payload))
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
			replay(res.frame.database, res.frame.latest, res.frame.docs, nil)
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

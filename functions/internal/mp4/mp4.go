// Package mp4 reads how long an ISO base media file (MP4, MOV, M4V) runs:
// the movie header (moov/mvhd) holds the duration in units of its timescale.
// It reads box headers only, wherever moov sits (at the start of a
// "faststart" file or at its end), so a video in Cloud Storage is probed
// with a few small range reads.
package mp4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrNotMP4 is returned for data that is not an ISO base media file with a
// movie header.
var ErrNotMP4 = errors.New("not an MP4 or MOV file with a movie header")

// maxBoxes bounds how many boxes are walked, against crafted files.
const maxBoxes = 10000

// Duration returns the duration in seconds of the file r holds (size bytes).
func Duration(r io.ReaderAt, size int64) (float64, error) {
	moov, end, err := find(r, 0, size, "moov", true)
	if err != nil {
		return 0, err
	}
	mvhd, mvhdEnd, err := find(r, moov, end, "mvhd", false)
	if err != nil {
		return 0, err
	}
	var head [32]byte
	n := min(int64(len(head)), mvhdEnd-mvhd)
	if _, err := r.ReadAt(head[:n], mvhd); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("read mvhd: %w", err)
	}
	var timescale uint32
	var duration uint64
	switch {
	case n >= 20 && head[0] == 0: // version, flags, creation, modification, timescale, duration (32-bit)
		timescale, duration = binary.BigEndian.Uint32(head[12:16]), uint64(binary.BigEndian.Uint32(head[16:20]))
	case n >= 32 && head[0] == 1: // the same with 64-bit times and duration
		timescale, duration = binary.BigEndian.Uint32(head[20:24]), binary.BigEndian.Uint64(head[24:32])
	default:
		return 0, ErrNotMP4
	}
	if timescale == 0 {
		return 0, ErrNotMP4
	}
	return float64(duration) / float64(timescale), nil
}

// find walks the boxes in [from, to) for one of the given type and returns
// where its content starts and ends. top says the walk is the file's top
// level, whose first box must be one an ISO file starts with.
func find(r io.ReaderAt, from, to int64, kind string, top bool) (start, end int64, err error) {
	at := from
	for i := 0; at+8 <= to; i++ {
		if i == maxBoxes {
			return 0, 0, ErrNotMP4
		}
		var h [16]byte
		if _, err := r.ReadAt(h[:8], at); err != nil {
			return 0, 0, ErrNotMP4
		}
		size, typ, header := int64(binary.BigEndian.Uint32(h[:4])), string(h[4:8]), int64(8)
		switch size {
		case 0: // to the end
			size = to - at
		case 1: // a 64-bit size follows
			if at+16 > to {
				return 0, 0, ErrNotMP4
			}
			if _, err := r.ReadAt(h[8:16], at+8); err != nil {
				return 0, 0, ErrNotMP4
			}
			u := binary.BigEndian.Uint64(h[8:16])
			if u > uint64(to-at) {
				return 0, 0, ErrNotMP4
			}
			size, header = int64(u), 16
		}
		if size < header || size > to-at || (top && i == 0 && !starts[typ]) {
			return 0, 0, ErrNotMP4
		}
		if typ == kind {
			return at + header, at + size, nil
		}
		at += size
	}
	return 0, 0, ErrNotMP4
}

// starts are the boxes an ISO base media file begins with.
var starts = map[string]bool{"ftyp": true, "moov": true, "mdat": true, "free": true, "skip": true, "wide": true, "pnot": true}

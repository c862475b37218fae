package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/version"
)

// DataFormat is the layout of the data dir this loupe writes and reads: each
// service's files under <data-dir>/<service>. A change an older loupe would
// misread raises it, and checkDataFormat converts a data dir of an older
// format before marking it with the new one; an older loupe refuses a newer
// format.
const DataFormat = 1

// dataFormatFile names the data dir's format marker.
const dataFormatFile = "loupe-format.json"

// dataFormatMarker is the marker's content: the format, and which loupe
// last wrote it (for the message of a loupe too old to read it).
type dataFormatMarker struct {
	Format    int    `json:"format"`
	WrittenBy string `json:"writtenBy"`
}

// DataFormatError refuses a data dir this loupe cannot read safely.
type DataFormatError struct {
	Dir       string
	Format    int
	WrittenBy string
	// Err is set when the marker itself is unreadable.
	Err error
}

func (e *DataFormatError) Error() string {
	marker := filepath.Join(e.Dir, dataFormatFile)
	if e.Err != nil {
		return fmt.Sprintf("data dir %s: its format marker %s is unreadable (%v); loupe will not guess the layout of its data: restore the file, or give loupe another --data-dir", e.Dir, marker, e.Err)
	}
	return fmt.Sprintf("data dir %s holds data format %d, written by loupe %s; this loupe (%s) reads format %d and older: upgrade loupe, or give this one another --data-dir",
		e.Dir, e.Format, e.WrittenBy, version.Get(), DataFormat)
}

func (e *DataFormatError) Unwrap() error { return e.Err }

// checkDataFormat reads the data dir's format marker and refuses a format
// newer than DataFormat. A data dir without a marker is new, or was written
// before the marker existed, in format 1; either way it is marked with
// DataFormat before any service opens it.
func checkDataFormat(dir string) error {
	path := filepath.Join(dir, dataFormatFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeDataFormat(path)
	case err != nil:
		return &DataFormatError{Dir: dir, Err: err}
	}
	var m dataFormatMarker
	if err := json.Unmarshal(data, &m); err != nil {
		return &DataFormatError{Dir: dir, Err: err}
	}
	if m.Format < 1 {
		return &DataFormatError{Dir: dir, Err: fmt.Errorf("format %d", m.Format)}
	}
	if m.Format > DataFormat {
		return &DataFormatError{Dir: dir, Format: m.Format, WrittenBy: m.WrittenBy}
	}
	return nil
}

func writeDataFormat(path string) error {
	data, err := json.Marshal(dataFormatMarker{Format: DataFormat, WrittenBy: version.Get().String()})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(data, '\n'), ""); err != nil {
		return fmt.Errorf("data dir: write its format marker: %w", err)
	}
	return nil
}

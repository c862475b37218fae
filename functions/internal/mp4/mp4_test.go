package mp4_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/loupe-dev/loupe/functions/internal/mp4"
)

// TestDuration reads clips made by ffmpeg (testdata/), with moov at the
// start and at the end, and refuses what is not an ISO media file.
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		file string
		want float64
	}{
		{"testdata/faststart.mp4", 2.5},
		{"testdata/moov-at-end.mov", 1.2},
	} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mp4.Duration(bytes.NewReader(data), int64(len(data)))
		if err != nil || math.Abs(got-c.want) > 0.05 {
			t.Errorf("%s: %v, %v; want %v", c.file, got, err, c.want)
		}
	}
	for _, bad := range [][]byte{
		nil,
		[]byte("this is not a video, just a file named .mp4"),
		{0, 0, 0, 8, 'f', 't', 'y', 'p', 0, 0, 0, 8, 'm', 'd', 'a', 't'},  // no moov
		{0, 0, 0, 99, 'f', 't', 'y', 'p'},                                 // a box larger than the file
		{0, 0, 0, 16, 'm', 'o', 'o', 'v', 0, 0, 0, 8, 'm', 'v', 'h', 'd'}, // an mvhd too short
	} {
		if _, err := mp4.Duration(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, mp4.ErrNotMP4) {
			t.Errorf("Duration(%q) error = %v, want ErrNotMP4", bad, err)
		}
	}
}

// FuzzDuration: no input makes Duration panic or run away; the seeds are the
// test clips and some broken boxes.
func FuzzDuration(f *testing.F) {
	for _, name := range []string{"testdata/faststart.mp4", "testdata/moov-at-end.mov"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0, 0, 0, 1, 'f', 't', 'y', 'p', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 'm', 'o', 'o', 'v', 0, 0, 0, 0, 'm', 'v', 'h', 'd', 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := mp4.Duration(bytes.NewReader(data), int64(len(data)))
		if err == nil && (d < 0 || math.IsNaN(d)) {
			t.Errorf("duration %v", d)
		}
	})
}

package functions

import (
	"slices"
	"strings"
	"testing"
)

func TestParseDotenv(t *testing.T) {
	t.Parallel()
	got, err := parseDotenv([]byte(`# settings
PLANET=Earth
export AUDIENCE = "World"  
GREETING="Hello,\n\"you\""
RAW='a\nb # not a comment'
TRAILING=value # a comment
MULTI="line one
line two"
EMPTY=
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PLANET=Earth", "AUDIENCE=World", "GREETING=Hello,\n\"you\"", `RAW=a\nb # not a comment`,
		"TRAILING=value", "MULTI=line one\nline two", "EMPTY="}
	if !slices.Equal(got, want) {
		t.Errorf("parseDotenv = %q, want %q", got, want)
	}
	for _, bad := range []string{"NOEQUALS\n", "1KEY=x\n", "K=\"open\n", "K='open\n", "BAD-KEY=x\n"} {
		if _, err := parseDotenv([]byte(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("parseDotenv(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

func FuzzParseDotenv(f *testing.F) {
	for _, seed := range []string{"A=b\n", "A=\"x\\\"y\"\n", "A='q'\n", "# c\nB=\"multi\nline\"\n", "A=\"\\", "A=\"\n\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vars, err := parseDotenv(data)
		if err != nil {
			return
		}
		for _, v := range vars {
			if k, _, ok := strings.Cut(v, "="); !ok || !validEnvKey(k) {
				t.Fatalf("parseDotenv(%q) gave %q", data, v)
			}
		}
	})
}

package webchannel

import (
	"encoding/json"
	"net/url"
	"testing"
)

// FuzzParseMaps feeds forward-channel bodies to the map decoder: it never
// panics, and what it accepts is valid JSON numbered from ofs.
func FuzzParseMaps(f *testing.F) {
	for _, seed := range []string{
		"count=1&ofs=0&req0___data__=%7B%22database%22%3A%22d%22%7D",
		"count=2&ofs=5&req0___data__=1&req1___data__=%5B%5D",
		"count=x&ofs=0",
		"count=1&ofs=-3&req0___data__=1",
		"count=3&ofs=0&req0___data__=1",
		"count=1&ofs=0&req0___data__=%7B",
		"headers=X%3Ay%0D%0A&count=0&ofs=0",
		"%zz",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		maps, err := parseMaps(form)
		if err != nil {
			return
		}
		for id, m := range maps {
			if id < 0 || !json.Valid(m) {
				t.Fatalf("accepted map %d %q", id, m)
			}
		}
	})
}

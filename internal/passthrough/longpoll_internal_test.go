package passthrough

import (
	"bytes"
	"strings"
	"testing"
)

// TestLongPollPackets: each packet's messages are rewritten, whatever the
// strings in them hold (a "]);" or "pRTLPCB" in user data included), and
// the rest of the script stays as it was.
func TestLongPollPackets(t *testing.T) {
	script := `parent.pLPCommand1("start","id","pw");parent.pRTLPCB1(0,[{"t":"c","d":{"t":"h","d":{"h":"up:1","s":"x"}}}]);` +
		`parent.pRTLPCB1(1,[{"t":"d","d":{"b":{"p":"a","d":"]); pRTLPCB1(9,[\"h\"])"}}},{"t":"c","d":{"t":"r","d":"up:2"}}]);`
	got := longPollPackets([]byte(script), func(m []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(m, []byte("up:1"), []byte("loupe:8080")), []byte("up:2"), []byte("loupe:8080"))
	})
	want := strings.NewReplacer("up:1", "loupe:8080", "up:2", "loupe:8080").Replace(script)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// FuzzLongPollPackets: any answer is read without a panic, and none comes
// back empty.
func FuzzLongPollPackets(f *testing.F) {
	f.Add(`parent.pRTLPCB1(0,[{"t":"c","d":{"t":"h","d":{"h":"up:1"}}}]);`)
	f.Add(`pRTLPCB(,[`)
	f.Add(`pRTLPCB2(3,[1,2,"]);"]);pRTLPCB2(4,[]);`)
	f.Fuzz(func(t *testing.T, script string) {
		if got := longPollPackets([]byte(script), func(m []byte) []byte { return m }); len(got) == 0 && script != "" {
			t.Errorf("longPollPackets(%q) lost the script", script)
		}
	})
}

package passthrough

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// longPollCaller is, in a forwarded request's context, the host the caller
// reached loupe at and the namespace it names.
type longPollCaller struct{ host, ns string }

// maxLongPollAnswer bounds a long-polling answer loupe rewrites (the
// protocol's packets are at most a few hundred kilobytes).
const maxLongPollAnswer = 16 << 20

// localLongPoll rewrites the upstream's answer to a long poll (/.lp): a
// script of pRTLPCB<cb>(n,[messages]) calls, whose handshake and redirects
// must name loupe's host, as the WebSocket relay's do, or the SDK polls the
// upstream directly after the first answer. Other answers pass unchanged.
func (s *Service) localLongPoll(res *http.Response) error {
	caller, ok := res.Request.Context().Value(longPollCaller{}).(longPollCaller)
	if !ok || res.Request.URL.Path != "/.lp" || res.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxLongPollAnswer+1))
	res.Body.Close()
	if err != nil {
		return err
	}
	if len(body) > maxLongPollAnswer {
		return fmt.Errorf("a long-polling answer of more than %d bytes", maxLongPollAnswer)
	}
	body = longPollPackets(body, func(msg []byte) []byte { return s.localControl(msg, caller.ns, caller.host) })
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	res.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// longPollPackets is script with each message of its pRTLPCB calls'
// packets passed through rewrite; a call it cannot read ends the rewriting
// (the rest is kept as it was).
func longPollPackets(script []byte, rewrite func([]byte) []byte) []byte {
	var out []byte
	for {
		i := bytes.Index(script, []byte("pRTLPCB"))
		if i < 0 {
			return append(out, script...)
		}
		open, comma := bytes.IndexByte(script[i:], '('), bytes.IndexByte(script[i:], ',')
		if open < 0 || comma < open {
			return append(out, script...)
		}
		start := i + comma + 1
		dec := json.NewDecoder(bytes.NewReader(script[start:]))
		var msgs []json.RawMessage
		if dec.Decode(&msgs) != nil {
			return append(out, script...)
		}
		out = append(out, script[:start]...)
		out = append(out, '[')
		for k, m := range msgs {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(out, rewrite(m)...)
		}
		out = append(out, ']')
		script = script[start+int(dec.InputOffset()):]
	}
}

// Package wctest is a minimal WebChannel client (protocol version 8, the
// dialect the Firebase JS SDK speaks) for tests and benchmarks: it opens a
// session, sends messages as forward maps and reads server messages from a
// streaming back channel, as a browser tab would.
package wctest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ReadChunk reads one length-prefixed back-channel chunk, whose length
// counts UTF-16 code units as the JavaScript client does; the trailing
// newline of the payload is dropped.
func ReadChunk(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(line, "\n"))
	if err != nil {
		return "", fmt.Errorf("chunk length %q: %w", line, err)
	}
	var b strings.Builder
	for units := 0; units < n; {
		c, _, err := r.ReadRune()
		if err != nil {
			return b.String(), fmt.Errorf("chunk of %d units cut at %d: %w", n, units, err)
		}
		b.WriteRune(c)
		units += utf16.RuneLen(c)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Client is one WebChannel session.
type Client struct {
	// URL is the channel URL, e.g. http://host/google.firestore.v1.Firestore/Listen/channel.
	URL string
	// SID is the session id the server gave.
	SID     string
	http    *http.Client
	nextMap int
}

// Open performs the handshake against the channel URL, sending headers (as
// the SDK's init headers) and first as map 0.
func Open(ctx context.Context, hc *http.Client, channelURL string, headers http.Header, first []byte) (*Client, error) {
	var hb strings.Builder
	for name, values := range headers {
		for _, v := range values {
			hb.WriteString(name + ":" + v + "\r\n")
		}
	}
	form := url.Values{"headers": {hb.String()}, "count": {"1"}, "ofs": {"0"}, "req0___data__": {string(first)}}
	c := &Client{URL: channelURL, http: hc, nextMap: 1}
	body, err := c.post(ctx, "RID=1&CVER=22", form)
	if err != nil {
		return nil, fmt.Errorf("webchannel handshake: %w", err)
	}
	parts := strings.Split(body, `"`)
	if len(parts) < 4 || parts[1] != "c" {
		return nil, fmt.Errorf("webchannel handshake: unexpected answer %q", body)
	}
	c.SID = parts[3]
	return c, nil
}

// Send sends msg as the next forward map.
func (c *Client) Send(ctx context.Context, msg []byte) error {
	form := url.Values{"count": {"1"}, "ofs": {strconv.Itoa(c.nextMap)}, "req0___data__": {string(msg)}}
	c.nextMap++
	if _, err := c.post(ctx, "SID="+c.SID+"&RID=2&AID=0", form); err != nil {
		return fmt.Errorf("webchannel send: %w", err)
	}
	return nil
}

func (c *Client) post(ctx context.Context, query string, form url.Values) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"?VER=8&"+query, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return string(b), err
}

// Stream opens a streaming back channel and calls onMessage with each
// server message (the JSON inside each array), in order, until ctx ends or
// the server ends the response; it returns the reason it stopped.
func (c *Client) Stream(ctx context.Context, onMessage func(msg json.RawMessage)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"?VER=8&RID=rpc&CI=0&TYPE=xmlhttp&AID=0&SID="+c.SID, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("webchannel back channel: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("webchannel back channel: status %d: %s", resp.StatusCode, b)
	}
	r := bufio.NewReader(resp.Body)
	for {
		chunk, err := ReadChunk(r)
		if err != nil {
			return fmt.Errorf("webchannel back channel: %w", err)
		}
		var arrays [][2]json.RawMessage
		if err := json.Unmarshal([]byte(chunk), &arrays); err != nil {
			return fmt.Errorf("webchannel back channel: chunk %q: %w", chunk, err)
		}
		for _, a := range arrays {
			var msgs []json.RawMessage
			if err := json.Unmarshal(a[1], &msgs); err != nil {
				return fmt.Errorf("webchannel back channel: array %s: %w", a[1], err)
			}
			for _, m := range msgs {
				onMessage(m)
			}
		}
	}
}

package pull

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"
)

// How a pull reads a Realtime Database node: the keys of its children
// first (a shallow read), then the children themselves, rtdbPageKeys at a
// time, in ranges of keys. A range whose answer passes rtdbPageBytes is
// read again in halves, and a single child that does is copied the same
// way, child by child, so that no read holds more than rtdbPageBytes.
const (
	rtdbPageKeys  = 1000
	rtdbPageBytes = 8 << 20
	// rtdbShallowBytes bounds the keys of one node (about 4 million of
	// 64 bytes).
	rtdbShallowBytes = 256 << 20
)

// rtdbClient reads or writes one Realtime Database instance over REST:
// production's with the pull's credentials, or an emulator's (a loupe) as
// the owner, which no rules stop.
type rtdbClient struct {
	base   string // scheme and host
	ns     string // ?ns= of an emulator; "" for production, whose host names it
	client *http.Client
	owner  bool
}

// databaseSource is the client of the instance the pull reads: o.Namespace
// (FROM_PROJECT-default-rtdb by default), at NAME.firebaseio.com in
// production unless o.Namespace is a host of its own (as
// NAME.europe-west1.firebasedatabase.app), or on the source emulator.
func databaseSource(ctx context.Context, o *Options) (*rtdbClient, error) {
	ns := o.Namespace
	if ns == "" {
		ns = o.From.Project + "-default-rtdb"
	}
	if o.From.Emulator != "" {
		name, _, _ := strings.Cut(ns, ".")
		return &rtdbClient{base: "http://" + o.From.Emulator, ns: name, client: http.DefaultClient, owner: true}, nil
	}
	host := ns
	if !strings.Contains(ns, ".") {
		host = ns + ".firebaseio.com"
	}
	opts := append(slices.Clone(o.from), option.WithScopes("https://www.googleapis.com/auth/firebase.database", "https://www.googleapis.com/auth/userinfo.email"))
	c, _, err := htransport.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("realtime database client: %w", err)
	}
	return &rtdbClient{base: "https://" + host, client: c}, nil
}

// databaseTarget is the client of the instance of the same name in the
// target loupe (TO_PROJECT-default-rtdb when --ns is not given).
func databaseTarget(o *Options) *rtdbClient {
	ns, _, _ := strings.Cut(o.Namespace, ".")
	if ns == "" {
		ns = o.To.Project + "-default-rtdb"
	}
	return &rtdbClient{base: "http://" + o.To.Host, ns: ns, client: http.DefaultClient, owner: true}
}

// url is the REST URL of the location path with the query q.
func (c *rtdbClient) url(path string, q url.Values) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	if c.ns != "" {
		q.Set("ns", c.ns)
	}
	u := c.base + "/" + strings.Join(segs, "/") + ".json"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// do sends a request and returns its answer, of at most limit bytes (big
// reports a longer one, unread).
func (c *rtdbClient) do(ctx context.Context, method, path string, q url.Values, body []byte, limit int64) (data []byte, big bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.url(path, q), bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	if c.owner {
		req.Header.Set("Authorization", "Bearer owner")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, false, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, false, fmt.Errorf("%s /%s: %s", method, path, e.Error)
		}
		return nil, false, fmt.Errorf("%s /%s: status %d", method, path, resp.StatusCode)
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}

// databaseCopier copies locations of the source instance into the target's.
type databaseCopier struct {
	from, to *rtdbClient
	dryRun   bool
	p        *progress
	bytes    int64 // read
}

// copyNode copies the whole tree at path: a value at once, an object a
// range of its children at a time.
func (c *databaseCopier) copyNode(ctx context.Context, path string) error {
	data, big, err := c.from.do(ctx, http.MethodGet, path, url.Values{"shallow": {"true"}}, nil, rtdbShallowBytes)
	if err != nil {
		return err
	}
	if big {
		return fmt.Errorf("/%s has more children than a pull reads of one node (%s of keys)", path, byteCount(rtdbShallowBytes))
	}
	var shallow map[string]json.RawMessage
	if json.Unmarshal(data, &shallow) != nil {
		// A value (or nothing: null, which leaves the target as it is).
		if string(data) == "null" || c.dryRun {
			return nil
		}
		c.bytes += int64(len(data))
		_, _, err := c.to.do(ctx, http.MethodPut, path, url.Values{}, data, 1<<20)
		return err
	}
	keys := make([]string, 0, len(shallow))
	for k := range shallow {
		keys = append(keys, k)
	}
	shallow = nil
	slices.SortFunc(keys, compareKeys)
	if c.dryRun {
		c.p.line("would copy /%s (%d children)", path, len(keys))
		return nil
	}
	for start := 0; start < len(keys); start += rtdbPageKeys {
		if err := c.copyRange(ctx, path, keys[start:min(start+rtdbPageKeys, len(keys))]); err != nil {
			return err
		}
	}
	return nil
}

// copyRange copies the children keys (in key order) of the node at path
// with one read and one update, or, when they are too large for one read,
// half by half.
func (c *databaseCopier) copyRange(ctx context.Context, path string, keys []string) error {
	q := url.Values{"orderBy": {`"$key"`}, "startAt": {strconv.Quote(keys[0])}, "endAt": {strconv.Quote(keys[len(keys)-1])}}
	data, big, err := c.from.do(ctx, http.MethodGet, path, q, nil, rtdbPageBytes)
	if err != nil {
		return err
	}
	if big {
		if len(keys) == 1 {
			return c.copyNode(ctx, strings.TrimPrefix(path+"/"+keys[0], "/"))
		}
		half := len(keys) / 2
		if err := c.copyRange(ctx, path, keys[:half]); err != nil {
			return err
		}
		return c.copyRange(ctx, path, keys[half:])
	}
	if string(data) == "null" || string(data) == "{}" {
		return nil // deleted since the shallow read
	}
	c.bytes += int64(len(data))
	if _, _, err := c.to.do(ctx, http.MethodPatch, path, url.Values{}, data, 1<<20); err != nil {
		return err
	}
	c.p.tick("database: /%s: %s read", path, byteCount(c.bytes))
	return nil
}

// compareKeys orders keys as the Realtime Database orders them by key:
// those that are 32-bit integers first, by value, then the others as
// strings.
func compareKeys(a, b string) int {
	ia, aInt := intKey(a)
	ib, bInt := intKey(b)
	switch {
	case aInt && bInt:
		return ia - ib
	case aInt:
		return -1
	case bInt:
		return 1
	}
	return strings.Compare(a, b)
}

// intKey is k as the integer it spells in canonical form, if it is one of
// 32 bits.
func intKey(k string) (int, bool) {
	n, err := strconv.Atoi(k)
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 || strconv.Itoa(n) != k {
		return 0, false
	}
	return n, true
}

// pullDatabase copies every location o names.
func pullDatabase(ctx context.Context, o *Options, p *progress, r *Report) error {
	from, err := databaseSource(ctx, o)
	if err != nil {
		return err
	}
	c := &databaseCopier{from: from, dryRun: o.DryRun, p: p}
	if !o.DryRun {
		c.to = databaseTarget(o)
	}
	for _, path := range o.DatabasePaths {
		path = strings.Trim(path, "/")
		if err := c.copyNode(ctx, path); err != nil {
			return fmt.Errorf("/%s: %w", path, err)
		}
		if !o.DryRun {
			p.line("database: copied /%s", path)
		}
	}
	r.DatabaseBytes = c.bytes
	return nil
}

package stripe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/wal"
)

// The stand-in's objects persist in stripe.log in its data folder, a
// write-ahead log (internal/wal: checksummed records, group commit, a torn
// last record dropped at open). Each change is one record, the JSON array
// of the entries it wrote (each object whole, as it now is, and for a POST
// with an Idempotency-Key the answer it gave), so that a change and its
// answer replay together or not at all. A change is on disk before its
// answer is sent, and a read waits until what it saw is on disk. Opening
// replays the log and rewrites it compacted, one entry per record, without
// answers older than a day (Stripe forgets idempotency keys after 24 hours)
// or expired account links.
//
// An export is stripe_export/objects.jsonl: the compacted entries, one JSON
// object per line.
const (
	logName    = "stripe.log"
	exportDir  = "stripe_export"
	exportFile = "objects.jsonl"
	// answerLife is how long an idempotent answer is kept.
	answerLife = 24 * time.Hour
)

// entry is one object a change wrote: exactly one field is set.
type entry struct {
	Account  *storedAccount `json:"account,omitempty"`
	Link     *storedLink    `json:"link,omitempty"`
	Unlink   string         `json:"unlink,omitempty"` // the id of an account link used up
	Session  *storedSession `json:"session,omitempty"`
	Intent   *paymentIntent `json:"payment_intent,omitempty"`
	Charge   *charge        `json:"charge,omitempty"`
	Refund   *refund        `json:"refund,omitempty"`
	Transfer *transfer      `json:"transfer,omitempty"`
	Answer   *storedAnswer  `json:"answer,omitempty"`
}

// storedAccount is an account with what the API does not show.
type storedAccount struct {
	account
	APIVersion string `json:"loupe_api_version,omitempty"`
}

// storedLink is an account link and its id.
type storedLink struct {
	ID string `json:"id"`
	link
}

// storedSession is a Checkout Session with what the API does not show.
type storedSession struct {
	session
	Local sessionLocal `json:"loupe"`
}

// storedAnswer is the first answer to an Idempotency-Key, and the
// parameters of the request it answered (see paramsOf).
type storedAnswer struct {
	Key     string `json:"key"`
	Status  int    `json:"status"`
	Body    string `json:"body"`
	Created int64  `json:"created"`
	Params  string `json:"params,omitempty"`
}

// objects are the stand-in's state. Its maps are never replaced, only
// changed in place, so a map read off the struct stays the live one.
type objects struct {
	accounts map[string]*account
	links    map[string]*link
	sessions map[string]*session
	intents  map[string]*paymentIntent
	charges  map[string]*charge
	refunds  map[string]*refund
	// transfers are destination charges' transfers to connected accounts.
	transfers map[string]*transfer
	// answered holds the first answer to each Idempotency-Key.
	answered map[string]storedAnswer
}

func newObjects() objects {
	return objects{accounts: map[string]*account{}, links: map[string]*link{}, sessions: map[string]*session{},
		intents: map[string]*paymentIntent{}, charges: map[string]*charge{}, refunds: map[string]*refund{},
		transfers: map[string]*transfer{}, answered: map[string]storedAnswer{}}
}

// apply writes one entry into the objects.
func (o *objects) apply(e entry) {
	switch {
	case e.Account != nil:
		a := e.Account.account
		a.apiVersion = e.Account.APIVersion
		o.accounts[a.ID] = &a
	case e.Link != nil:
		l := e.Link.link
		o.links[e.Link.ID] = &l
	case e.Unlink != "":
		delete(o.links, e.Unlink)
	case e.Session != nil:
		c := e.Session.session
		c.local = e.Session.Local
		o.sessions[c.ID] = &c
	case e.Intent != nil:
		pi := *e.Intent
		o.intents[pi.ID] = &pi
	case e.Charge != nil:
		ch := *e.Charge
		o.charges[ch.ID] = &ch
	case e.Refund != nil:
		re := *e.Refund
		o.refunds[re.ID] = &re
	case e.Transfer != nil:
		tr := *e.Transfer
		o.transfers[tr.ID] = &tr
	case e.Answer != nil:
		o.answered[e.Answer.Key] = *e.Answer
	}
}

// applyChange replays one record of the log: the entries of one change.
func (o *objects) applyChange(payload []byte) error {
	entries, err := decodeChange(payload)
	if err != nil {
		return err
	}
	for _, e := range entries {
		o.apply(e)
	}
	return nil
}

// replaceWith makes o hold what other holds.
func (o *objects) replaceWith(other objects) {
	replace(o.accounts, other.accounts)
	replace(o.links, other.links)
	replace(o.sessions, other.sessions)
	replace(o.intents, other.intents)
	replace(o.charges, other.charges)
	replace(o.refunds, other.refunds)
	replace(o.transfers, other.transfers)
	replace(o.answered, other.answered)
}

func replace[V any](dst, src map[string]V) {
	clear(dst)
	maps.Copy(dst, src)
}

// prune drops the answers older than answerLife and the links expired at
// now.
func (o *objects) prune(now time.Time) {
	maps.DeleteFunc(o.answered, func(_ string, a storedAnswer) bool { return now.Sub(time.Unix(a.Created, 0)) >= answerLife })
	maps.DeleteFunc(o.links, func(_ string, l *link) bool { return l.ExpiresAt < now.Unix() })
}

// snapshot is every object as an entry, in a stable order.
func (o *objects) snapshot() []entry {
	var out []entry
	for _, id := range slices.Sorted(maps.Keys(o.accounts)) {
		out = append(out, putAccount(o.accounts[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(o.links)) {
		out = append(out, entry{Link: &storedLink{id, *o.links[id]}})
	}
	for _, id := range slices.Sorted(maps.Keys(o.sessions)) {
		out = append(out, putSession(o.sessions[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(o.intents)) {
		out = append(out, putIntent(o.intents[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(o.charges)) {
		out = append(out, putCharge(o.charges[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(o.refunds)) {
		re := *o.refunds[id]
		out = append(out, entry{Refund: &re})
	}
	for _, id := range slices.Sorted(maps.Keys(o.transfers)) {
		out = append(out, putTransfer(o.transfers[id]))
	}
	for _, key := range slices.Sorted(maps.Keys(o.answered)) {
		a := o.answered[key]
		out = append(out, entry{Answer: &a})
	}
	return out
}

// The entries that write an object as it now is.

func putAccount(a *account) entry { return entry{Account: &storedAccount{*a, a.apiVersion}} }
func putSession(c *session) entry { return entry{Session: &storedSession{*c, c.local}} }
func putIntent(pi *paymentIntent) entry {
	copied := *pi
	return entry{Intent: &copied}
}
func putCharge(ch *charge) entry {
	copied := *ch
	return entry{Charge: &copied}
}

// decodeChange reads a record of the log: a JSON array of entries.
func decodeChange(payload []byte) ([]entry, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, errors.New("a change with no entries")
	}
	entries := make([]entry, len(raw))
	for i, r := range raw {
		var err error
		if entries[i], err = decodeEntry(r); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// decodeEntry reads one entry, strictly: unknown fields, a second object
// or an entry that is not exactly one object with an id are errors.
func decodeEntry(data []byte) (entry, error) {
	var e entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return entry{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return entry{}, errors.New("more than one entry")
	}
	ids := map[string]string{}
	if e.Account != nil {
		ids["account"] = e.Account.ID
	}
	if e.Link != nil {
		ids["link"] = e.Link.ID
	}
	if e.Unlink != "" {
		ids["unlink"] = e.Unlink
	}
	if e.Session != nil {
		ids["session"] = e.Session.ID
	}
	if e.Intent != nil {
		ids["payment_intent"] = e.Intent.ID
	}
	if e.Charge != nil {
		ids["charge"] = e.Charge.ID
	}
	if e.Refund != nil {
		ids["refund"] = e.Refund.ID
	}
	if e.Answer != nil {
		ids["answer"] = e.Answer.Key
	}
	if len(ids) != 1 {
		return entry{}, fmt.Errorf("an entry holds one object, this one %d", len(ids))
	}
	for kind, id := range ids {
		if id == "" {
			return entry{}, fmt.Errorf("%s without an id", kind)
		}
	}
	return e, nil
}

// encodeChange is the log record of one change.
func encodeChange(entries []entry) ([]byte, error) {
	payload, err := json.Marshal(entries)
	if err != nil {
		return nil, fmt.Errorf("stripe: encode a change: %w", err)
	}
	return payload, nil
}

// openLog replays dir's log into o and rewrites it compacted.
func openLog(dir string, o *objects) (*wal.Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("stripe data folder: %w", err)
	}
	log, err := wal.Open(filepath.Join(dir, logName), o.applyChange)
	if err != nil {
		return nil, err
	}
	o.prune(time.Now())
	if err := rewrite(log, o.snapshot()); err != nil {
		log.Close()
		return nil, err
	}
	return log, nil
}

// rewrite replaces the log's records with entries, one a record.
func rewrite(log *wal.Log, entries []entry) error {
	payloads := make([][]byte, len(entries))
	for i, e := range entries {
		var err error
		if payloads[i], err = encodeChange([]entry{e}); err != nil {
			return err
		}
	}
	if err := log.Rewrite(payloads); err != nil {
		return fmt.Errorf("stripe: compact %s: %w", log.Path(), err)
	}
	return nil
}

// writeExport writes entries as root's stripe_export/objects.jsonl.
func writeExport(root string, entries []entry) error {
	dir := filepath.Join(root, exportDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return atomicfile.Write(filepath.Join(dir, exportFile), buf.Bytes(), "")
}

// CheckExport reads root's stripe_export/objects.jsonl as an import would,
// so that a damaged file fails before any service imports; a missing file
// is fine (the import changes nothing).
func CheckExport(root string) error {
	if _, err := readExport(root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readExport reads root's stripe_export/objects.jsonl into new objects; a
// missing file is fs.ErrNotExist, a damaged line an error naming it.
func readExport(root string) (objects, error) {
	path := filepath.Join(root, exportDir, exportFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return objects{}, err
	}
	return parseExport(path, data)
}

// parseExport reads the lines of an export file (named path in errors).
func parseExport(path string, data []byte) (objects, error) {
	o := newObjects()
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, err := decodeEntry(line)
		if err != nil {
			return objects{}, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		o.apply(e)
	}
	return o, nil
}

// Open implements server.Opener: it loads the data folder's log, then
// --import when given.
func (s *Service) Open(ctx context.Context) error {
	if s.env.DataDir != "" {
		log, err := openLog(s.env.DataDir, &s.objects)
		if err != nil {
			return err
		}
		s.log = log
	}
	if s.env.ImportDir != "" {
		return s.Import(ctx, s.env.ImportDir)
	}
	return nil
}

// Close implements server.Closer: it syncs and closes the log.
func (s *Service) Close() error {
	if s.log == nil {
		return nil
	}
	return s.log.Close()
}

// Export implements server.Exporter: stripe_export/objects.jsonl.
func (s *Service) Export(_ context.Context, dir string) error {
	s.mu.Lock()
	entries, seq := s.snapshot(), s.appendedLocked()
	s.mu.Unlock()
	if err := s.wait(seq); err != nil {
		return err
	}
	return writeExport(dir, entries)
}

// Import implements server.Importer: the objects become those of
// dir/stripe_export/objects.jsonl (nothing changes without the file, or
// when it is damaged).
func (s *Service) Import(_ context.Context, dir string) error {
	fresh, err := readExport(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fresh.prune(time.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		if err := rewrite(s.log, fresh.snapshot()); err != nil {
			return err
		}
	}
	s.replaceWith(fresh)
	return nil
}

// commitLocked writes a change's entries into the objects and appends them
// to the log as one record; s.mu is held, so the log's order is the order
// of the changes. It returns the sequence number to pass to durable.
func (s *Service) commitLocked(entries []entry) (uint64, error) {
	var seq uint64
	if s.log != nil {
		payload, err := encodeChange(entries)
		if err != nil {
			return 0, err
		}
		if seq, err = s.log.Append(payload); err != nil {
			return 0, err
		}
	}
	for _, e := range entries {
		s.apply(e)
	}
	return seq, nil
}

// commitAndUnlock commits entries as commitLocked does, releases s.mu and
// waits until they are durable.
func (s *Service) commitAndUnlock(entries []entry) error {
	seq, err := s.commitLocked(entries)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.durable(seq)
}

// durable waits until the change numbered seq is on disk. When it could
// not be written, the objects are read back from the log, so that nothing
// the disk refused stays visible.
func (s *Service) durable(seq uint64) error {
	err := s.wait(seq)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		_ = s.log.Flush() // what is queued fails or lands before the log is read
		o := newObjects()
		if _, rerr := wal.Replay(s.log.Path(), false, o.applyChange); rerr != nil {
			return errors.Join(err, rerr)
		}
		s.replaceWith(o)
	}
	return err
}

// appendedLocked is the sequence number of the last change; s.mu is held.
func (s *Service) appendedLocked() uint64 {
	if s.log == nil {
		return 0
	}
	return s.log.Appended()
}

// wait returns once the change numbered seq is on disk: a reader that saw
// the objects up to it answers only then.
func (s *Service) wait(seq uint64) error {
	if s.log == nil || seq == 0 {
		return nil
	}
	return s.log.Wait(seq)
}

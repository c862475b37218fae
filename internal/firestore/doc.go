// Package firestore is loupe's Firestore engine: documents, writes,
// transactions, queries, aggregations and listen streams over a durable store.
//
// It speaks the Firestore v1 data model (the firestorepb messages) but knows
// nothing of transports: the gRPC, REST and WebChannel adapters translate
// requests into calls on Engine and map Error kinds to wire status codes.
//
// Model: an Engine holds databases keyed by "projects/{p}/databases/{d}",
// isolated from each other. Every commit gets a commit time from one monotonic
// clock shared by all databases; a document's updateTime is the commit time
// of the write that produced it, and listeners see exactly that time.
//
// Durability: with a data dir, each commit is appended to a write-ahead log
// (internal/wal, which Auth's accounts log shares) and fsynced (commits
// arriving together share one fsync) before it is acknowledged; Open
// replays the log, tolerating a torn final record. A
// commit is applied in memory before its fsync (so later commits build on
// it), but readers read at the time of the last durable commit and undo
// the later ones from the history, so none sees a commit that a failed
// fsync undoes or a crash loses.
//
// Reads: a read sees the latest state, a read-write transaction's (whose
// versions it records), or the state at a read time: a read-only transaction
// reads at its read time or at the time it began. The engine keeps the
// commits of the last hour (production's version retention) with the
// previous version of each changed document, encoded, within a byte budget
// (oldest forgotten first; never one an open read-only transaction or the
// last durable commit needs), and reads at a past time undo the later
// commits; an older read time fails with FAILED_PRECONDITION, as in
// Firestore. Opening a data folder rebuilds the history from the commit
// log. Listen resumes a target from its resume token (the read time) with
// only what changed since, plus an ExistenceFilter. Listen streams queue no
// commits: an index of the targets' paths, collections and equality values
// marks what changed in each, and a stream sends the latest state of it.
//
// Queries are planned, then executed against the state: the planner picks
// one single-field index, and the executor streams its rows in order,
// applies the whole filter, the cursors and the order to each candidate,
// and stops once offset+limit results are certain.
//
// Caveats:
//   - Index model: like Firestore's automatic single-field indexes, every
//     field path of every collection group is indexed ascending (read
//     backwards for descending) and as array-contains, plus a name index.
//     An index is keyed by collection id, so a query on one subcollection
//     skips rows of same-id collections under other parents. Indexes are
//     built on the first query that needs them (a scan of the database) and
//     then kept up to date by every commit under the write lock, so readers
//     under the read lock see them consistent with the documents. Rows point
//     into the documents: an index costs a B-tree entry (two pointers) per
//     document or array element. One index every database keeps from its
//     first write (and builds in the background for an opened data folder):
//     its documents by collection path, then name. Queries of a collection
//     in name order seek in it to their name bounds; counts of a collection,
//     collection ids and document listings read it, one seek per id.
//   - The planner uses the index of the first order (seeking to bounds from
//     filters and cursors on that field, prefixed by an equality on another
//     field when there is one) unless a point read is smaller than about
//     sqrt((offset+limit) × rows), which it then reads whole and sorts. The
//     point reads are the single-value ranges of an equality or
//     array-contains, and unions of them (each document visited once) for
//     an IN, an array-contains-any, or an OR whose every member has one.
//     NOT_IN and != are applied as filters, never as seeks; composite
//     indexes are not needed to run a query. They are modelled only as
//     firestore.indexes.json declares them: queryIndexes works out the
//     indexes production would read, and the index policy records (and with
//     enforcement refuses, as production does) those not declared.
//   - Vectors ({__type__: "__vector__", value: [doubles]}) order between
//     arrays and maps. FindNearest is exact: without filters it scans a flat
//     vector index of the field (float64s by document path, built on first
//     use), otherwise it measures the documents the filters pass.
//   - Explain reports the indexes queryIndexes names, and with analyze the
//     index rows and documents the executor read (a plan's scanStats,
//     counted only when explaining): rows of every range a union reads,
//     the documents read to filter, order or return, the vector entries a
//     FindNearest compares. The planner's probes of point ranges are not
//     counted. An aggregation reports its rows and no document, as
//     production, which reads only index entries, does.
//   - Reads at a past read time (and every read while a commit awaits its
//     fsync, which reads at the last durable one) read the indexes, skip
//     the documents later commits changed and add those as the history
//     says they were then. Listings of documents and collection ids at such
//     a time walk the database's paths instead of seeking.
//   - Read-write transactions (the server SDKs': they begin a transaction
//     and read in it) lock the documents they read and write until they
//     commit or roll back, released once the commit is durable; others
//     wait, and wound-wait keeps them free of deadlocks (the older wins).
//     A lock holder silent for abandonAfter while others wait is taken for
//     abandoned and loses its locks. Reads still record versions, checked
//     again at commit. The browser SDK's transactions read outside any
//     transaction and commit with preconditions: optimistic, as before.
package firestore

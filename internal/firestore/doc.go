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
// and fsynced (commits arriving together share one fsync) before it is
// acknowledged; Open replays the log, tolerating a torn final record.
//
// Caveats: transactions are optimistic (reads record versions, commit fails
// with ABORTED when a read document changed), so a read-only transaction
// with a readTime reads the current state; queries scan the collection.
package firestore

// Package pipeline runs Firestore Enterprise edition pipelines
// (ExecutePipeline) over the Firestore engine's documents.
//
// Model: a request's StructuredPipeline is decoded once into stages whose
// expressions are compiled to an expression tree (decode.go, expr.go); the
// first stage is a source (a collection, a collection group, the whole
// database, named documents, or literal rows) and each later stage maps
// the rows of the one before (stages.go). Rows are documents: a name and
// times when they came from a stored document, and fields.
//
// Sources read through the engine (RunQuery and BatchGet) in one state: the
// request's transaction, its read time, or the engine's read time when the
// pipeline starts. A source's leading where, sort, offset and limit stages
// are pushed down into a classic structured query when they translate
// exactly (plan.go), so the engine's indexes serve them; the rest of the
// pipeline runs over the rows in memory. Explain says which.
//
// Expressions evaluate to a value, to absent (a field that is not there) or
// to an error value (a type mismatch, a bad argument): functions see these
// as production does (most return null for a null argument and an error for
// an absent or mistyped one; is_error, if_error, if_absent and exists look
// at them). An error that reaches a stage's output fails the request with
// INVALID_ARGUMENT and the function's message; a where whose condition is
// not true (false, null, absent or an error) drops the row.
//
// Caveats:
//   - search and the text functions score with a simple term-frequency
//     measure, not production's; geo_distance is the haversine distance on
//     a sphere of the Earth's mean radius.
//   - Write stages (insert, update, upsert, delete) commit outside any
//     transaction, or as the auto-committed transaction of an atomic
//     execution; inside a transaction the client began they are staged
//     and apply when it commits (its own later reads do not see them).
package pipeline

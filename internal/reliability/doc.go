// Package reliability holds the tests that prove loupe's promises about
// durability, faults, load and security, each against a real `loupe serve`
// driven through the official SDKs: crash safety under kill -9, behaviour on
// a read-only, full or corrupted data dir, many concurrent clients, and the
// same denial over every transport. docs/reliability.md maps each promise to
// its test.
//
// The short forms run in `go test ./...`; `go test ./internal/reliability
// -long` (run by `make bench`) runs the long soak and load forms.
package reliability

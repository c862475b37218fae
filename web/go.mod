// This file only keeps the Go tool out of web/ (node_modules ships Go sources):
// `go test ./...` at the repository root must not walk into it.
module github.com/loupe-dev/loupe/web

go 1.26

// Package server runs a set of emulated services on one main port and the
// official emulators' ports.
//
// HTTP/1.1 and gRPC share each port: a connection that opens with HTTP/2's
// prior-knowledge preface (how gRPC clients connect without TLS) is served by
// the gRPC server's own transport, which checks each call as the HTTP handler
// checks a request (guardCall); everything else goes to the HTTP mux, behind
// CORS that lets the Firebase SDKs
// call from pages served on this machine. Services plug in through the
// Service interface and the optional Opener, Closer, Exporter and Importer
// interfaces. Each service registers its own routes, its admin endpoints
// through Routes.Admin (refused in strict mode) and its catch-all handlers
// through Routes.Fallback; the server adds only /healthz and the export,
// import and debug endpoints. The server owns the services' life cycle: open
// (load the data dir or an import), serve, then close (and export on exit) on
// shutdown; Open and Close do the same without a port, for tests that serve
// Handler in process. Which services exist and how they are wired is
// package app's business.
package server

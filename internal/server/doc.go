// Package server runs every emulated service on one listener.
//
// HTTP/1.1, h2c and gRPC share each port: a request whose protocol is HTTP/2
// and whose content type starts with application/grpc goes to the gRPC server,
// everything else to the HTTP mux, behind CORS that lets the Firebase SDKs call
// from any origin. Services plug in through the Service interface and the
// optional Opener, Closer, Exporter and Resetter interfaces; the server owns
// their life cycle: open (load the data dir or an import), register routes,
// serve, then close (and export on exit) on shutdown.
package server

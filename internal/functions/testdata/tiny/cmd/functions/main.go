// Command functions is a tiny functions module for loupe's supervision tests.
// GET /api/version answers the version constant. GET /api/slow prints
// "<version> slow request", waits while the file TINY_HOLD names exists (30 s
// at most), then answers the version constant. POST /events/notes takes the
// CloudEvent of a notes/{n} write and prints "<version> got <document>". The document notes/panic makes a goroutine
// panic, which ends the process, unless the file TINY_MARKER names exists
// (the panic creates it, so the redelivery after the restart succeeds). If
// the file TINY_CRASH names exists, the process exits with status 1 at start.
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

const version = "v1"

func main() {
	if _, err := os.Stat(os.Getenv("TINY_CRASH")); os.Getenv("TINY_CRASH") != "" && err == nil {
		fmt.Fprintln(os.Stderr, "crashing at start:", os.Getenv("TINY_CRASH"), "exists")
		os.Exit(1)
	}
	http.HandleFunc("POST /events/notes", func(w http.ResponseWriter, r *http.Request) {
		doc := r.Header.Get("ce-document")
		fmt.Println(version, "got", doc)
		if _, err := os.Stat(os.Getenv("TINY_MARKER")); doc == "notes/panic" && err != nil {
			_ = os.WriteFile(os.Getenv("TINY_MARKER"), nil, 0o644)
			go func() { panic("boom on " + doc) }()
			time.Sleep(10 * time.Second) // the panic ends the process first
		}
		w.WriteHeader(http.StatusNoContent)
	})
	http.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, version) })
	http.HandleFunc("GET /api/slow", func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(version, "slow request")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(os.Getenv("TINY_HOLD")); err != nil {
				break
			}
		}
		fmt.Fprint(w, version)
	})
	fmt.Println(version, "listening")
	if err := http.ListenAndServe(os.Getenv("HOST")+":"+os.Getenv("PORT"), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

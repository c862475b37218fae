package logring

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHandler_RecordsStructuredEntriesAndPassesOn(t *testing.T) {
	ring := New(10)
	var out bytes.Buffer
	logger := slog.New(NewHandler(ring, slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn})))
	fn := logger.With("service", "functions", "codebase", "default")
	fn.Info("hello from a function", "function", "onUser", "severity", "WARNING", "user", map[string]any{"id": 7})
	logger.With("service", "firestore").WithGroup("req").Info("read", "path", "a/b", "err", errors.New("boom"))
	logger.Debug("not kept: the terminal does not take debug")

	got, latest := ring.After(0, 0, nil)
	if latest != 2 || len(got) != 2 {
		t.Fatalf("ring holds %d entries (latest %d), want 2: %+v", len(got), latest, got)
	}
	e := got[0]
	if e.Service != "functions" || e.Codebase != "default" || e.Function != "onUser" || e.Level != Warn || e.Message != "hello from a function" {
		t.Errorf("first entry = %+v", e)
	}
	if e.Payload["user"] != "map[id:7]" {
		t.Errorf("payload = %#v", e.Payload)
	}
	if got[1].Service != "firestore" || got[1].Payload["req.path"] != "a/b" || got[1].Payload["req.err"] != "boom" || got[1].Level != Info {
		t.Errorf("second entry = %+v", got[1])
	}
	// The terminal's handler decides by slog's level, not the function's severity.
	if strings.Contains(out.String(), "read") || strings.Contains(out.String(), "hello") {
		t.Errorf("the terminal got records below its level:\n%s", out.String())
	}
}

func TestRing_IsBoundedAndCutsLongText(t *testing.T) {
	ring := New(3)
	for i := 0; i < 5; i++ {
		ring.Add(Entry{Message: strings.Repeat("é", maxText)})
	}
	got, latest := ring.After(0, 0, nil)
	if len(got) != 3 || latest != 5 || got[0].ID != 3 {
		t.Fatalf("kept %d entries from id %d (latest %d), want 3 from 3", len(got), got[0].ID, latest)
	}
	if len(got[0].Message) > maxText+20 || !strings.HasSuffix(got[0].Message, "… (cut)") {
		t.Errorf("message of %d bytes not cut", len(got[0].Message))
	}
}

func TestServeHTTP_FiltersAndFollows(t *testing.T) {
	ring := New(100)
	ring.Add(Entry{Service: "auth", Level: Info, Message: "signed up ann"})
	ring.Add(Entry{Service: "functions", Level: Error, Function: "onUser", Message: "crashed", Payload: map[string]any{"stack": "at index.js:3"}})
	ring.Add(Entry{Service: "firestore", Level: Warn, Message: "index needed"})
	srv := httptest.NewServer(ring)
	defer srv.Close()

	lines := func(query string) []Entry {
		res, err := http.Get(srv.URL + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out []Entry
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			var e Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			out = append(out, e)
		}
		return out
	}
	if got := lines("level=warn"); len(got) != 2 || got[0].Message != "crashed" || got[1].Message != "index needed" {
		t.Errorf("level=warn gave %+v", got)
	}
	if got := lines("service=auth,firestore"); len(got) != 2 {
		t.Errorf("two services gave %+v", got)
	}
	if got := lines("q=INDEX.JS"); len(got) != 1 || got[0].Function != "onUser" {
		t.Errorf("text in the payload gave %+v", got)
	}
	if res, _ := http.Get(srv.URL + "?level=loud"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad level answered %d", res.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"?follow=1&service=hub", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ring.Add(Entry{Service: "firestore", Message: "not this one"})
	ring.Add(Entry{Service: "hub", Message: "exported"})
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if sc.Text() == "" {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Message != "exported" || e.ID != 5 {
			t.Errorf("followed %+v, want the hub's entry 5", e)
		}
		return
	}
	t.Fatalf("the stream ended: %v", sc.Err())
}

// Package rates is loupe's local stand-in for the exchange-rate API of the
// spec (docs/product-spec.md §7: GET /v4/latest/{base}, a rates map keyed by currency code), so
// prices convert on a machine without the internet.
//
// It answers GET /emulator/rates/v4/latest/{base} in the real service's v4
// shape ({provider, base, date, time_last_updated, rates}) from a dated rate
// table: exchange_rates.json at the root of the import (the demo data ships
// one; an export keeps it, as it keeps every file no service writes),
// kept in the service's data dir so later runs without --import still have
// it. The table is quoted against one base; other bases get cross rates
// (rates[x] / rates[base], six significant digits), as the real service
// quotes every base from one set of mid-market rates.
//
// Caveats: without a table every base answers 503, so the app's "rates are
// unavailable" path can be seen locally; an unknown base answers 404 with
// the real service's {"result":"error","error-type":"unsupported-code"}.
package rates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/loupe-dev/loupe/internal/atomicfile"
	"github.com/loupe-dev/loupe/internal/server"

	"github.com/loupe-dev/loupe/internal/httpjson"
)

// TableFile is where an export (and the data dir) keeps the rate table.
const TableFile = "exchange_rates.json"

// Path is the stand-in's route prefix; the base code follows it.
const Path = "/emulator/rates/v4/latest/"

// Table is a dated set of rates against Base, in the real service's shape.
type Table struct {
	Provider        string             `json:"provider"`
	Base            string             `json:"base"`
	Date            string             `json:"date"`
	TimeLastUpdated int64              `json:"time_last_updated"`
	Rates           map[string]float64 `json:"rates"`
}

// Quote returns the table re-based on base (cross rates), or false when the
// table does not quote base.
func (t *Table) Quote(base string) (*Table, bool) {
	pivot, ok := t.Rates[base]
	if base == t.Base {
		pivot, ok = 1, true
	}
	if !ok || pivot <= 0 {
		return nil, false
	}
	out := &Table{Provider: t.Provider, Base: base, Date: t.Date, TimeLastUpdated: t.TimeLastUpdated,
		Rates: make(map[string]float64, len(t.Rates)+1)}
	out.Rates[t.Base] = round(1 / pivot)
	for code, r := range t.Rates {
		out.Rates[code] = round(r / pivot)
	}
	out.Rates[base] = 1
	return out, true
}

// round keeps six significant digits, as the real service quotes.
func round(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}

// Service is the exchange-rate stand-in.
type Service struct {
	env server.Env

	mu    sync.RWMutex
	table *Table
}

// New builds the stand-in; Open loads its table.
func New(env server.Env) *Service { return &Service{env: env} }

// FunctionEnv points the rates function at this stand-in, given loupe's base URL.
func FunctionEnv(loupeURL string) []string {
	return []string{"RATES_UPSTREAM_URL=" + strings.TrimSuffix(loupeURL, "/") + Path}
}

// Name implements server.Service.
func (s *Service) Name() string { return "rates" }

// Register implements server.Service.
func (s *Service) Register(r *server.Routes) {
	r.HTTP.HandleFunc("GET "+Path+"{base}", s.latest)
}

// Open loads the table: from the import when it has one (copied into the
// data dir), else from the data dir. Having none is not an error.
func (s *Service) Open(context.Context) error {
	var sources []string
	if s.env.ImportDir != "" {
		sources = append(sources, filepath.Join(s.env.ImportDir, TableFile))
	}
	if s.env.DataDir != "" {
		sources = append(sources, filepath.Join(s.env.DataDir, TableFile))
	}
	for i, path := range sources {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("rates: %w", err)
		}
		t, err := parse(data)
		if err != nil {
			return fmt.Errorf("rates: %s: %w", path, err)
		}
		if i == 0 && s.env.ImportDir != "" && s.env.DataDir != "" {
			kept := filepath.Join(s.env.DataDir, TableFile)
			if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
				return fmt.Errorf("rates: %w", err)
			}
			if err := atomicfile.Write(kept, data, ""); err != nil {
				return fmt.Errorf("rates: keep the imported table: %w", err)
			}
		}
		s.mu.Lock()
		s.table = t
		s.mu.Unlock()
		return nil
	}
	return nil
}

// The range a rate may take, so every cross rate stays a finite, positive
// number (real rates against USD run from about 0.3 to about 100,000).
const minRate, maxRate = 1e-6, 1e9

// parse reads and checks a table: a three-letter base and positive rates.
func parse(data []byte) (*Table, error) {
	var t Table
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	if len(t.Base) != 3 || len(t.Rates) == 0 {
		return nil, errors.New("a table needs a base and rates")
	}
	for code, r := range t.Rates {
		if len(code) != 3 || !(r >= minRate && r <= maxRate) {
			return nil, fmt.Errorf("rate %s = %v: rates are numbers from %g to %g keyed by a currency code", code, r, minRate, maxRate)
		}
	}
	return &t, nil
}

func (s *Service) latest(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	t := s.table
	s.mu.RUnlock()
	if t == nil {
		httpjson.Write(w, http.StatusServiceUnavailable, map[string]string{"result": "error", "error-type": "unavailable",
			"message": "no exchange-rate table: start loupe with --import emulator-data, which ships one"})
		return
	}
	q, ok := t.Quote(strings.ToUpper(r.PathValue("base")))
	if !ok {
		httpjson.Write(w, http.StatusNotFound, map[string]string{"result": "error", "error-type": "unsupported-code"})
		return
	}
	httpjson.Write(w, http.StatusOK, q)
}

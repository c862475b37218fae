// Package rates serves exchange rates: GET …/v4/latest/{base} answers
// {"base": "USD", "rates": {"EUR": 0.92, …}} from an upstream API, cached five
// minutes per base. When the upstream fails it serves the last good rates; with
// none it answers 502. An unknown base is a 400.
package rates

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// CacheTTL is how long fetched rates are reused (docs/product-spec.md §9: 300000 ms).
const CacheTTL = 5 * time.Minute

// DefaultUpstream is the exchange-rate API of docs/product-spec.md §7.
const DefaultUpstream = "https://api.exchangerate-api.com/v4/latest/"

var codePattern = regexp.MustCompile(`^[A-Z]{3}$`)

// Handler serves rates. Its zero value is not usable; use New.
type Handler struct {
	upstream string
	client   *http.Client
	now      func() time.Time
	mu       sync.Mutex
	cache    map[string]entry
}

type entry struct {
	at    time.Time
	rates map[string]float64
}

// New builds a handler fetching from upstream (base URL ending in /); now
// may be nil for the wall clock.
func New(upstream string, client *http.Client, now func() time.Time) *Handler {
	if upstream == "" {
		upstream = DefaultUpstream
	}
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if now == nil {
		now = time.Now
	}
	return &Handler{upstream: upstream, client: client, now: now, cache: map[string]entry{}}
}

type answer struct {
	Base  string             `json:"base"`
	Rates map[string]float64 `json:"rates"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP answers GET requests whose path ends in /v4/latest/{base}
// (Firebase Hosting passes the full path, e.g. /api/rates/v4/latest/USD).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use GET"})
		return
	}
	_, base, ok := strings.Cut(r.URL.Path, "/v4/latest/")
	if !ok || !codePattern.MatchString(base) || !known[base] {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("unknown currency %q", base)})
		return
	}
	rates, fresh, err := h.rates(r.Context(), base)
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": "exchange rates are unavailable: " + err.Error()})
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	if !fresh {
		w.Header().Set("Warning", `110 - "Response is Stale"`)
	}
	writeJSON(w, http.StatusOK, answer{Base: base, Rates: rates})
}

// rates returns cached rates younger than CacheTTL, else fetches; a failed
// fetch falls back to the last good rates (fresh is then false).
func (h *Handler) rates(ctx context.Context, base string) (map[string]float64, bool, error) {
	h.mu.Lock()
	cached, ok := h.cache[base]
	h.mu.Unlock()
	if ok && h.now().Sub(cached.at) < CacheTTL {
		return cached.rates, true, nil
	}
	rates, err := h.fetch(ctx, base)
	if err != nil {
		if ok {
			return cached.rates, false, nil
		}
		return nil, false, err
	}
	h.mu.Lock()
	h.cache[base] = entry{at: h.now(), rates: rates}
	h.mu.Unlock()
	return rates, true, nil
}

// Rate is what one unit of base buys of target, from the same cached rates
// the HTTP route serves; an error when no rate is known (never a made-up 1).
func (h *Handler) Rate(ctx context.Context, base, target string) (float64, error) {
	if base == target {
		return 1, nil
	}
	rates, _, err := h.rates(ctx, base)
	if err != nil {
		return 0, err
	}
	r, ok := rates[target]
	if !ok || r <= 0 {
		return 0, fmt.Errorf("no %s rate for %s", target, base)
	}
	return r, nil
}

func (h *Handler) fetch(ctx context.Context, base string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.upstream+base, nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("upstream answered %d", resp.StatusCode)
	}
	var a answer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a); err != nil || len(a.Rates) == 0 {
		return nil, fmt.Errorf("upstream sent no rates")
	}
	return a.Rates, nil
}

// known lists the ISO 4217 codes the handler accepts.
var known = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN
		BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD
		HNL HRK HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA
		MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
		SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND
		VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL`) {
		m[c] = true
	}
	return m
}()

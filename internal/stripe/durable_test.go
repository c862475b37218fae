package stripe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
	local "github.com/loupe-dev/loupe/internal/stripe"
	"github.com/stripe/stripe-go/v85"
)

// The tests here run a real `loupe serve` with a data dir and talk to its
// Stripe stand-in through stripe-go, as the payments function does.

// withFunctions writes a firebase.json whose functions live in source:
// loupe serves its Stripe stand-in only to a functions process.
func withFunctions(t *testing.T, source string) string {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"functions": map[string]string{"source": source}})
	path := filepath.Join(t.TempDir(), "firebase.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// noFunctions is a Node.js functions folder that defines no function: the
// Stripe stand-in runs, no payments function does.
func noFunctions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"none","main":"index.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// client is a stripe-go client of inst's stand-in, retrying as stripe-go
// does unless retries is 0.
func client(inst *loupetest.Instance, retries int64) *stripe.Client {
	cfg := &stripe.BackendConfig{URL: stripe.String(inst.URL), MaxNetworkRetries: stripe.Int64(retries),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}}
	return stripe.NewClient(local.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))
}

// sessionParams is a one-item payment as the payments function asks for it.
func sessionParams(base, key, requestID string, amount int64) *stripe.CheckoutSessionCreateParams {
	p := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		SuccessURL:        stripe.String(base + "/requests/" + requestID + "?checkout=done"),
		CancelURL:         stripe.String(base + "/requests/" + requestID),
		ClientReferenceID: stripe.String(requestID),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency: stripe.String("eur"), UnitAmount: stripe.Int64(amount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Feedback on " + requestID)},
			},
		}},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Description: stripe.String("Feedback")},
	}
	p.AddMetadata("requestId", requestID)
	p.PaymentIntentData.AddMetadata("requestId", requestID)
	p.SetIdempotencyKey(key)
	return p
}

var noRedirect = &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// pay presses Pay on a session's hosted page and returns the status, the
// redirect and the page.
func pay(ctx context.Context, hosted string) (int, string, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hosted, strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirect.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(page), err
}

// page is a GET of target: the status and the page.
func page(t *testing.T, target string) (int, string) {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// intent reads a payment intent with its charge expanded.
func intent(ctx context.Context, c *stripe.Client, id string) (*stripe.PaymentIntent, error) {
	params := &stripe.PaymentIntentRetrieveParams{}
	params.AddExpand("latest_charge")
	return c.V1PaymentIntents.Retrieve(ctx, id, params)
}

// TestDurable_CheckoutSurvivesRestart completes a Checkout (the functions
// take its webhooks), stops loupe and starts it again on the same data dir
// and port: the receipt link the app stored still opens, the session and
// the payment intent with its charge read back the same, an idempotent
// retry of the pre-restart create gets the stored answer (the same
// session, marked replayed), and the payment refunds, once. Then an export
// of the loupe layout, imported into an in-memory loupe, serves the same,
// and that loupe's --export-on-exit carries it on.
func TestDurable_CheckoutSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir, port := t.TempDir(), loupetest.FreePorts(t, 1)[0]
	opts := loupetest.Options{DataDir: dir, Config: withFunctions(t, loupetest.RepoFile("functions")),
		Args: []string{"--port", strconv.Itoa(port)}}
	inst := loupetest.Start(t, opts)
	loupetest.WaitForFunctions(t, inst)
	c := client(inst, 2)
	created, err := c.V1CheckoutSessions.Create(ctx, sessionParams(inst.URL, "checkout-req-1", "req-1", 3897))
	if err != nil {
		t.Fatal(err)
	}
	status, location, body, err := pay(ctx, created.URL)
	if err != nil || status != http.StatusSeeOther || location != inst.URL+"/requests/req-1?checkout=done" {
		t.Fatalf("paying = %d → %q (%v)\n%s", status, location, err, body)
	}
	paid, err := c.V1CheckoutSessions.Retrieve(ctx, created.ID, nil)
	if err != nil || paid.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid || paid.PaymentIntent == nil {
		t.Fatalf("the paid session = %s %s (%v)", paid.ID, paid.PaymentStatus, err)
	}
	before, err := intent(ctx, c, paid.PaymentIntent.ID)
	if err != nil || before.LatestCharge == nil || !strings.HasPrefix(before.LatestCharge.ReceiptURL, inst.URL+"/emulator/stripe/receipts/ch_") {
		t.Fatalf("the payment intent = %s (%v)", before.ID, err)
	}
	receipt := before.LatestCharge.ReceiptURL
	inst.Stop(t)

	inst = loupetest.Start(t, opts)
	if code, p := page(t, receipt); code != http.StatusOK || !strings.Contains(p, "EUR 38.97") || !strings.Contains(p, before.LatestCharge.ID) {
		t.Errorf("the receipt after the restart = %d\n%s", code, p)
	}
	after, err := intent(ctx, c, before.ID)
	if err != nil || after.Status != stripe.PaymentIntentStatusSucceeded || after.Amount != 3897 || after.Metadata["requestId"] != "req-1" ||
		after.LatestCharge == nil || after.LatestCharge.ID != before.LatestCharge.ID || after.LatestCharge.ReceiptURL != receipt {
		t.Errorf("the payment intent after the restart = %s %s %d (%v), want %s with charge %s", after.ID, after.Status, after.Amount, err, before.ID, before.LatestCharge.ID)
	}
	if s, err := c.V1CheckoutSessions.Retrieve(ctx, created.ID, nil); err != nil || s.Status != stripe.CheckoutSessionStatusComplete ||
		s.PaymentIntent == nil || s.PaymentIntent.ID != before.ID {
		t.Errorf("the session after the restart = %s %s (%v), want %s complete", s.ID, s.Status, err, created.ID)
	}
	retried, err := c.V1CheckoutSessions.Create(ctx, sessionParams(inst.URL, "checkout-req-1", "req-1", 3897))
	if err != nil || retried.ID != created.ID || retried.Status != created.Status || retried.LastResponse.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retried create = %v (%v, replayed %q), want the stored answer: session %s, %s", retried.ID, err,
			retried.LastResponse.Header.Get("Idempotent-Replayed"), created.ID, created.Status)
	}

	var se *stripe.Error
	if _, err := c.V1CheckoutSessions.Create(ctx, sessionParams(inst.URL, "checkout-req-1", "req-1", 4000)); !errors.As(err, &se) ||
		se.Type != stripe.ErrorTypeIdempotency || se.HTTPStatusCode != http.StatusBadRequest {
		t.Errorf("reusing the key with another amount = %v, want a 400 idempotency_error", err)
	}

	refund := func(key string) (*stripe.Refund, error) {
		params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(before.ID), Reason: stripe.String(string(stripe.RefundReasonRequestedByCustomer))}
		params.SetIdempotencyKey(key)
		return c.V1Refunds.Create(ctx, params)
	}
	re, err := refund("refund-req-1")
	if err != nil || re.Status != stripe.RefundStatusSucceeded || re.Amount != 3897 || re.Charge == nil || re.Charge.ID != before.LatestCharge.ID {
		t.Fatalf("refunding the pre-restart payment = %s %s %d (%v)", re.ID, re.Status, re.Amount, err)
	}
	if again, err := refund("refund-req-1"); err != nil || again.ID != re.ID {
		t.Errorf("the retried refund = %s (%v), want refund %s again", again.ID, err, re.ID)
	}
	if _, err := refund("refund-req-1-twice"); !errors.As(err, &se) || se.Code != stripe.ErrorCodeChargeAlreadyRefunded {
		t.Errorf("a second refund = %v, want charge_already_refunded", err)
	}
	if code, p := page(t, receipt); code != http.StatusOK || !strings.Contains(p, "Refunded") {
		t.Errorf("the receipt after the refund = %d\n%s", code, p)
	}

	export := filepath.Join(t.TempDir(), "export")
	if code, err := loupetest.PostJSON(ctx, inst.URL+"/emulator/v1/export", "", map[string]string{"path": export}, nil); err != nil || code != http.StatusOK {
		t.Fatalf("export = %d, %v", code, err)
	}
	inst.Stop(t)
	onExit := filepath.Join(t.TempDir(), "on-exit")
	imported := loupetest.Start(t, loupetest.Options{InMemory: true, Config: opts.Config, Args: []string{"--import", export, "--export-on-exit", onExit}})
	moved := strings.Replace(receipt, inst.URL, imported.URL, 1)
	if code, p := page(t, moved); code != http.StatusOK || !strings.Contains(p, "Refunded") {
		t.Errorf("the receipt in a loupe that imported the export = %d\n%s", code, p)
	}
	if ch, err := intent(ctx, client(imported, 2), before.ID); err != nil || ch.LatestCharge == nil || !ch.LatestCharge.Refunded {
		t.Errorf("the payment intent in a loupe that imported the export = %s (%v), want it refunded", ch.ID, err)
	}
	imported.Stop(t)
	if data, err := os.ReadFile(filepath.Join(onExit, "stripe_export", "objects.jsonl")); err != nil || !strings.Contains(string(data), re.ID) {
		t.Errorf("--export-on-exit wrote no Stripe part with refund %s: %v\n%s", re.ID, err, data)
	}
}

// appURL is the app the crash test's sessions return to: the same on every
// run, so that a retry after a restart repeats the first request's
// parameters.
const appURL = "http://localhost:5173"

// acknowledged is what the stand-in answered with success, by idempotency
// key of the session's create.
type acknowledged struct {
	session, intent, refund string
	amount                  int64
	paid                    bool
}

// TestDurable_KillLosesNothingAcknowledged kills loupe with SIGKILL at
// random moments while clients create sessions, pay and refund them, on
// one data dir, and checks after every restart that each acknowledged
// change is there and each acknowledged create and refund replays its
// answer.
func TestDurable_KillLosesNothingAcknowledged(t *testing.T) {
	dir := t.TempDir()
	// The stand-in runs, no payments function does (a payment then says it
	// went through but was not confirmed).
	cfg := withFunctions(t, noFunctions(t))
	var mu sync.Mutex
	acks := map[string]*acknowledged{}
	record := func(key string, f func(*acknowledged)) {
		mu.Lock()
		defer mu.Unlock()
		if acks[key] == nil {
			acks[key] = &acknowledged{}
		}
		f(acks[key])
	}
	worker := func(ctx context.Context, inst *loupetest.Instance, round, w int) {
		c := client(inst, 0)
		for i := 0; ctx.Err() == nil; i++ {
			key := fmt.Sprintf("r%d-w%d-%d", round, w, i)
			amount := 100 + int64(i)
			s, err := c.V1CheckoutSessions.Create(ctx, sessionParams(appURL, key, key, amount))
			if err != nil {
				continue
			}
			record(key, func(a *acknowledged) { a.session, a.amount = s.ID, amount })
			status, _, body, err := pay(ctx, s.URL)
			if err != nil || (status != http.StatusSeeOther && !strings.Contains(body, "Your test payment went through")) {
				continue
			}
			record(key, func(a *acknowledged) { a.paid = true })
			if i%2 == 1 {
				continue // every other payment stays unrefunded
			}
			paid, err := c.V1CheckoutSessions.Retrieve(ctx, s.ID, nil)
			if err != nil {
				continue
			}
			params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(paid.PaymentIntent.ID)}
			params.SetIdempotencyKey("refund-" + key)
			if re, err := c.V1Refunds.Create(ctx, params); err == nil {
				record(key, func(a *acknowledged) { a.intent, a.refund = paid.PaymentIntent.ID, re.ID })
			}
		}
	}
	verify := func(inst *loupetest.Instance) {
		ctx := context.Background()
		c := client(inst, 2)
		for key, a := range acks {
			again, err := c.V1CheckoutSessions.Create(ctx, sessionParams(appURL, key, key, a.amount))
			if err != nil || again.ID != a.session {
				t.Errorf("%s: the create answers %s (%v), want the acknowledged session %s", key, again.ID, err, a.session)
				continue
			}
			s, err := c.V1CheckoutSessions.Retrieve(ctx, a.session, nil)
			if err != nil {
				t.Errorf("%s: acknowledged session %s: %v", key, a.session, err)
				continue
			}
			if a.paid && (s.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid || s.PaymentIntent == nil) {
				t.Errorf("%s: acknowledged payment of %s is gone: %s", key, a.session, s.PaymentStatus)
				continue
			}
			if a.refund == "" {
				continue
			}
			pi, err := intent(ctx, c, a.intent)
			if err != nil || pi.LatestCharge == nil || !pi.LatestCharge.Refunded {
				t.Errorf("%s: acknowledged refund %s of %s is gone (%v)", key, a.refund, a.intent, err)
				continue
			}
			params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(a.intent)}
			params.SetIdempotencyKey("refund-" + key)
			if re, err := c.V1Refunds.Create(ctx, params); err != nil || re.ID != a.refund {
				t.Errorf("%s: the refund answers %s (%v), want %s", key, re.ID, err, a.refund)
			}
		}
	}
	for round := range 3 {
		inst := loupetest.Start(t, loupetest.Options{Process: true, DataDir: dir, Config: cfg})
		verify(inst)
		if t.Failed() {
			t.Fatalf("round %d: the data dir lost acknowledged changes", round)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{}, 3)
		for w := range 3 {
			go func() { worker(ctx, inst, round, w); done <- struct{}{} }()
		}
		time.Sleep(time.Duration(300+time.Now().UnixNano()%1200) * time.Millisecond)
		inst.Kill()
		cancel()
		for range 3 {
			<-done
		}
	}
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir, Config: cfg})
	verify(inst)
	paid, refunded := 0, 0
	for _, a := range acks {
		if a.paid {
			paid++
		}
		if a.refund != "" {
			refunded++
		}
	}
	t.Logf("%d sessions, %d paid, %d refunded acknowledged across 3 kills", len(acks), paid, refunded)
	if paid == 0 || refunded == 0 {
		t.Error("the load acknowledged no payment or no refund: the test checked nothing")
	}
}

// TestDurable_DamagedFiles: a torn last record of stripe.log (a crash
// mid-write) is cut off and loupe starts with everything before it; a
// damaged record before the last, or a damaged line in an import, stops
// loupe at start with exit status 1 and a message naming the file.
func TestDurable_DamagedFiles(t *testing.T) {
	seed := t.TempDir()
	cfg := withFunctions(t, noFunctions(t))
	inst := loupetest.Start(t, loupetest.Options{DataDir: seed, Config: cfg})
	c := client(inst, 2)
	var ids []string
	for _, email := range []string{"first@example.com", "second@example.com"} {
		a, err := c.V1Accounts.Create(context.Background(), &stripe.AccountCreateParams{Type: stripe.String("express"), Email: stripe.String(email)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	inst.Stop(t)
	log := filepath.Join("stripe", "stripe.log")

	serve := func(t *testing.T, dir string, args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, loupetest.Binary(t), append([]string{"serve", "--port", "0", "--data-dir", dir, "--config", cfg}, args...)...)
		out, _ := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("loupe serve kept running:\n%s", out)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	copySeed := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(seed)); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	t.Run("torn last record", func(t *testing.T) {
		dir := copySeed(t)
		f, err := os.OpenFile(filepath.Join(dir, log), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString(`0badc0de [{"account":{"id":"acct_tor`)
		f.Close()
		inst := loupetest.Start(t, loupetest.Options{DataDir: dir, Config: cfg})
		for _, id := range ids {
			if a, err := client(inst, 2).V1Accounts.GetByID(context.Background(), id, nil); err != nil || a.ID != id {
				t.Errorf("account %s after the torn tail: %v", id, err)
			}
		}
	})
	t.Run("flipped byte in the first record", func(t *testing.T) {
		dir := copySeed(t)
		path := filepath.Join(dir, log)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[20] ^= 0x01
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := serve(t, dir)
		if code != 1 || !strings.Contains(out, path+" is corrupt at byte 0") {
			t.Errorf("exit %d, output:\n%s\nwant exit 1 and %s is corrupt at byte 0", code, out, path)
		}
	})
	t.Run("damaged line in an import", func(t *testing.T) {
		export := t.TempDir()
		if err := os.MkdirAll(filepath.Join(export, "stripe_export"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(export, "firebase-export-metadata.json"), []byte(`{"version":"loupe"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(export, "stripe_export", "objects.jsonl")
		if err := os.WriteFile(file, []byte("{\"account\":{\"id\":\"acct_1\"}}\n{\"charge\":{\"id\":\"ch_1\",\"amount\":\"12\"}}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, code := serve(t, copySeed(t), "--import", export)
		if code != 1 || !strings.Contains(out, file+" line 2") {
			t.Errorf("exit %d, output:\n%s\nwant exit 1 naming %s line 2", code, out, file)
		}
	})
}

// TestDurable_InMemoryKeepsNothing: with --in-memory the stand-in writes
// nothing to the data dir.
func TestDurable_InMemoryKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	inst := loupetest.Start(t, loupetest.Options{DataDir: dir, InMemory: true, Config: withFunctions(t, noFunctions(t))})
	if _, err := client(inst, 2).V1Accounts.Create(context.Background(), &stripe.AccountCreateParams{Type: stripe.String("express")}); err != nil {
		t.Fatal(err)
	}
	inst.Stop(t)
	if _, err := os.Stat(filepath.Join(dir, "stripe")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--in-memory wrote %s: %v", filepath.Join(dir, "stripe"), err)
	}
}

// Command functions serves Loupe's functions with functions-framework-go, as
// one Cloud Run service in production and as a process that `loupe serve`
// starts locally. Routes:
//
//	GET  /v4/latest/{base}, /api/rates/v4/latest/{base}   exchange rates
//	POST /events/comment-counters   CloudEvent: feedbackRequests/{r}/comments/{c} written
//	POST /events/request-fanout     CloudEvent: feedbackRequests/{r} written
//	POST /events/comment-fanout     CloudEvent: feedbackRequests/{r}/comments/{c} created
//	POST /events/comment-redact     CloudEvent: feedbackRequests/{r}/comments/{c} updated
//	POST /events/profile-public     CloudEvent: users/{u} written
//	POST /events/review-gather      CloudEvent: reviews/{r} written
//	POST /payments/connect, /api/payments/connect   Stripe Connect onboarding link (Firebase ID token)
//	POST /payments/checkout, /api/payments/checkout   Stripe Checkout for a request (Firebase ID token)
//	POST /payments/earnings, /api/payments/earnings   a mentor's transfers (Firebase ID token)
//	POST /payments/webhook, /api/payments/webhook   Stripe's signed webhook
//	POST /events/request-payments   CloudEvent: feedbackRequests/{r} written (refunds)
//	POST /tasks/turnaround          due-date reminders (Cloud Scheduler; also every TURNAROUND_SWEEP_INTERVAL)
//
// Environment: PORT (default 8080), HOST (default all interfaces, as Cloud
// Run needs), GOOGLE_CLOUD_PROJECT, STORAGE_BUCKET (default
// {project}.appspot.com), RATES_UPSTREAM_URL, STRIPE_SECRET_KEY,
// STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE (Stripe's API when empty),
// TURNAROUND_SWEEP_INTERVAL (default 1m; 0 turns the in-process sweep off),
// and locally the usual *_EMULATOR_HOST variables and FCM_ENDPOINT.
package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/messaging"
	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"
	cloudevent "github.com/cloudevents/sdk-go/v2/event"
	"github.com/loupe-dev/loupe/functions/counters"
	"github.com/loupe-dev/loupe/functions/fanout"
	"github.com/loupe-dev/loupe/functions/payments"
	"github.com/loupe-dev/loupe/functions/profiles"
	"github.com/loupe-dev/loupe/functions/rates"
	"google.golang.org/api/option"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// pushClient is the FCM client: production's, or the stand-in at
// FCM_ENDPOINT (loupe sets it). It has an app of its own because an endpoint
// option applies to every client of an app.
func pushClient(ctx context.Context) (*messaging.Client, error) {
	var opts []option.ClientOption
	if e := os.Getenv("FCM_ENDPOINT"); e != "" {
		opts = append(opts, option.WithEndpoint(e), option.WithoutAuthentication())
	}
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: os.Getenv("GOOGLE_CLOUD_PROJECT")}, opts...)
	if err != nil {
		return nil, err
	}
	return app.Messaging(ctx)
}

// logged reports a function's failures on stderr (Cloud Logging in
// production), labelled with the run's execution id.
func logged(path string, fn func(context.Context, cloudevent.Event) error) func(context.Context, cloudevent.Event) error {
	return func(ctx context.Context, e cloudevent.Event) error {
		err := fn(ctx, e)
		if err != nil {
			// A whole line: the writer has written it, so it needs no Close
			// (which, outside a request, would close os.Stderr).
			fmt.Fprintf(funcframework.LogWriter(ctx), "%s: event %s (%s): %v\n", path, e.ID(), e.Subject(), err)
		}
		return err
	}
}

func run() error {
	ctx := context.Background()
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: os.Getenv("GOOGLE_CLOUD_PROJECT")})
	if err != nil {
		return err
	}
	db, err := app.Firestore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	push, err := pushClient(ctx)
	if err != nil {
		return err
	}
	r := rates.New(os.Getenv("RATES_UPSTREAM_URL"), nil, nil)
	fan := &fanout.Handler{DB: db, Push: push}
	prof := &profiles.Handler{DB: db}
	for _, path := range []string{"/v4/latest/", "/api/rates/v4/latest/"} {
		serveHTTP(path, r.ServeHTTP)
	}
	authClient, err := app.Auth(ctx)
	if err != nil {
		return err
	}
	videos, err := storage.NewClient(ctx)
	if err != nil {
		return err
	}
	defer videos.Close()
	bucket := cmp.Or(os.Getenv("STORAGE_BUCKET"), os.Getenv("GOOGLE_CLOUD_PROJECT")+".appspot.com")
	pay := &payments.Handler{DB: db, Auth: authClient, Rates: r,
		Stripe:        payments.NewStripeClient(os.Getenv("STRIPE_SECRET_KEY"), os.Getenv("STRIPE_API_BASE")),
		WebhookSecret: os.Getenv("STRIPE_WEBHOOK_SECRET"), Videos: payments.Bucket{BucketHandle: videos.Bucket(bucket)}}
	registerPayments(pay)
	serveHTTP("/tasks/turnaround", fan.SweepEndpoint)
	every, err := time.ParseDuration(cmp.Or(os.Getenv("TURNAROUND_SWEEP_INTERVAL"), "1m"))
	if err != nil {
		return fmt.Errorf("TURNAROUND_SWEEP_INTERVAL: %w", err)
	}
	if every > 0 {
		go fan.SweepEvery(ctx, every, log.Printf)
	}
	for path, fn := range map[string]func(context.Context, cloudevent.Event) error{
		"/events/comment-counters": (&counters.Handler{DB: db}).Handle,
		"/events/request-fanout":   fan.HandleRequest,
		"/events/comment-fanout":   fan.HandleComment,
		"/events/comment-redact":   fan.HandleCommentUpdate,
		"/events/profile-public":   prof.HandleProfile,
		"/events/review-gather":    prof.HandleReview,
		"/events/request-payments": pay.HandleRequest,
	} {
		functions.CloudEvent(strings.TrimPrefix(path, "/"), logged(path, fn))
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	return funcframework.StartHostPort(os.Getenv("HOST"), port)
}

// serveHTTP registers fn at path. The function's name is its path without
// the leading slash, so the framework serves it at path and names it when it
// starts.
func serveHTTP(path string, fn http.HandlerFunc) {
	functions.HTTP(strings.TrimPrefix(path, "/"), fn)
}

// registerPayments serves the payment endpoints under /payments and, for the
// hosting rewrite, /api/payments; without Stripe keys they answer 503.
func registerPayments(h *payments.Handler) {
	routes := map[string]http.HandlerFunc{"connect": h.Connect, "checkout": h.Checkout, "earnings": h.Earnings, "webhook": h.Webhook}
	for name, fn := range routes {
		if os.Getenv("STRIPE_SECRET_KEY") == "" || h.WebhookSecret == "" {
			fn = func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "payments are not configured: set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET", http.StatusServiceUnavailable)
			}
		}
		for _, prefix := range []string{"/payments/", "/api/payments/"} {
			serveHTTP(prefix+name, fn)
		}
	}
}

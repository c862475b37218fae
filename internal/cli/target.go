package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"cloud.google.com/go/firestore"
	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"
	"firebase.google.com/go/v4/messaging"
	"github.com/spf13/cobra"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
)

// TargetOptions choose which backend an admin command talks to: a running loupe
// (--emulator, or the usual *_EMULATOR_HOST variables) or production, through
// application default credentials.
type TargetOptions struct {
	Emulator string
	Project  string
	JSON     bool
}

// bindTarget adds the targeting flags shared by every admin command.
func bindTarget(cmd *cobra.Command, t *TargetOptions) {
	f := cmd.PersistentFlags()
	f.StringVar(&t.Emulator, "emulator", "", "host:port of a running loupe (default $FIRESTORE_EMULATOR_HOST)")
	f.StringVar(&t.Project, "project", "", "project id (default $GOOGLE_CLOUD_PROJECT, or demo-loupe with an emulator)")
	f.BoolVar(&t.JSON, "json", false, "print JSON for scripts instead of a table")
}

// admin holds the Admin SDK clients of one command run.
type admin struct {
	Project   string
	Emulator  string // host:port, "" in production
	Auth      *auth.Client
	Firestore *firestore.Client
}

// messaging returns an FCM client: loupe's stand-in with an emulator (an
// app of its own, since an endpoint option applies to every client of an
// app), production's otherwise.
func (a *admin) messaging(ctx context.Context) (*messaging.Client, error) {
	var opts []option.ClientOption
	if a.Emulator != "" {
		opts = append(opts, option.WithEndpoint("http://"+a.Emulator+"/v1"), option.WithoutAuthentication())
	}
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: a.Project}, opts...)
	if err != nil {
		return nil, err
	}
	return app.Messaging(ctx)
}

// Close releases the clients.
func (a *admin) Close() {
	if a.Firestore != nil {
		_ = a.Firestore.Close()
	}
}

// emulatorHost resolves --emulator or the emulator variables, in that order.
func (t *TargetOptions) emulatorHost() string {
	for _, v := range []string{t.Emulator, os.Getenv("FIRESTORE_EMULATOR_HOST"), os.Getenv("FIREBASE_AUTH_EMULATOR_HOST")} {
		if v != "" {
			return v
		}
	}
	return ""
}

// connect builds the Admin SDK clients for the target. With an emulator it
// points every SDK at it (the SDKs read the *_EMULATOR_HOST variables) and
// checks it answers; without one it needs application default credentials.
func (t *TargetOptions) connect(ctx context.Context) (*admin, error) {
	a := &admin{Project: t.Project, Emulator: t.emulatorHost()}
	if a.Emulator != "" {
		if a.Project == "" {
			a.Project = "demo-loupe"
		}
		for _, v := range []string{"FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST", "STORAGE_EMULATOR_HOST"} {
			if err := os.Setenv(v, a.Emulator); err != nil {
				return nil, err
			}
		}
		if err := ping(ctx, a.Emulator); err != nil {
			return nil, err
		}
	} else {
		if a.Project == "" {
			a.Project = firstNonEmpty(os.Getenv("GOOGLE_CLOUD_PROJECT"), os.Getenv("GCLOUD_PROJECT"))
		}
		if _, err := google.FindDefaultCredentials(ctx); err != nil {
			return nil, errors.New("no credentials: pass --emulator HOST:PORT for a local loupe, or run `gcloud auth application-default login` for production")
		}
		if a.Project == "" {
			return nil, &UsageError{errors.New("no project: pass --project or set GOOGLE_CLOUD_PROJECT")}
		}
	}
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: a.Project})
	if err != nil {
		return nil, fmt.Errorf("firebase app: %w", err)
	}
	if a.Auth, err = app.Auth(ctx); err != nil {
		return nil, fmt.Errorf("auth client: %w", err)
	}
	if a.Firestore, err = app.Firestore(ctx); err != nil {
		return nil, fmt.Errorf("firestore client: %w", err)
	}
	return a, nil
}

// ping checks that a loupe answers at host.
func ping(ctx context.Context, host string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/healthz", nil)
	if err != nil {
		return &UsageError{fmt.Errorf("bad emulator address %q", host)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var netErr net.Error
		if errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("cannot reach the emulator at %s", host)
		}
		return fmt.Errorf("cannot reach the emulator at %s", host)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the emulator at %s is not ready (status %d)", host, resp.StatusCode)
	}
	return nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

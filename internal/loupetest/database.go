package loupetest

import (
	"context"
	"strings"
	"testing"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/db"
)

// Database is the Go Admin SDK's Realtime Database client for namespace ns
// of inst, connected as the SDK connects to an emulator:
// FIREBASE_DATABASE_EMULATOR_HOST=localhost:PORT?ns=NS (set for the test).
func Database(t testing.TB, inst *Instance, ns string) *db.Client {
	t.Helper()
	port := inst.Host[strings.LastIndex(inst.Host, ":")+1:]
	t.Setenv("FIREBASE_DATABASE_EMULATOR_HOST", "localhost:"+port+"?ns="+ns)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: "demo-" + ns, DatabaseURL: "https://" + ns + ".firebaseio.com"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := app.Database(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

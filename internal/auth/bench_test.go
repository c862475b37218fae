package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loupe-dev/loupe/internal/loupetest"
)

// The benchmarks compare loupe with firebase-tools' Auth emulator when
// FIREBASE_TOOLS names its firebase command (or one is on PATH), e.g.
//
//	npm i --prefix /tmp/ft firebase-tools
//	FIREBASE_TOOLS=/tmp/ft/node_modules/.bin/firebase go test ./internal/auth -run '^$' -bench .

// firebaseTools returns the firebase command, or skips the benchmark.
func firebaseTools(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("FIREBASE_TOOLS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("firebase"); err == nil {
		return p
	}
	b.Skip("firebase-tools is not installed: set FIREBASE_TOOLS to its firebase command (npm i --prefix /tmp/ft firebase-tools; FIREBASE_TOOLS=/tmp/ft/node_modules/.bin/firebase) to compare with it")
	return ""
}

func freePort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startFirebaseTools runs `firebase emulators:start --only auth` and
// returns its base URL once it answers, and a function that stops it.
func startFirebaseTools(b *testing.B, firebase string) (string, func()) {
	b.Helper()
	dir := b.TempDir()
	port := freePort(b)
	config := fmt.Sprintf(`{"emulators":{"auth":{"host":"127.0.0.1","port":%d},"hub":{"port":%d},"logging":{"port":%d},"ui":{"enabled":false}}}`,
		port, freePort(b), freePort(b))
	if err := os.WriteFile(filepath.Join(dir, "firebase.json"), []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(firebase, "emulators:start", "--only", "auth", "--project", project)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop
			}
		}
		if ctx.Err() != nil {
			stop()
			b.Fatalf("firebase-tools' Auth emulator did not start:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchSignUps signs up b.N new e-mail users at base from 16 concurrent
// clients and reports sign-ups per second and the latency percentiles.
func benchSignUps(b *testing.B, base string) {
	prefix := fmt.Sprintf("b%d-", time.Now().UnixNano())
	var (
		n         atomic.Int64
		mu        sync.Mutex
		latencies []time.Duration
	)
	b.SetParallelism(8) // 8 × GOMAXPROCS clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			start := time.Now()
			if _, _, err := loupetest.SignUp(context.Background(), base, fmt.Sprintf("%s%d@example.com", prefix, n.Add(1)), "secret1"); err != nil {
				b.Error("a sign-up failed")
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	if len(latencies) > 0 {
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signups/s")
}

// BenchmarkSignUp measures e-mail/password sign-ups over HTTP: loupe in
// memory and with its data dir (each sign-up synced before the answer),
// and firebase-tools' Auth emulator (in memory) when installed.
func BenchmarkSignUp(b *testing.B) {
	b.Run("loupe-in-memory", func(b *testing.B) {
		inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: true})
		benchSignUps(b, inst.URL)
	})
	b.Run("loupe-data-dir", func(b *testing.B) {
		inst := loupetest.Start(b, loupetest.Options{Process: true})
		benchSignUps(b, inst.URL)
	})
	b.Run("firebase-tools", func(b *testing.B) {
		base, stop := startFirebaseTools(b, firebaseTools(b))
		defer stop()
		benchSignUps(b, base)
	})
}

// BenchmarkStart measures process start to the first answer: loupe serve
// (to /healthz) and firebase-tools' Auth emulator when installed.
func BenchmarkStart(b *testing.B) {
	b.Run("loupe", func(b *testing.B) {
		for range b.N {
			inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: true})
			b.StopTimer()
			inst.Stop(b)
			b.StartTimer()
		}
	})
	b.Run("firebase-tools", func(b *testing.B) {
		firebase := firebaseTools(b)
		for range b.N {
			_, stop := startFirebaseTools(b, firebase)
			b.StopTimer()
			stop()
			b.StartTimer()
		}
	})
}

// BenchmarkConsoleUsersHTTP reads the console's Auth list from a real
// `loupe serve` holding 100,000 accounts, over HTTP as the console does
// (GET /emulator/v1/projects/{p}/users, JSON decoded): the first page of
// 100 and a search by e-mail. Target: under 300 ms each.
func BenchmarkConsoleUsersHTTP(b *testing.B) {
	inst := loupetest.Start(b, loupetest.Options{Process: true, InMemory: true})
	post := func(path, body string) {
		req, _ := http.NewRequest(http.MethodPost, inst.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer owner")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	for from := 0; from < 100_000; from += 1000 {
		var users []string
		for i := from; i < from+1000; i++ {
			users = append(users, fmt.Sprintf(`{"localId":"u%06d","email":"user%d@example.com","displayName":"Person %d"}`, i, i, i))
		}
		post("/identitytoolkit.googleapis.com/v1/projects/"+project+"/accounts:batchCreate", `{"users":[`+strings.Join(users, ",")+`]}`)
	}
	get := func(b *testing.B, query string, want int) {
		for range b.N {
			req, _ := http.NewRequest(http.MethodGet, inst.URL+"/emulator/v1/projects/"+project+"/users?"+query, nil)
			req.Header.Set("Authorization", "Bearer owner")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var page struct {
				Users   []map[string]any `json:"users"`
				Matched int              `json:"matched"`
			}
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil || len(page.Users) != want {
				b.Fatalf("%s: %d users, %v", query, len(page.Users), err)
			}
		}
	}
	b.Run("first-page", func(b *testing.B) { get(b, "pageSize=100", 100) })
	b.Run("search-by-email", func(b *testing.B) { get(b, "q=user99999%40example.com", 1) })
	b.Run("search-100-of-11111", func(b *testing.B) { get(b, "q=user1", 100) })
}

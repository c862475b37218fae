package functions

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loupe-dev/loupe/internal/triggers"
)

// status is what GET /emulator/v1/functions tells of the functions process.
type status struct {
	// State is building (no build has finished yet), running, exited (the
	// process ended by itself and is restarted at RestartAt) or failed (no
	// build has succeeded; a change to the source is built again).
	State string `json:"state"`
	// Detail says what went wrong last: the compiler's output of a failed
	// build (also one that left the previous build running) or how the
	// process exited. Empty once a build or restart brings it up again.
	Detail string `json:"detail"`
	URL    string `json:"url,omitempty"`
	// Exit is the latest time the process ended by itself (it stays after
	// the restart); Restarts counts those restarts.
	Exit      *exitInfo  `json:"exit,omitempty"`
	Restarts  int        `json:"restarts"`
	RestartAt *time.Time `json:"restartAt,omitempty"`
	// Build is the latest build: building, ok or failed, and when it ended
	// (or started, while building).
	Build buildInfo `json:"build"`
}

type exitInfo struct {
	At time.Time `json:"at"`
	// Code is the exit code of a process that exited, Signal the name of the
	// signal (e.g. SIGKILL) that ended one that did not.
	Code   *int   `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
}

type buildInfo struct {
	State string    `json:"state"`
	At    time.Time `json:"at"`
}

// Restart backoff: a process that exits is started again after
// firstRestart, doubled after each exit up to maxRestart; one that ran for
// stableAfter starts the count over.
const (
	firstRestart = time.Second
	maxRestart   = 30 * time.Second
	stableAfter  = 30 * time.Second
)

// retireTimeout bounds how long a replaced process may finish the
// deliveries and requests it has under way before it is stopped.
const retireTimeout = 60 * time.Second

// stopGrace is how long the functions process (or its build) has to exit
// when asked before it is killed (Cloud Run gives a container 10 s).
const stopGrace = 3 * time.Second

// tailLines is how many of the process's last log lines loupe's log repeats
// when it exits.
const tailLines = 20

// process is one run of a codebase's build: its worker.
type process struct {
	cmd     *exec.Cmd
	base    *url.URL
	started time.Time
	stop    context.CancelFunc // SIGTERM, then a kill after stopGrace
	exited  chan struct{}      // closed once it has exited
	// requests counts the requests under way to it that forward let
	// through (HTTP functions, hosting rewrites, the Stripe stand-in's
	// webhooks).
	requests sync.WaitGroup
	// build is the build it runs.
	build Build
	// announced are the HTTP functions it named in its output (guarded by
	// its codebase's mu).
	announced []Function
}

// run builds the functions and keeps a process of the latest good build
// running until ctx ends, as a supervisor: a process that exits is
// restarted after a backoff, and a change to the source is built and, when
// it builds and starts, replaces the running process.
func (c *codebase) run(ctx context.Context) {
	changed := c.watchSource(ctx)
	var (
		b        Build
		p        *process
		delay    time.Duration // the latest restart backoff
		retiring sync.WaitGroup
	)
	defer func() {
		if p != nil {
			p.stop()
			<-p.exited
		}
		closeBuild(b)
		retiring.Wait()
	}()
	for ctx.Err() == nil {
		if b == nil {
			nb, err := c.compile(ctx)
			if err != nil {
				if ctx.Err() == nil {
					c.buildFailed(err, false)
					select {
					case <-ctx.Done():
					case <-changed:
					}
				}
				continue
			}
			b = nb
			c.built()
		}
		if p == nil {
			np, err := c.launch(ctx, b)
			if err != nil {
				if ctx.Err() == nil {
					delay = c.down(np, err, delay)
					c.waitRestart(ctx, changed, delay, &b)
				}
				continue
			}
			p = np
			if n := c.restartCount(); n > 0 {
				c.logger.Info("functions process restarted", "restarts", n, "url", p.base.String())
			}
		}
		select {
		case <-ctx.Done():
		case <-p.exited:
			delay = c.down(p, nil, delay)
			p = nil
			c.waitRestart(ctx, changed, delay, &b)
		case <-changed:
			// The build runs aside, so an exit meanwhile is told at once.
			rebuilt := make(chan Build, 1)
			go func() { rebuilt <- c.rebuild(ctx) }()
			var nb Build
			select {
			case nb = <-rebuilt:
			case <-p.exited:
				delay = c.down(p, nil, delay)
				due := time.Now().Add(delay)
				p = nil
				if nb = <-rebuilt; nb != nil {
					closeBuild(b)
					b = nb
				}
				c.waitRestart(ctx, changed, time.Until(due), &b)
				continue
			}
			if nb == nil {
				continue
			}
			np, err := c.launch(ctx, nb)
			if err != nil {
				closeBuild(nb)
				c.buildFailed(fmt.Errorf("the new build did not start, the previous one still runs: %w", err), true)
				continue
			}
			c.logger.Info("functions rebuilt; the new process takes over", "url", np.base.String())
			old := p
			p, delay = np, 0
			closeBuild(b)
			b = nb
			retiring.Add(1)
			go func() {
				defer retiring.Done()
				c.retire(old)
			}()
		}
	}
}

// waitRestart waits out a restart backoff, or until ctx ends. A source
// change meanwhile is built at once: when it builds, *b becomes the new
// build and the restart comes without waiting further.
func (c *codebase) waitRestart(ctx context.Context, changed <-chan struct{}, delay time.Duration, b *Build) {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		case <-changed:
			if nb := c.rebuild(ctx); nb != nil {
				closeBuild(*b)
				*b = nb
				return
			}
		}
	}
}

// rebuild builds the changed source while an earlier build is in use, and
// records the result: the new build, or nil when it failed.
func (c *codebase) rebuild(ctx context.Context) Build {
	nb, err := c.compile(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.buildFailed(err, true)
		}
		return nil
	}
	c.built()
	return nb
}

// launch starts a worker of build b on a free port and waits until it
// listens; then HTTP requests and trigger deliveries go to it. On error
// p is the process if one started, stopped if it had not exited.
func (c *codebase) launch(ctx context.Context, b Build) (p *process, err error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	pctx, stop := context.WithCancel(ctx)
	cmd, started, err := b.Command(pctx, port)
	if err != nil {
		stop()
		return nil, err
	}
	defer started()
	// The build's variables (a Go worker's HOST, parameter defaults) come
	// before loupe's and the codebase's .env files, which override them.
	cmd.Env = append(append(os.Environ(), cmd.Env...), c.svc.workerEnv(c, port)...)
	np := &process{build: b}
	announce := func(l LogLine) { c.announce(np, l) }
	cmd.Stdout, cmd.Stderr = c.log.writer("stdout", c.name, announce), c.log.writer("stderr", c.name, nil)
	dieWithParent(cmd)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		stop()
		return nil, err
	}
	base, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	p = np
	p.cmd, p.base, p.started, p.stop, p.exited = cmd, base, time.Now(), stop, make(chan struct{})
	go func() {
		_ = cmd.Wait() // how it ended is in cmd.ProcessState
		close(p.exited)
	}()
	if err := waitListening(ctx, base.Host, p.exited); err != nil {
		select {
		case <-p.exited:
			return p, fmt.Errorf("it exited (%s) before it listened", cmd.ProcessState)
		default:
			p.stop()
			<-p.exited
			return p, err
		}
	}
	var ts []triggers.Trigger
	for _, f := range b.Functions() {
		if f.Trigger != nil {
			t := *f.Trigger
			t.Project = c.svc.env.ProjectID // as deployed: the writes of another project do not reach it
			t.Deliver = recordedDeliverer{runs: c.svc.runs, codebase: c.name, function: f.Name, next: b.Deliverer(base, f)}
			ts = append(ts, t)
		}
	}
	c.svc.declareTopics(c, b.Functions())
	if err := c.svc.table.SetTriggers(c.name, ts); err != nil {
		p.stop()
		<-p.exited
		return p, err
	}
	c.mu.Lock()
	c.serving, c.fns = p, b.Functions()
	c.st.State, c.st.Detail, c.st.URL, c.st.RestartAt = "running", "", base.String(), nil
	queued := c.queued
	c.queued = nil
	c.mu.Unlock()
	c.reportInitialized(b)
	c.settle()
	c.svc.table.PublishTo(c.name, queued...)
	return p, nil
}

// down records that the process p exited by itself (or, with err, that
// it did not start: p is then the process that did not listen, if any, and
// has exited), logs it with the process's last lines, fails the deliveries
// to it, and returns the backoff before the restart: the one after last,
// or firstRestart when p had run for stableAfter.
func (c *codebase) down(p *process, err error, last time.Duration) time.Duration {
	now := time.Now()
	var uptime time.Duration
	if p != nil {
		uptime = now.Sub(p.started)
	}
	delay := restartDelay(last, uptime)
	what := "the functions process did not start: " + fmt.Sprint(err)
	var exit *exitInfo
	if err == nil {
		what = "the functions process exited (" + p.cmd.ProcessState.String() + ")"
	}
	if p != nil && (err == nil || strings.HasPrefix(err.Error(), "it exited")) {
		exit = describeExit(p.cmd.ProcessState, now)
	}
	restartAt := now.Add(delay)
	c.svc.table.Unavailable(c.name, fmt.Errorf("%s; loupe restarts it at %s", what, restartAt.UTC().Format(time.TimeOnly)))
	var tail []string
	for _, l := range c.log.last(c.name, tailLines) {
		if l.Stream != "loupe" {
			tail = append(tail, l.Text)
		}
	}
	c.mu.Lock()
	c.serving = nil
	c.st.Restarts++
	c.st.State, c.st.URL, c.st.RestartAt = "exited", "", &restartAt
	c.st.Detail = fmt.Sprintf("%s at %s; restart %d in %s", what, now.UTC().Format(time.TimeOnly), c.st.Restarts, delay)
	if exit != nil {
		c.st.Exit = exit
	}
	detail, restarts := c.st.Detail, c.st.Restarts
	c.mu.Unlock()
	c.settle()
	c.log.note(c.name, "ERROR", detail)
	c.logger.Error(what+"; loupe restarts it", "restartIn", delay, "restarts", restarts, "lastLines", strings.Join(tail, "\n"))
	return delay
}

// restartDelay is the backoff before restarting a process that ran for
// uptime, when the backoff before its start was last (0 for none).
func restartDelay(last, uptime time.Duration) time.Duration {
	if uptime >= stableAfter {
		return firstRestart
	}
	return min(max(2*last, firstRestart), maxRestart)
}

// describeExit turns how a process ended into its exit code or signal name.
func describeExit(ps *os.ProcessState, at time.Time) *exitInfo {
	e := &exitInfo{At: at.UTC()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = signalName(ws.Signal())
	} else {
		code := ps.ExitCode()
		e.Code = &code
	}
	return e
}

// retire lets the replaced process p finish the trigger deliveries and the
// requests it has under way (at most retireTimeout in all), then stops it.
// New ones already go to its replacement, so none is added meanwhile.
func (c *codebase) retire(p *process) {
	ctx, cancel := context.WithTimeout(context.Background(), retireTimeout)
	defer cancel()
	requestsDone := make(chan struct{})
	go func() {
		p.requests.Wait() // past the timeout, the stop below ends them
		close(requestsDone)
	}()
	select {
	case <-p.exited:
	default:
		_ = c.svc.table.Retired(ctx, c.name)
		select {
		case <-requestsDone:
		case <-p.exited:
		case <-ctx.Done():
		}
	}
	p.stop()
	<-p.exited
}

func (c *codebase) restartCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.Restarts
}

// built records a successful build.
func (c *codebase) built() {
	c.mu.Lock()
	c.st.Build = buildInfo{State: "ok", At: time.Now().UTC()}
	c.mu.Unlock()
}

// buildFailed records a failed build (or a failure to start it). With
// running, a process of an earlier build still serves (or is restarted);
// otherwise the functions are failed until the source changes.
func (c *codebase) buildFailed(err error, running bool) {
	c.mu.Lock()
	c.st.Build = buildInfo{State: "failed", At: time.Now().UTC()}
	c.st.Detail = err.Error()
	if !running {
		c.st.State = "failed"
	}
	c.mu.Unlock()
	c.settle()
	for _, line := range strings.Split(err.Error(), "\n") {
		c.log.note(c.name, "ERROR", line)
	}
	if running {
		c.logger.Error("functions not rebuilt; the previous build keeps running", "err", err)
	} else {
		c.logger.Error("functions are not running", "err", err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until something listens on hostport, for 30 s at
// most, unless the process exits first.
func waitListening(ctx context.Context, hostport string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", hostport, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errors.New("it exited before it listened")
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("it did not listen on %s within 30s", hostport)
}

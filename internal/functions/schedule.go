package functions

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/functions/cron"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// Scheduled functions run three ways, as in firebase-tools and production:
// on demand (POST /emulator/v1/functions/{name}/run, the console's Run),
// when a message is published to the function's Cloud Scheduler topic
// (firebase-schedule-{name}-{region}), and, with RunSchedules
// (--run-schedules), on their schedule in their time zone.

// Time zones Cloud Scheduler jobs get when a function names none, as
// firebase-tools deploys them: 1st gen in Los Angeles, 2nd gen in UTC.
const (
	defaultZoneV1 = "America/Los_Angeles"
	defaultZoneV2 = "UTC"
)

// runNow answers POST /emulator/v1/functions/{name}/run: it runs a
// scheduled function now, as the official emulator's "run" does, and
// answers 200 {"queued": true} once the run is queued.
func (s *Service) runNow(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	c, f, ok := s.lookup(name)
	if !ok || f.Kind != KindSchedule {
		httpjson.Error(w, errs.New(errs.NotFound, "no scheduled function called "+name))
		return
	}
	if !s.runSchedule(c, f, time.Now()) {
		httpjson.Error(w, errs.New(errs.FailedPrecondition, "function "+name+" is not running"))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]bool{"queued": true})
}

// runSchedule queues one run of the scheduled function f of c for the
// time at; false when f is not declared (its codebase is not running).
func (s *Service) runSchedule(c *codebase, f Function, at time.Time) bool {
	e := triggers.Event{ID: fmt.Sprintf("run-%d", time.Now().UnixNano()), Source: triggers.Schedule,
		Types: []string{triggers.ScheduleRun}, Project: s.env.ProjectID, Instance: f.Name, Time: at, Data: []byte("{}")}
	return s.table.Deliver(c.name, f.Name, e)
}

// runScheduledByTopic runs the scheduled functions whose Cloud Scheduler
// topic a Pub/Sub event was published to.
func (s *Service) runScheduledByTopic(events []triggers.Event) {
	for _, e := range events {
		if e.Source != triggers.PubSub {
			continue
		}
		for _, c := range s.codebases {
			for _, f := range c.functions() {
				if f.Kind == KindSchedule && scheduleJob(f) == e.Instance {
					s.runSchedule(c, f, e.Time)
				}
			}
		}
	}
}

// declareTopics creates the Pub/Sub topics fns listen on.
func (s *Service) declareTopics(c *codebase, fns []Function) {
	if s.EnsureTopics == nil {
		return
	}
	var topics []string
	for _, f := range fns {
		switch {
		case f.Kind == KindSchedule:
			topics = append(topics, scheduleJob(f))
		case f.Trigger != nil && f.Trigger.Source == triggers.PubSub && f.Trigger.Instance != "":
			topics = append(topics, f.Trigger.Instance)
		}
	}
	if len(topics) == 0 {
		return
	}
	if err := s.EnsureTopics(s.env.ProjectID, topics); err != nil {
		c.logger.Warn("the Pub/Sub topics of the functions could not be created", "topics", topics, "err", err)
	}
}

// zoneOf is the time zone of a scheduled function's schedule.
func zoneOf(f Function) (*time.Location, error) {
	def := defaultZoneV2
	if f.Platform == "gcfv1" {
		def = defaultZoneV1
	}
	return time.LoadLocation(cmp.Or(f.TimeZone, def))
}

// clock is the scheduler's time: the wall clock, or a test's.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// relist is how often the scheduler looks at the functions again when
// none is due sooner: a codebase that finishes building, or a rebuild,
// adds or changes schedules, and a function's first run is its schedule's
// first time after the scheduler sees it.
const relist = 5 * time.Second

// scheduler runs scheduled functions on their schedules (--run-schedules).
type scheduler struct {
	clock clock
	// list returns the scheduled functions of the running builds, by codebase.
	list func() map[*codebase][]Function
	// run queues one run of f of c for the time at.
	run func(c *codebase, f Function, at time.Time) bool
	// warn logs a schedule that cannot be read, once per schedule text.
	warn func(f Function, err error)
}

// loop runs the functions as their schedules fall due until ctx ends. A
// function's first run is its schedule's first time after the scheduler
// first sees it; a run missed while loupe was not running is not made up.
func (sc *scheduler) loop(ctx context.Context) {
	next := map[string]time.Time{}
	parsed := map[string]*cron.Schedule{}
	for {
		now := sc.clock.Now()
		wait := relist
		for c, fns := range sc.list() {
			for _, f := range fns {
				key := c.name + "/" + f.Name + "\x00" + f.Schedule + "\x00" + f.TimeZone
				sched, ok := parsed[key]
				if !ok {
					loc, err := zoneOf(f)
					if err == nil {
						sched, err = cron.Parse(f.Schedule, loc)
					}
					if err != nil {
						sc.warn(f, err)
					}
					parsed[key] = sched
				}
				if sched == nil {
					continue
				}
				at, ok := next[key]
				if !ok {
					at = sched.Next(now)
				}
				if !at.IsZero() && !at.After(now) {
					sc.run(c, f, at)
					at = sched.Next(now)
				}
				next[key] = at
				if !at.IsZero() {
					wait = min(wait, at.Sub(now))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-sc.clock.After(wait):
		}
	}
}

// scheduled lists the scheduled functions of the running builds.
func (s *Service) scheduled() map[*codebase][]Function {
	out := map[*codebase][]Function{}
	for _, c := range s.codebases {
		for _, f := range c.functions() {
			if f.Kind == KindSchedule {
				out[c] = append(out[c], f)
			}
		}
	}
	return out
}

// startScheduler runs the scheduler until ctx ends.
func (s *Service) startScheduler(ctx context.Context, clk clock) {
	sc := &scheduler{clock: clk, list: s.scheduled, run: s.runSchedule,
		warn: func(f Function, err error) {
			s.env.Logger.Warn("scheduled function not run on its schedule: loupe cannot read the schedule", "function", f.Name, "err", err)
		}}
	go sc.loop(ctx)
}

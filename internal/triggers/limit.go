package triggers

import (
	"context"
	"time"
)

// limiter holds a trigger's deliveries to its Policy's MaxConcurrent and
// MaxPerSecond; a trigger without either passes freely.
type limiter struct {
	slots chan struct{} // nil: no bound on concurrency
	ticks chan struct{} // nil: no bound on the rate
	rate  float64
}

// limiter returns the limiter of owner's trigger t, made on first use; a
// trigger whose Policy changed gets a new one.
func (d *Table) limiter(name string, t Trigger) *limiter {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := name + "\x00" + t.Name
	if l, ok := d.limits[key]; ok && l.fits(t.Policy) {
		return l
	}
	l := &limiter{rate: t.Policy.MaxPerSecond}
	if t.Policy.MaxConcurrent > 0 {
		l.slots = make(chan struct{}, t.Policy.MaxConcurrent)
	}
	if t.Policy.MaxPerSecond > 0 {
		l.ticks = make(chan struct{}, 1)
		l.ticks <- struct{}{}
		every := time.Duration(float64(time.Second) / t.Policy.MaxPerSecond)
		go l.refill(d.ctx, every)
	}
	d.limits[key] = l
	return l
}

// fits reports whether l enforces p.
func (l *limiter) fits(p Policy) bool {
	return cap(l.slots) == p.MaxConcurrent && l.rate == p.MaxPerSecond
}

// refill lets one more delivery start every interval until ctx ends.
func (l *limiter) refill(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			select {
			case l.ticks <- struct{}{}:
			default:
			}
		}
	}
}

// acquire waits for a turn to deliver, or until ctx ends.
func (l *limiter) acquire(ctx context.Context) error {
	if l.ticks != nil {
		select {
		case <-l.ticks:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if l.slots != nil {
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// release ends a turn acquire gave.
func (l *limiter) release() {
	if l.slots != nil {
		<-l.slots
	}
}

package fanout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// DueSoon is how long before a request's due date its mentor is reminded.
const DueSoon = 24 * time.Hour

// Sweep reminds of the due dates of paid, open (pending or accepted)
// requests: a day before its dueAt the mentor is told it is due soon; once
// it has passed, the requester is told they may cancel for a full refund
// and the mentor that it is overdue. Each reminder's id names its request
// (due-soon-{id}, overdue-{id}, overdue-mentor-{id}), so sweeping again
// sends nothing twice.
func (h *Handler) Sweep(ctx context.Context, now time.Time) error {
	open, err := h.DB.Collection("feedbackRequests").Where("status", "in", []any{"pending", "accepted"}).Documents(ctx).GetAll()
	if err != nil {
		return fmt.Errorf("read open requests: %w", err)
	}
	var errs []error
	for _, d := range open {
		r := d.Data()
		due, ok := r["dueAt"].(time.Time)
		if !ok || r["paymentStatus"] != "paid" {
			continue
		}
		str := func(k string) string { s, _ := r[k].(string); return s }
		id, title := d.Ref.ID, str("title")
		link, data := "/requests/"+id, map[string]any{"requestId": id}
		switch {
		case !now.Before(due):
			errs = append(errs, h.Send(ctx, "overdue-"+id, Notification{UserID: str("requesterId"), Type: "feedback_overdue",
				Title: "Feedback is overdue", Link: link, Data: data,
				Message: fmt.Sprintf("%s has not sent feedback on “%s” by the promised date. You can cancel the request for a full refund.", str("mentorName"), title)}))
			errs = append(errs, h.Send(ctx, "overdue-mentor-"+id, Notification{UserID: str("mentorId"), Type: "feedback_overdue",
				Title: "Feedback is overdue", Link: link, Data: data,
				Message: fmt.Sprintf("Your feedback on “%s” was due. %s can now cancel the request for a full refund.", title, str("requesterName"))}))
		case due.Sub(now) <= DueSoon:
			errs = append(errs, h.Send(ctx, "due-soon-"+id, Notification{UserID: str("mentorId"), Type: "feedback_due",
				Title: "Feedback due soon", Link: link, Data: data,
				Message: fmt.Sprintf("Your feedback on “%s” for %s is due within a day.", title, str("requesterName"))}))
		}
	}
	return errors.Join(errs...)
}

// SweepEndpoint serves POST /tasks/turnaround for a scheduler (Cloud
// Scheduler in production): one Sweep, 204 when done.
func (h *Handler) SweepEndpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	if err := h.Sweep(r.Context(), time.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// SweepEvery runs Sweep every interval until ctx ends, logging failures
// through logf; the functions process runs it where no scheduler calls
// SweepEndpoint (locally).
func (h *Handler) SweepEvery(ctx context.Context, interval time.Duration, logf func(string, ...any)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if err := h.Sweep(ctx, now); err != nil {
				logf("turnaround sweep: %v", err)
			}
		}
	}
}

package pubsub

import (
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/changes"
)

// keepRecent is how many of a topic's last messages the console sees.
const keepRecent = 20

// TopicView is a topic as the console shows it: its subscriptions with
// their backlogs, and its last messages, newest first.
type TopicView struct {
	Name          string             `json:"name"`
	Subscriptions []SubscriptionView `json:"subscriptions"`
	Recent        []map[string]any   `json:"recent"`
}

// SubscriptionView is a subscription and its backlog: the messages not yet
// acknowledged (Backlog), of which Leased are out with a subscriber now,
// and when the oldest of them was published.
type SubscriptionView struct {
	Name        string     `json:"name"`
	Topic       string     `json:"topic"`
	Push        string     `json:"pushEndpoint,omitempty"`
	Detached    bool       `json:"detached,omitempty"`
	Backlog     int        `json:"backlog"`
	Leased      int        `json:"leased"`
	OldestUnack *time.Time `json:"oldestUnacked,omitempty"`
}

// Changes is the change counter of what Overview shows: it moves with every
// change to a topic, a subscription, a message or a lease.
func (e *Engine) Changes() *changes.Counter { return &e.changes }

// Overview returns project's topics (sorted by name) for the console; the
// subscriptions whose topic was deleted are listed under DeletedTopic's
// name, last.
func (e *Engine) Overview(project string) []TopicView {
	e.mu.Lock()
	defer e.mu.Unlock()
	prefix := "projects/" + project + "/"
	now := e.now()
	out := []TopicView{}
	for _, name := range sortedKeys(e.topics) {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		t := e.topics[name]
		v := TopicView{Name: name, Subscriptions: []SubscriptionView{}, Recent: []map[string]any{}}
		for _, sub := range sortedKeys(t.subs) {
			v.Subscriptions = append(v.Subscriptions, t.subs[sub].view(now))
		}
		for i := len(t.recent) - 1; i >= 0; i-- {
			v.Recent = append(v.Recent, PushMessage(t.recent[i]))
		}
		out = append(out, v)
	}
	orphans := TopicView{Name: DeletedTopic, Subscriptions: []SubscriptionView{}, Recent: []map[string]any{}}
	for _, name := range sortedKeys(e.subs) {
		if s := e.subs[name]; strings.HasPrefix(name, prefix) && s.topic == nil {
			orphans.Subscriptions = append(orphans.Subscriptions, s.view(now))
		}
	}
	if len(orphans.Subscriptions) > 0 {
		out = append(out, orphans)
	}
	return out
}

// view is the subscription's backlog at now; e.mu is held.
func (s *subscription) view(now time.Time) SubscriptionView {
	v := SubscriptionView{Name: s.pb.Name, Topic: s.pb.Topic, Detached: s.pb.Detached, Push: s.pb.GetPushConfig().GetPushEndpoint()}
	for _, p := range s.pending {
		if !p.durable {
			continue
		}
		v.Backlog++
		if p.leased.After(now) {
			v.Leased++
		}
		if t := p.msg.PublishTime.AsTime(); v.OldestUnack == nil || t.Before(*v.OldestUnack) {
			v.OldestUnack = &t
		}
	}
	return v
}

// Package pubsub is the core of loupe's Cloud Pub/Sub: topics,
// subscriptions and the messages published to them, as the
// google.pubsub.v1 Publisher and Subscriber services define them and as
// @google-cloud/pubsub and cloud.google.com/go/pubsub use them against the
// official emulator (PUBSUB_EMULATOR_HOST). It has no transport code:
// package pubsub/grpcapi serves it over gRPC, and pushing to an endpoint
// goes through the Pusher the composition root installs.
//
// # Model
//
// A topic fans each message published to it out to every subscription it
// has at that moment. A subscription keeps the messages not yet
// acknowledged, in publish order. Pulling (Pull, or the streaming pull the
// client libraries use) leases messages for the ack deadline; a message is
// delivered again once its lease runs out or it is nacked (a deadline of 0),
// after the subscription's retry policy's backoff when it has one. On a
// subscription with message ordering, the messages of one ordering key are
// delivered in publish order, each only once those before it are acked. A
// push subscription's messages are posted to its endpoint by a pusher of
// its own, and acked by a 2xx answer (102, 200, 201, 202 or 204).
//
// # Durability
//
// With a data folder, topics, subscriptions, published messages and acks
// are kept in pubsub.log (internal/wal). A publish is answered, and its
// messages become deliverable, once its record is on disk. Acks are
// written without waiting for the disk: a crash may forget one, and the
// message is delivered again, which at-least-once delivery allows. Leases
// are not kept: after a restart every unacked message is deliverable.
//
// # Caveats
//
// Subscription filters, snapshots and seek, dead-letter topics, schemas
// and exactly-once delivery are not served (a filter is refused; the
// others answer Unimplemented at the adapter or are stored and ignored, as
// said on each).
package pubsub

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/loupe-dev/loupe/internal/changes"
	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/triggers"
	"github.com/loupe-dev/loupe/internal/wal"
	"google.golang.org/protobuf/proto"
)

// Publisher takes the events of published messages: the functions'
// trigger table (onMessagePublished, pubsub.topic().onPublish).
type Publisher interface {
	Publish(events ...triggers.Event)
}

// Engine holds every project's topics and subscriptions.
type Engine struct {
	mu     sync.Mutex
	topics map[string]*topic        // by full name
	subs   map[string]*subscription // by full name
	nextID int64                    // the next message id
	log    *wal.Log                 // nil in memory
	// flushing is set while a background flush of acks runs.
	flushing bool

	now func() time.Time
	// changes moves with every change the console's view shows (Overview),
	// for its long poll.
	changes   changes.Counter
	publisher Publisher
	pusher    Pusher
	closed    bool
	pushers   sync.WaitGroup
}

type topic struct {
	pb   *pb.Topic
	subs map[string]*subscription
	// recent are the last messages published to the topic, oldest first
	// (at most keepRecent), for the console; kept in memory only.
	recent []*pb.PubsubMessage
}

// subscription is one subscription and its unacked messages.
type subscription struct {
	pb *pb.Subscription
	// topic is nil once the topic was deleted (the subscription's topic
	// then reads "_deleted-topic_", as in production).
	topic   *topic
	pending []*pending // in publish order
	byID    map[string]*pending
	// ready is closed, and replaced, when a message may have become
	// deliverable.
	ready chan struct{}
	// stopPush ends the subscription's pusher; nil when it has none.
	stopPush func()
}

// pending is one unacked message of a subscription.
type pending struct {
	msg *pb.PubsubMessage
	// durable is false until the publish's record is on disk.
	durable bool
	// leased is when the current lease ends (zero: not leased).
	leased time.Time
	// notBefore holds back a nacked or expired message for its backoff.
	notBefore  time.Time
	deliveries int
}

// Names: projects/{project}/topics/{id} and projects/{project}/subscriptions/{id}.
var (
	idPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$`)
	// DeletedTopic is the topic of a subscription whose topic was deleted.
	DeletedTopic = "_deleted-topic_"
)

// splitName returns the project and id of a topic or subscription name
// (kind "topics" or "subscriptions"), or an InvalidArgument error.
func splitName(name, kind string) (project, id string, err error) {
	parts := strings.Split(name, "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[1] == "" || parts[2] != kind ||
		!idPattern.MatchString(parts[3]) || strings.HasPrefix(parts[3], "goog") {
		return "", "", errs.Errorf(errs.InvalidArgument, "Invalid [%s] name: (name=%s)", kind, name)
	}
	return parts[1], parts[3], nil
}

// notFound is production's answer for a missing topic or subscription.
func notFound(name string) error {
	return errs.Errorf(errs.NotFound, "Resource not found (resource=%s).", lastSegment(name))
}

func lastSegment(name string) string { return name[strings.LastIndex(name, "/")+1:] }

// Options configure an engine.
type Options struct {
	// Dir is the data folder; "" keeps everything in memory.
	Dir string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Open opens the engine, replaying Dir's log when there is one.
func Open(o Options) (*Engine, error) {
	e := &Engine{topics: map[string]*topic{}, subs: map[string]*subscription{}, now: o.Now, nextID: 1}
	if e.now == nil {
		e.now = time.Now
	}
	if o.Dir != "" {
		if err := e.openLog(o.Dir); err != nil {
			return nil, fmt.Errorf("pubsub: %w", err)
		}
	}
	return e, nil
}

// SetPublisher has p told of every message once its publish is durable.
func (e *Engine) SetPublisher(p Publisher) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.publisher = p
}

// Close stops the pushers and closes the log.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	for _, s := range e.subs {
		s.stopPushing()
	}
	e.mu.Unlock()
	e.pushers.Wait()
	if e.log != nil {
		return e.log.Close()
	}
	return nil
}

// CreateTopic creates t (its name is all that must be set; labels,
// retention and the rest are kept as given).
func (e *Engine) CreateTopic(t *pb.Topic) (*pb.Topic, error) {
	if _, _, err := splitName(t.GetName(), "topics"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.topics[t.GetName()] != nil {
		return nil, errs.Errorf(errs.AlreadyExists, "Resource already exists in the project (resource=%s).", lastSegment(t.GetName()))
	}
	t = proto.Clone(t).(*pb.Topic)
	t.State = pb.Topic_ACTIVE
	if err := e.commit(record{Topic: t}); err != nil {
		return nil, err
	}
	e.applyTopic(t)
	return proto.Clone(t).(*pb.Topic), nil
}

// EnsureTopics creates the topics of project named by ids that do not
// exist, as firebase-tools' functions emulator creates the topic of each
// Pub/Sub-triggered function.
func (e *Engine) EnsureTopics(project string, ids []string) error {
	for _, id := range ids {
		_, err := e.CreateTopic(&pb.Topic{Name: "projects/" + project + "/topics/" + id})
		if err != nil && errs.KindOf(err) != errs.AlreadyExists {
			return err
		}
	}
	return nil
}

// GetTopic returns the topic called name.
func (e *Engine) GetTopic(name string) (*pb.Topic, error) {
	if _, _, err := splitName(name, "topics"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[name]
	if t == nil {
		return nil, notFound(name)
	}
	return proto.Clone(t.pb).(*pb.Topic), nil
}

// UpdateTopic changes the fields of the topic named by t that paths name
// (labels, message_retention_duration, kms_key_name, schema_settings,
// message_storage_policy).
func (e *Engine) UpdateTopic(t *pb.Topic, paths []string) (*pb.Topic, error) {
	if len(paths) == 0 {
		return nil, errs.New(errs.InvalidArgument, "The update_mask in the UpdateTopicRequest must be set.")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.topics[t.GetName()]
	if cur == nil {
		return nil, notFound(t.GetName())
	}
	next := proto.Clone(cur.pb).(*pb.Topic)
	for _, p := range paths {
		switch p {
		case "labels":
			next.Labels = t.Labels
		case "message_retention_duration":
			next.MessageRetentionDuration = t.MessageRetentionDuration
		case "kms_key_name":
			next.KmsKeyName = t.KmsKeyName
		case "schema_settings":
			next.SchemaSettings = t.SchemaSettings
		case "message_storage_policy":
			next.MessageStoragePolicy = t.MessageStoragePolicy
		default:
			return nil, errs.Errorf(errs.InvalidArgument, "Invalid update_mask provided in the UpdateTopicRequest: the field %q cannot be updated.", p)
		}
	}
	if err := e.commit(record{Topic: next}); err != nil {
		return nil, err
	}
	e.applyTopic(next)
	return proto.Clone(next).(*pb.Topic), nil
}

// ListTopics returns project's topics, sorted by name.
func (e *Engine) ListTopics(project string) []*pb.Topic {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*pb.Topic
	for _, name := range sortedKeys(e.topics) {
		if strings.HasPrefix(name, "projects/"+project+"/") {
			out = append(out, proto.Clone(e.topics[name].pb).(*pb.Topic))
		}
	}
	return out
}

// TopicSubscriptions lists the names of a topic's subscriptions, sorted.
func (e *Engine) TopicSubscriptions(name string) ([]string, error) {
	if _, _, err := splitName(name, "topics"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.topics[name]
	if t == nil {
		return nil, notFound(name)
	}
	return sortedKeys(t.subs), nil
}

// DeleteTopic deletes a topic; its subscriptions stay, with the topic
// "_deleted-topic_", and keep the messages they have.
func (e *Engine) DeleteTopic(name string) error {
	if _, _, err := splitName(name, "topics"); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.topics[name] == nil {
		return notFound(name)
	}
	if err := e.commit(record{DeleteTopic: name}); err != nil {
		return err
	}
	e.applyDeleteTopic(name)
	return nil
}

func (e *Engine) applyTopic(t *pb.Topic) {
	defer e.changes.Bump()
	if cur := e.topics[t.Name]; cur != nil {
		cur.pb = t
		return
	}
	e.topics[t.Name] = &topic{pb: t, subs: map[string]*subscription{}}
}

func (e *Engine) applyDeleteTopic(name string) {
	t := e.topics[name]
	if t == nil {
		return
	}
	for _, s := range t.subs {
		s.topic = nil
		s.pb.Topic = DeletedTopic
	}
	delete(e.topics, name)
	e.changes.Bump()
}

// subscriptionDefaults fills what production fills in a new subscription.
func subscriptionDefaults(s *pb.Subscription) {
	if s.AckDeadlineSeconds == 0 {
		s.AckDeadlineSeconds = 10
	}
	s.State = pb.Subscription_ACTIVE
}

// checkSubscription validates what loupe serves of a subscription.
func checkSubscription(s *pb.Subscription) error {
	if d := s.GetAckDeadlineSeconds(); d != 0 && (d < 10 || d > 600) {
		return errs.Errorf(errs.InvalidArgument, "Invalid ack deadline given: %d. The ack deadline must be between 10 and 600 seconds.", d)
	}
	if s.GetFilter() != "" {
		return errs.New(errs.InvalidArgument, "loupe does not serve subscription filters yet: create the subscription without a filter.")
	}
	if rp := s.GetRetryPolicy(); rp != nil {
		if rp.GetMinimumBackoff().AsDuration() > rp.GetMaximumBackoff().AsDuration() && rp.GetMaximumBackoff() != nil {
			return errs.New(errs.InvalidArgument, "Invalid retry policy: the minimum backoff must not exceed the maximum backoff.")
		}
	}
	if ep := s.GetPushConfig().GetPushEndpoint(); ep != "" && !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
		return errs.Errorf(errs.InvalidArgument, "Invalid push endpoint given (endpoint=%s). Refer to https://cloud.google.com/pubsub/subscriber#create_push_subscriptions for more information.", ep)
	}
	return nil
}

// CreateSubscription creates s on its topic; it gets the messages
// published from now on.
func (e *Engine) CreateSubscription(s *pb.Subscription) (*pb.Subscription, error) {
	if _, _, err := splitName(s.GetName(), "subscriptions"); err != nil {
		return nil, err
	}
	if _, _, err := splitName(s.GetTopic(), "topics"); err != nil {
		return nil, err
	}
	if err := checkSubscription(s); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.subs[s.GetName()] != nil {
		return nil, errs.Errorf(errs.AlreadyExists, "Resource already exists in the project (resource=%s).", lastSegment(s.GetName()))
	}
	if e.topics[s.GetTopic()] == nil {
		return nil, notFound(s.GetTopic())
	}
	s = proto.Clone(s).(*pb.Subscription)
	subscriptionDefaults(s)
	if err := e.commit(record{Subscription: s}); err != nil {
		return nil, err
	}
	e.applySubscription(s)
	return proto.Clone(s).(*pb.Subscription), nil
}

// GetSubscription returns the subscription called name.
func (e *Engine) GetSubscription(name string) (*pb.Subscription, error) {
	if _, _, err := splitName(name, "subscriptions"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return nil, notFound(name)
	}
	return proto.Clone(s.pb).(*pb.Subscription), nil
}

// updatable are the subscription fields UpdateSubscription changes.
var updatable = map[string]func(dst, src *pb.Subscription){
	"ack_deadline_seconds":       func(d, s *pb.Subscription) { d.AckDeadlineSeconds = s.AckDeadlineSeconds },
	"push_config":                func(d, s *pb.Subscription) { d.PushConfig = s.PushConfig },
	"labels":                     func(d, s *pb.Subscription) { d.Labels = s.Labels },
	"retain_acked_messages":      func(d, s *pb.Subscription) { d.RetainAckedMessages = s.RetainAckedMessages },
	"message_retention_duration": func(d, s *pb.Subscription) { d.MessageRetentionDuration = s.MessageRetentionDuration },
	"expiration_policy":          func(d, s *pb.Subscription) { d.ExpirationPolicy = s.ExpirationPolicy },
	"dead_letter_policy":         func(d, s *pb.Subscription) { d.DeadLetterPolicy = s.DeadLetterPolicy },
	"retry_policy":               func(d, s *pb.Subscription) { d.RetryPolicy = s.RetryPolicy },
	"enable_exactly_once_delivery": func(d, s *pb.Subscription) {
		d.EnableExactlyOnceDelivery = s.EnableExactlyOnceDelivery
	},
}

// UpdateSubscription changes the fields of the subscription named by s
// that paths name.
func (e *Engine) UpdateSubscription(s *pb.Subscription, paths []string) (*pb.Subscription, error) {
	if len(paths) == 0 {
		return nil, errs.New(errs.InvalidArgument, "The update_mask in the UpdateSubscriptionRequest must be set.")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.subs[s.GetName()]
	if cur == nil {
		return nil, notFound(s.GetName())
	}
	next := proto.Clone(cur.pb).(*pb.Subscription)
	for _, p := range paths {
		set, ok := updatable[p]
		if !ok {
			return nil, errs.Errorf(errs.InvalidArgument, "Invalid update_mask provided in the UpdateSubscriptionRequest: the field %q cannot be updated.", p)
		}
		set(next, s)
	}
	if err := checkSubscription(next); err != nil {
		return nil, err
	}
	subscriptionDefaults(next)
	if err := e.commit(record{Subscription: next}); err != nil {
		return nil, err
	}
	e.applySubscription(next)
	return proto.Clone(next).(*pb.Subscription), nil
}

// ModifyPushConfig sets a subscription's push config: an empty endpoint
// makes it a pull subscription.
func (e *Engine) ModifyPushConfig(name string, pc *pb.PushConfig) error {
	_, err := e.UpdateSubscription(&pb.Subscription{Name: name, PushConfig: pc}, []string{"push_config"})
	return err
}

// ListSubscriptions returns project's subscriptions, sorted by name.
func (e *Engine) ListSubscriptions(project string) []*pb.Subscription {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*pb.Subscription
	for _, name := range sortedKeys(e.subs) {
		if strings.HasPrefix(name, "projects/"+project+"/") {
			out = append(out, proto.Clone(e.subs[name].pb).(*pb.Subscription))
		}
	}
	return out
}

// DeleteSubscription deletes a subscription and its messages.
func (e *Engine) DeleteSubscription(name string) error {
	if _, _, err := splitName(name, "subscriptions"); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.subs[name] == nil {
		return notFound(name)
	}
	if err := e.commit(record{DeleteSubscription: name}); err != nil {
		return err
	}
	e.applyDeleteSubscription(name)
	return nil
}

// DetachSubscription detaches a subscription from its topic: it gets no
// more messages and drops those it has.
func (e *Engine) DetachSubscription(name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.subs[name]
	if s == nil {
		return notFound(name)
	}
	next := proto.Clone(s.pb).(*pb.Subscription)
	next.Detached = true
	if err := e.commit(record{Subscription: next}); err != nil {
		return err
	}
	e.applySubscription(next)
	return nil
}

// applySubscription creates or replaces a subscription; e.mu is held.
func (e *Engine) applySubscription(p *pb.Subscription) {
	s := e.subs[p.Name]
	if s == nil {
		s = &subscription{byID: map[string]*pending{}, ready: make(chan struct{})}
		e.subs[p.Name] = s
		if t := e.topics[p.Topic]; t != nil {
			s.topic = t
			t.subs[p.Name] = s
		} else {
			p.Topic = DeletedTopic
		}
	}
	if p.Detached {
		if s.topic != nil {
			delete(s.topic.subs, p.Name)
		}
		s.pending, s.byID = nil, map[string]*pending{}
	}
	s.pb = p
	s.stopPushing()
	if p.GetPushConfig().GetPushEndpoint() != "" && !p.Detached {
		e.startPushing(s)
	}
	s.wake()
	e.changes.Bump()
}

func (e *Engine) applyDeleteSubscription(name string) {
	s := e.subs[name]
	if s == nil {
		return
	}
	s.stopPushing()
	if s.topic != nil {
		delete(s.topic.subs, name)
	}
	delete(e.subs, name)
	s.wake()
	e.changes.Bump()
}

// wake tells the pulls waiting on s that a message may be deliverable.
func (s *subscription) wake() {
	close(s.ready)
	s.ready = make(chan struct{})
}

package functions

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
	"github.com/loupe-dev/loupe/internal/triggers"
)

// The Cloud Tasks API as the Admin SDK's getFunctions().taskQueue(name)
// reaches it through CLOUD_TASKS_EMULATOR_HOST:
//
//	POST   /projects/{p}/locations/{l}/queues/{q}/tasks       {"task": {...}}: enqueue
//	DELETE /projects/{p}/locations/{l}/queues/{q}/tasks/{id}  delete a task not yet dispatched
//
// The queue is the task-queue function's name; a task is dispatched through
// the trigger table at its scheduleTime with the function's retry and rate
// settings (triggers.Policy).

// taskQueue holds the tasks not yet dispatched, by full task name.
type taskQueue struct {
	mu      sync.Mutex
	pending map[string]*time.Timer
	// names are the task names used lately: Cloud Tasks refuses a name
	// again for a while after its task is gone (loupe: for its life).
	names map[string]bool
}

// taskBody is the task the Admin SDK sends.
type taskBody struct {
	Task struct {
		Name         string `json:"name"`
		ScheduleTime string `json:"scheduleTime"`
		HTTPRequest  struct {
			Body string `json:"body"`
		} `json:"httpRequest"`
	} `json:"task"`
}

// enqueueTask answers POST …/queues/{q}/tasks.
func (s *Service) enqueueTask(w http.ResponseWriter, r *http.Request) {
	project, location, queue := r.PathValue("project"), r.PathValue("location"), r.PathValue("queue")
	c, f, ok := s.lookup(queue)
	if !ok || f.Kind != KindTask {
		httpjson.Error(w, errs.New(errs.NotFound, "Queue does not exist. If you just created the queue, wait at least a minute for the queue to initialize."))
		return
	}
	var body taskBody
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "Invalid JSON payload received: "+err.Error()))
		return
	}
	data, err := base64.StdEncoding.DecodeString(body.Task.HTTPRequest.Body)
	if err != nil {
		httpjson.Error(w, errs.New(errs.InvalidArgument, "task.httpRequest.body must be base64"))
		return
	}
	prefix := fmt.Sprintf("projects/%s/locations/%s/queues/%s/tasks/", project, location, queue)
	name := body.Task.Name
	if name == "" {
		name = prefix + fmt.Sprintf("%d", time.Now().UnixNano())
	}
	at := time.Now()
	if body.Task.ScheduleTime != "" {
		if at, err = time.Parse(time.RFC3339Nano, body.Task.ScheduleTime); err != nil {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "task.scheduleTime must be an RFC 3339 time"))
			return
		}
	}
	q := &s.tasks
	q.mu.Lock()
	if q.names[name] {
		q.mu.Unlock()
		httpjson.Error(w, errs.New(errs.AlreadyExists, "Requested entity already exists"))
		return
	}
	if q.names == nil {
		q.names, q.pending = map[string]bool{}, map[string]*time.Timer{}
	}
	q.names[name] = true
	id := name[len(prefix):]
	e := triggers.Event{ID: id, Source: triggers.Tasks, Types: []string{triggers.TaskDispatched}, Project: project,
		Instance: queue, Resource: id, Time: at, Data: data}
	q.pending[name] = time.AfterFunc(time.Until(at), func() {
		q.mu.Lock()
		_, due := q.pending[name]
		delete(q.pending, name)
		q.mu.Unlock()
		if due {
			s.table.Deliver(c.name, f.Name, e)
		}
	})
	q.mu.Unlock()
	httpjson.Write(w, http.StatusOK, map[string]any{"name": name, "scheduleTime": at.UTC().Format(time.RFC3339Nano),
		"createTime": time.Now().UTC().Format(time.RFC3339Nano), "view": "BASIC"})
}

// deleteTask answers DELETE …/queues/{q}/tasks/{id}: a task not yet
// dispatched is removed; any other is NotFound.
func (s *Service) deleteTask(w http.ResponseWriter, r *http.Request) {
	name := fmt.Sprintf("projects/%s/locations/%s/queues/%s/tasks/%s", r.PathValue("project"), r.PathValue("location"),
		r.PathValue("queue"), r.PathValue("id"))
	q := &s.tasks
	q.mu.Lock()
	t, ok := q.pending[name]
	if ok {
		t.Stop()
		delete(q.pending, name)
	}
	q.mu.Unlock()
	if !ok {
		httpjson.Error(w, errs.New(errs.NotFound, "Requested entity was not found."))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// stop drops the tasks not yet dispatched.
func (q *taskQueue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for name, t := range q.pending {
		t.Stop()
		delete(q.pending, name)
	}
}

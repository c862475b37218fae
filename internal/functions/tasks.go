package functions

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
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

// enqueueTask answers POST …/queues/{q}/tasks. In strict mode it needs the
// admin credential, as Cloud Tasks needs an OAuth token with its rights.
func (s *Service) enqueueTask(w http.ResponseWriter, r *http.Request) {
	project, location, queue := r.PathValue("project"), r.PathValue("location"), r.PathValue("queue")
	if err := s.env.Credentials.RequireAdmin(r.Header.Get("Authorization"), project); err != nil {
		httpjson.Error(w, err)
		return
	}
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
	queueName := fmt.Sprintf("projects/%s/locations/%s/queues/%s", project, location, queue)
	name, id := body.Task.Name, ""
	if name == "" {
		id = fmt.Sprintf("%d", time.Now().UnixNano())
		name = queueName + "/tasks/" + id
	} else if id, err = taskID(name, queueName); err != nil {
		httpjson.Error(w, err)
		return
	}
	at := time.Now()
	if body.Task.ScheduleTime != "" {
		if at, err = time.Parse(time.RFC3339Nano, body.Task.ScheduleTime); err != nil {
			httpjson.Error(w, errs.New(errs.InvalidArgument, "task.scheduleTime must be an RFC 3339 time"))
			return
		}
	}
	e := triggers.Event{ID: id, Source: triggers.Tasks, Types: []string{triggers.TaskDispatched}, Project: project,
		Instance: queue, Resource: id, Time: at, Data: data}
	if !s.tasks.add(name, at, func() { s.table.Deliver(c.name, f.Name, e) }) {
		httpjson.Error(w, errs.New(errs.AlreadyExists, "Requested entity already exists"))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"name": name, "scheduleTime": at.UTC().Format(time.RFC3339Nano),
		"createTime": time.Now().UTC().Format(time.RFC3339Nano), "view": "BASIC"})
}

// taskNamePattern is a task's full name as Cloud Tasks takes it; a task id
// is at most 500 letters, digits, hyphens and underscores.
var taskNamePattern = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/queues/[^/]+/tasks/([A-Za-z0-9_-]{1,500})$`)

// taskID is the id of the task named name in queueName, or Cloud Tasks'
// INVALID_ARGUMENT for a name it refuses.
func taskID(name, queueName string) (string, error) {
	m := taskNamePattern.FindStringSubmatch(name)
	if m == nil {
		return "", errs.New(errs.InvalidArgument, `Task name must be formatted: "projects/<PROJECT_ID>/locations/<LOCATION_ID>/queues/<QUEUE_ID>/tasks/<TASK_ID>"`)
	}
	if name != queueName+"/tasks/"+m[1] {
		return "", errs.New(errs.InvalidArgument, fmt.Sprintf("The queue name from request ('%s') must be the same as the queue name in the named task ('%s').",
			queueName, strings.TrimSuffix(name, "/tasks/"+m[1])))
	}
	return m[1], nil
}

// deleteTask answers DELETE …/queues/{q}/tasks/{id}: a task not yet
// dispatched is removed; any other is NotFound. In strict mode it needs the
// admin credential.
func (s *Service) deleteTask(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	if err := s.env.Credentials.RequireAdmin(r.Header.Get("Authorization"), project); err != nil {
		httpjson.Error(w, err)
		return
	}
	name := fmt.Sprintf("projects/%s/locations/%s/queues/%s/tasks/%s", project, r.PathValue("location"),
		r.PathValue("queue"), r.PathValue("id"))
	if !s.tasks.remove(name) {
		httpjson.Error(w, errs.New(errs.NotFound, "Requested entity was not found."))
		return
	}
	httpjson.Write(w, http.StatusOK, map[string]any{})
}

// add schedules run for the task name at at and reports true, or reports
// false when the name was used before.
func (q *taskQueue) add(name string, at time.Time, run func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.names[name] {
		return false
	}
	if q.names == nil {
		q.names, q.pending = map[string]bool{}, map[string]*time.Timer{}
	}
	q.names[name] = true
	q.pending[name] = time.AfterFunc(time.Until(at), func() {
		if q.remove(name) {
			run()
		}
	})
	return true
}

// remove drops the task name and reports whether it was pending.
func (q *taskQueue) remove(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, ok := q.pending[name]
	if ok {
		t.Stop()
		delete(q.pending, name)
	}
	return ok
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

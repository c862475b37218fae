package firestore

import (
	"errors"
	"fmt"
)

// Kind classifies an engine error; transports map it to a wire status.
type Kind int

// The kinds of engine errors, named after the gRPC codes they map to.
const (
	Internal Kind = iota
	InvalidArgument
	NotFound
	AlreadyExists
	PermissionDenied
	FailedPrecondition
	Aborted
	ResourceExhausted
	Unauthenticated
	Unavailable
)

// status is how a kind appears on the wire: its google.rpc code number,
// status name and HTTP status.
type wireStatus struct {
	code int
	name string
	http int
}

var statuses = map[Kind]wireStatus{
	Internal:           {13, "INTERNAL", 500},
	InvalidArgument:    {3, "INVALID_ARGUMENT", 400},
	NotFound:           {5, "NOT_FOUND", 404},
	AlreadyExists:      {6, "ALREADY_EXISTS", 409},
	PermissionDenied:   {7, "PERMISSION_DENIED", 403},
	FailedPrecondition: {9, "FAILED_PRECONDITION", 400},
	Aborted:            {10, "ABORTED", 409},
	ResourceExhausted:  {8, "RESOURCE_EXHAUSTED", 429},
	Unauthenticated:    {16, "UNAUTHENTICATED", 401},
	Unavailable:        {14, "UNAVAILABLE", 503},
}

// Status is the kind's google.rpc code number, status name (e.g.
// "PERMISSION_DENIED") and HTTP status: the one mapping every transport uses.
func (k Kind) Status() (code int, name string, httpStatus int) {
	st, ok := statuses[k]
	if !ok {
		st = statuses[Internal]
	}
	return st.code, st.name, st.http
}

// Error is an engine error with its kind and Firestore's message.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err, Internal for errors that are not *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

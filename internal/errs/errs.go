// Package errs is loupe's one error catalogue: every service's core
// reports what went wrong as an *Error of a Kind, named after the gRPC
// code it maps to, and each transport adapter turns the kind into its
// wire's shape at the edge (a gRPC status, Firestore's REST error JSON,
// an Identity Toolkit error string, Storage's error JSON). The package
// has no transport code: the HTTP status of a kind is a number here.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error; transports map it to a wire status.
type Kind int

// The kinds, named after the gRPC codes they map to.
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

// wireStatus is how a kind appears on the wire: its google.rpc code
// number, status name and HTTP status.
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
// "PERMISSION_DENIED") and HTTP status: the one mapping every transport
// starts from.
func (k Kind) Status() (code int, name string, httpStatus int) {
	st, ok := statuses[k]
	if !ok {
		st = statuses[Internal]
	}
	return st.code, st.name, st.http
}

// Error is an error of a kind with the message the client is shown.
// Cause, when set, is a more precise reason an adapter may word its own
// way (errors.Is and errors.As see it).
type Error struct {
	Kind    Kind
	Message string
	Cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// New is an error of kind with message msg.
func New(kind Kind, msg string) error { return &Error{Kind: kind, Message: msg} }

// Errorf is an error of kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) error {
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

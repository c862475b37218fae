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

package firestore

import "github.com/loupe-dev/loupe/internal/errs"

// Kind classifies an engine error; it is the catalogue's (package errs).
type Kind = errs.Kind

// The kinds of engine errors, the catalogue's under their Firestore names.
const (
	Internal           = errs.Internal
	InvalidArgument    = errs.InvalidArgument
	NotFound           = errs.NotFound
	AlreadyExists      = errs.AlreadyExists
	PermissionDenied   = errs.PermissionDenied
	FailedPrecondition = errs.FailedPrecondition
	Aborted            = errs.Aborted
	ResourceExhausted  = errs.ResourceExhausted
	Unauthenticated    = errs.Unauthenticated
	Unavailable        = errs.Unavailable
)

func errorf(kind Kind, format string, args ...any) error { return errs.Errorf(kind, format, args...) }

// kindOf returns the kind of err, Internal for errors that are not *errs.Error.
func kindOf(err error) Kind { return errs.KindOf(err) }

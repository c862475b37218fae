package firestore

import "github.com/loupe-dev/loupe/internal/errs"

// errorf returns an engine error of kind from the catalogue (package errs),
// with Firestore's message.
func errorf(kind errs.Kind, format string, args ...any) error {
	return errs.Errorf(kind, format, args...)
}

package pull

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// redactor replaces personal data with fake values that are stable (the
// same value always gets the same fake, so references between documents
// and accounts still match) and carry nothing of the original but a hash.
type redactor struct {
	fields map[string]bool
}

func newRedactor(fields []string) *redactor {
	r := &redactor{fields: map[string]bool{}}
	for _, f := range fields {
		r.fields[f] = true
	}
	return r
}

// fake is the stand-in for value of the named field: an e-mail address
// for email, a phone number in E.164 for phoneNumber, else a word and a
// hash.
func fake(field, value string) string {
	sum := sha256.Sum256([]byte(field + "\x00" + value))
	h := hex.EncodeToString(sum[:5])
	switch field {
	case "email":
		return "user-" + h + "@example.com"
	case "phoneNumber":
		n := new(big.Int).SetBytes(sum[:8])
		return fmt.Sprintf("+1555%07d", n.Mod(n, big.NewInt(10_000_000)).Int64())
	case "displayName":
		return "User " + h
	case "photoURL", "photoUrl":
		return "https://example.com/photo/" + h
	}
	return "redacted-" + h
}

// document redacts the string values of the named fields at any depth.
func (r *redactor) document(d *pb.Document) {
	if len(r.fields) > 0 {
		r.fieldsOf(d.Fields)
	}
}

func (r *redactor) fieldsOf(fields map[string]*pb.Value) {
	for k, v := range fields {
		if s, ok := v.ValueType.(*pb.Value_StringValue); ok && r.fields[k] {
			fields[k] = &pb.Value{ValueType: &pb.Value_StringValue{StringValue: fake(k, s.StringValue)}}
			continue
		}
		r.value(v)
	}
}

func (r *redactor) value(v *pb.Value) {
	switch x := v.ValueType.(type) {
	case *pb.Value_MapValue:
		r.fieldsOf(x.MapValue.Fields)
	case *pb.Value_ArrayValue:
		for _, e := range x.ArrayValue.Values {
			r.value(e)
		}
	}
}

// accounts redacts the named account attributes (email, phoneNumber,
// displayName, photoURL), in the accounts and their providers alike.
func (r *redactor) accounts(users []*account) {
	if len(r.fields) == 0 {
		return
	}
	redact := func(field string, s *string) {
		if *s != "" && r.fields[field] {
			*s = fake(field, *s)
		}
	}
	for _, a := range users {
		redact("email", &a.Email)
		redact("phoneNumber", &a.PhoneNumber)
		redact("displayName", &a.DisplayName)
		redact("photoURL", &a.PhotoURL)
		for _, p := range a.ProviderUserInfo {
			redact("email", &p.Email)
			redact("phoneNumber", &p.PhoneNumber)
			redact("displayName", &p.DisplayName)
			redact("photoURL", &p.PhotoURL)
			if p.ProviderID == "password" || p.ProviderID == "phone" {
				p.UID = firstOf(p.Email, p.PhoneNumber, p.UID)
			}
		}
	}
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

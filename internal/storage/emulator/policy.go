package emulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/storage"
)

// Uploads by HTML form (POST /{bucket}, multipart/form-data), as a signed
// POST policy (@google-cloud/storage's generateSignedPostPolicyV4) sends
// them. loupe cannot check the signature (it is made with the service
// account's private key) but checks what GCS checks of the policy itself:
// its expiration and its conditions on the form's fields. A policy upload is
// owner-level in local mode; strict mode refuses it, having no way to tell
// a signed form from a forged one.

// isPolicyUpload claims POST /{bucket} and /{bucket}/ with a form body.
func isPolicyUpload(r *http.Request) bool {
	bucket := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/")
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && bucket != "" && !strings.Contains(bucket, "/") && ct == "multipart/form-data"
}

// policyHeaders are the form fields that set an object's metadata.
var policyHeaders = map[string]func(*storage.Object) *string{
	"content-type":        func(o *storage.Object) *string { return &o.ContentType },
	"cache-control":       func(o *storage.Object) *string { return &o.CacheControl },
	"content-disposition": func(o *storage.Object) *string { return &o.ContentDisposition },
	"content-encoding":    func(o *storage.Object) *string { return &o.ContentEncoding },
	"content-language":    func(o *storage.Object) *string { return &o.ContentLanguage },
}

// policyUpload stores the form's file as the object its key field names,
// with the metadata of its other fields, and answers as
// success_action_status asks (204 by default, 201 with a PostResponse).
func (s *Service) policyUpload(w http.ResponseWriter, r *http.Request) {
	bucket := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/")
	r.SetPathValue("bucket", bucket) // whose project a token must name
	caller, ok := s.gcsCaller(w, r, "storage.objects.create")
	if !ok {
		return
	}
	if s.env.Credentials.IsStrict() && !caller.Owner {
		xmlError(w, http.StatusForbidden, "AccessDenied", "Signed POST policies cannot be checked under --strict-credentials.")
		return
	}
	_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	mr := multipart.NewReader(r.Body, params["boundary"])
	fields := map[string]string{}
	for {
		part, err := mr.NextPart()
		if err != nil {
			xmlError(w, http.StatusBadRequest, "InvalidArgument", "The form has no file.")
			return
		}
		name := strings.ToLower(part.FormName())
		if part.FileName() == "" && name != "file" {
			value, err := io.ReadAll(io.LimitReader(part, 1<<20))
			if err != nil {
				xmlError(w, http.StatusBadRequest, "InvalidArgument", "The form could not be read.")
				return
			}
			fields[name] = string(value)
			continue
		}
		// The file is the last field: everything it needs has arrived.
		meta, err := policyObject(bucket, fields, part.Header.Get("Content-Type"), time.Now())
		if err != nil {
			xmlError(w, http.StatusBadRequest, "InvalidPolicyDocument", err.Error())
			return
		}
		o, err := s.engine.Create(r.Context(), caller, meta, part, -1)
		if err != nil {
			xmlError(w, httpStatus(err), "InvalidArgument", s.clientMessage(err))
			return
		}
		switch fields["success_action_status"] {
		case "201":
			w.Header().Set("Content-Type", "application/xml; charset=UTF-8")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "<?xml version='1.0' encoding='UTF-8'?><PostResponse><Location>http://"+html.EscapeString(r.Host+"/"+o.Bucket+"/"+o.Name)+
				"</Location><Bucket>"+html.EscapeString(o.Bucket)+"</Bucket><Key>"+html.EscapeString(o.Name)+"</Key><ETag>\""+fmt.Sprintf("%x", o.MD5)+"\"</ETag></PostResponse>")
		case "200":
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
		return
	}
}

// policyObject is the object a form of fields uploads to bucket, once its
// policy (when the form has one) allows the form at now.
func policyObject(bucket string, fields map[string]string, fileType string, now time.Time) (storage.Object, error) {
	if fields["key"] == "" {
		return storage.Object{}, errs.New(errs.InvalidArgument, "The form has no key.")
	}
	if p, ok := fields["policy"]; ok {
		if err := checkPolicy(p, bucket, fields, now); err != nil {
			return storage.Object{}, err
		}
	}
	meta := storage.Object{Bucket: bucket, Name: fields["key"], ContentType: fileType}
	for name, value := range fields {
		if custom, ok := strings.CutPrefix(name, "x-goog-meta-"); ok {
			if meta.Metadata == nil {
				meta.Metadata = map[string]string{}
			}
			meta.Metadata[custom] = value
		} else if dst := policyHeaders[name]; dst != nil {
			*dst(&meta) = strings.TrimSpace(value)
		}
	}
	return meta, nil
}

// checkPolicy checks a base64 POST policy document: not expired at now, and
// each condition met by the form's fields (and the bucket): {"field":
// "value"}, ["eq", "$field", "value"] and ["starts-with", "$field", "prefix"].
// Other conditions (content-length-range) are not checked.
func checkPolicy(encoded, bucket string, fields map[string]string, now time.Time) error {
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return errs.New(errs.InvalidArgument, "The policy is not base64.")
	}
	var policy struct {
		Expiration string            `json:"expiration"`
		Conditions []json.RawMessage `json:"conditions"`
	}
	if err := json.Unmarshal(data, &policy); err != nil {
		return errs.New(errs.InvalidArgument, "The policy is not a JSON policy document.")
	}
	expires, err := time.Parse(time.RFC3339, policy.Expiration)
	if err != nil {
		return errs.Errorf(errs.InvalidArgument, "The policy's expiration %q is not a date.", policy.Expiration)
	}
	if !now.Before(expires) {
		return errs.Errorf(errs.InvalidArgument, "The policy expired at %s.", policy.Expiration)
	}
	value := func(field string) string {
		field = strings.ToLower(strings.TrimPrefix(field, "$"))
		if field == "bucket" {
			return bucket
		}
		return fields[field]
	}
	for _, raw := range policy.Conditions {
		var exact map[string]string
		if json.Unmarshal(raw, &exact) == nil {
			for k, v := range exact {
				if value(k) != v {
					return errs.Errorf(errs.InvalidArgument, "The form does not meet the policy's condition %s.", raw)
				}
			}
			continue
		}
		var cond []any
		if json.Unmarshal(raw, &cond) != nil || len(cond) != 3 {
			return errs.Errorf(errs.InvalidArgument, "The policy's condition %s is not a condition.", raw)
		}
		op, _ := cond[0].(string)
		field, _ := cond[1].(string)
		want, _ := cond[2].(string)
		switch strings.ToLower(op) {
		case "eq":
			if value(field) != want {
				return errs.Errorf(errs.InvalidArgument, "The form does not meet the policy's condition %s.", raw)
			}
		case "starts-with":
			if !strings.HasPrefix(value(field), want) {
				return errs.Errorf(errs.InvalidArgument, "The form does not meet the policy's condition %s.", raw)
			}
		case "content-length-range":
		default:
			return errs.Errorf(errs.InvalidArgument, "The policy's condition %s is not a condition.", raw)
		}
	}
	return nil
}

// xmlError writes an error of the XML API.
func xmlError(w http.ResponseWriter, code int, key, msg string) {
	w.Header().Set("Content-Type", "application/xml; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, "<?xml version='1.0' encoding='UTF-8'?><Error><Code>"+key+"</Code><Message>"+html.EscapeString(msg)+"</Message></Error>")
}

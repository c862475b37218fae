package firestore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// protoNamespace is a protobufjs JSON descriptor: nested namespaces and
// messages with their fields and oneofs.
type protoNamespace struct {
	Nested map[string]*protoNamespace `json:"nested"`
	Fields map[string]struct {
		Type string `json:"type"`
		ID   int    `json:"id"`
	} `json:"fields"`
	Oneofs map[string]struct {
		Oneof []string `json:"oneof"`
	} `json:"oneofs"`
}

// messages returns the messages of ns and of the namespaces below it by
// full name.
func (ns *protoNamespace) messages(prefix string, out map[string]*protoNamespace) {
	for name, sub := range ns.Nested {
		full := strings.TrimPrefix(prefix+"."+name, ".")
		if sub.Fields != nil {
			out[full] = sub
		}
		sub.messages(full, out)
	}
}

// sdkProtos reads the Firestore protos the installed Node SDKs encode
// requests with: the JS SDK's Node build (which embeds them as a JavaScript
// object literal) and the Node Admin SDK's JSON descriptor. It skips the
// test when web/node_modules is absent (`make test` installs it).
func sdkProtos(t *testing.T) map[string]map[string]*protoNamespace {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	modules := filepath.Join(filepath.Dir(file), "..", "..", "web", "node_modules")
	if _, err := os.Stat(modules); err != nil {
		t.Skip("web/node_modules is not installed (npm ci in web/)")
	}
	out := map[string]map[string]*protoNamespace{}
	decode := func(sdk string, data []byte) {
		root := &protoNamespace{}
		if err := json.Unmarshal(data, root); err != nil {
			t.Fatalf("%s descriptor: %v", sdk, err)
		}
		out[sdk] = map[string]*protoNamespace{}
		root.messages("", out[sdk])
	}
	admin, err := os.ReadFile(filepath.Join(modules, "@google-cloud", "firestore", "build", "protos", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	decode("Node Admin SDK", admin)
	builds, _ := filepath.Glob(filepath.Join(modules, "@firebase", "firestore", "dist", "*.node.mjs"))
	key := regexp.MustCompile(`(?m)^(\s*)([A-Za-z_$][\w$]*):`)
	for _, path := range builds {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		const start, end = "const nested = {", "\nvar protos = {"
		i := strings.Index(string(src), start)
		if i < 0 {
			continue
		}
		literal := string(src[i+len(start)-1:])
		literal = strings.TrimSpace(literal[:strings.Index(literal, end)])
		literal = strings.TrimSuffix(literal, ";")
		decode("JS SDK", []byte(`{"nested":`+key.ReplaceAllString(literal, `$1"$2":`)+`}`))
	}
	if out["JS SDK"] == nil {
		t.Fatalf("no Node build of the JS SDK embeds its protos under %s", modules)
	}
	return out
}

// TestSDKProtoFields checks that loupe loses no field the SDKs send: every
// field of every google.firestore.v1 message the installed SDKs declare is
// a field of the Go types requests are decoded into, but Write.verify, which
// the engine reads from the unknown fields; and a Write with each operation
// the SDKs declare, encoded as they encode it, names its document.
func TestSDKProtoFields(t *testing.T) {
	readFromUnknown := map[string]bool{"google.firestore.v1.Write.verify": true}
	for sdk, messages := range sdkProtos(t) {
		for name, m := range messages {
			if !strings.HasPrefix(name, "google.firestore.v1.") {
				continue
			}
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
			if err != nil {
				t.Errorf("%s sends %s, which the Go types lack", sdk, name)
				continue
			}
			for field, f := range m.Fields {
				if readFromUnknown[name+"."+field] {
					continue
				}
				if d.(protoreflect.MessageDescriptor).Fields().ByNumber(protoreflect.FieldNumber(f.ID)) == nil {
					t.Errorf("%s sends %s.%s (field %d), which the Go types lack", sdk, name, field, f.ID)
				}
			}
		}
		write := messages["google.firestore.v1.Write"]
		if write == nil {
			t.Fatalf("%s declares no google.firestore.v1.Write", sdk)
		}
		const doc = "projects/p/databases/(default)/documents/c/d"
		for _, op := range write.Oneofs["operation"].Oneof {
			f := write.Fields[op]
			var value []byte
			switch f.Type {
			case "string":
				value = []byte(doc)
			case "Document":
				value, _ = proto.Marshal(&pb.Document{Name: doc})
			case "DocumentTransform":
				value, _ = proto.Marshal(&pb.DocumentTransform{Document: doc})
			default:
				t.Errorf("%s: Write.%s is a %s, which this test does not know how to encode", sdk, op, f.Type)
				continue
			}
			wire := protowire.AppendBytes(protowire.AppendTag(nil, protowire.Number(f.ID), protowire.BytesType), value)
			w := &pb.Write{}
			if err := proto.Unmarshal(wire, w); err != nil {
				t.Fatalf("%s: decode Write.%s: %v", sdk, op, err)
			}
			if got := writeName(w); got != doc {
				t.Errorf("%s: Write.%s names %q, want %q", sdk, op, got, doc)
			}
		}
	}
}

// TestRestoreVerifies checks that the JSON transports keep verify writes.
func TestRestoreVerifies(t *testing.T) {
	const doc = "projects/p/databases/(default)/documents/c/d"
	body := []byte(`{"writes":[{"verify":"` + doc + `","currentDocument":{"exists":true}},{"delete":"` + doc + `"}]}`)
	req := &pb.CommitRequest{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, req); err != nil {
		t.Fatal(err)
	}
	if err := RestoreVerifies(body, req.Writes); err != nil {
		t.Fatal(err)
	}
	if name, ok := verifyOf(req.Writes[0]); !ok || name != doc || !req.Writes[0].GetCurrentDocument().GetExists() {
		t.Errorf("first write: verify %q %v, precondition %v", name, ok, req.Writes[0].GetCurrentDocument())
	}
	if _, ok := verifyOf(req.Writes[1]); ok || req.Writes[1].GetDelete() != doc {
		t.Errorf("second write: %v", req.Writes[1])
	}
	both := []byte(`{"writes":[{"verify":"` + doc + `","delete":"` + doc + `"}]}`)
	req = &pb.CommitRequest{}
	_ = (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(both, req)
	if err := RestoreVerifies(both, req.Writes); err == nil || !strings.Contains(err.Error(), "oneof field 'operation' is already set") {
		t.Errorf("verify and delete in one write: %v", err)
	}
}

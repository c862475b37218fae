package passthrough

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strings"

	"github.com/loupe-dev/loupe/internal/requestlog"
	"github.com/loupe-dev/loupe/internal/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// rawCodec sends and receives messages in their wire form (server.Encoded),
// so the proxy needs no knowledge of the service's messages.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(server.Encoded)
	if !ok {
		return nil, errors.New("passthrough: not an encoded message")
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	b, ok := v.(*server.Encoded)
	if !ok {
		return errors.New("passthrough: not an encoded message")
	}
	*b = data.Materialize()
	return nil
}

// upstream is the connection gRPC calls are forwarded on: TLS to the
// production host, or plaintext HTTP/2 to --upstream.
func (s *Service) upstream() (*grpc.ClientConn, error) {
	s.connOnce.Do(func() {
		target, creds := firestoreHost+":443", credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
		if s.o.Upstream != "" {
			target, creds = s.o.Upstream, insecure.NewCredentials()
		}
		s.conn, s.connErr = grpc.NewClient(target, grpc.WithTransportCredentials(creds),
			grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)))
	})
	return s.conn, s.connErr
}

// dropped are the incoming metadata keys the forwarded call does not copy:
// the transport sets its own.
func dropped(key string) bool {
	return strings.HasPrefix(key, ":") || strings.HasPrefix(key, "grpc-") ||
		key == "content-type" || key == "user-agent" || key == "te" || key == "host"
}

// proxyGRPC forwards every call of a service's gRPC API to the upstream,
// messages as they are, both ways, with the caller's metadata (less an
// emulator-only credential), and records each call.
func (s *Service) proxyGRPC(service string) grpc.StreamHandler {
	return func(_ any, in grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(in)
		name := method[strings.LastIndex(method, "/")+1:]
		end := s.record(requestlog.Entry{Service: service, Method: name, Path: method},
			name == "Listen" || name == "Write", cmp.Or(s.o.Upstream, firestoreHost))
		err := s.forward(service, method, in)
		code := status.Code(err)
		end(httpStatus(code), "gRPC "+code.String())
		return err
	}
}

func (s *Service) forward(service, method string, in grpc.ServerStream) error {
	conn, err := s.upstream()
	if err != nil {
		return status.Errorf(codes.Unavailable, "loupe passes %s through, but cannot reach the upstream: %v", service, err)
	}
	md, _ := metadata.FromIncomingContext(in.Context())
	out := metadata.MD{}
	for k, v := range md {
		if !dropped(k) {
			out[k] = v
		}
	}
	if auth := md.Get("authorization"); len(auth) > 0 && s.emulatorOnly(auth[0]) {
		delete(out, "authorization")
		s.heldBack(service)
	}
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(in.Context(), out))
	defer cancel()
	up, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	// The caller's messages go up as they come; when the caller half-closes,
	// so does the forwarded call.
	sent := make(chan error, 1)
	go func() {
		for {
			var m server.Encoded
			if err := in.RecvMsg(&m); err != nil {
				if err == io.EOF {
					sent <- up.CloseSend()
				} else {
					sent <- err
				}
				return
			}
			if err := up.SendMsg(m); err != nil {
				sent <- nil // the upstream's answer (RecvMsg below) says why
				return
			}
		}
	}()
	// The upstream's answers come down, headers first.
	if h, err := up.Header(); err == nil && len(h) > 0 {
		if err := in.SendHeader(h); err != nil {
			return err
		}
	}
	for {
		var m server.Encoded
		if err := up.RecvMsg(&m); err != nil {
			in.SetTrailer(up.Trailer())
			if err == io.EOF {
				return nil
			}
			return err
		}
		if err := in.SendMsg(m); err != nil {
			return err
		}
		select {
		case err := <-sent:
			if err != nil { // the caller went away
				return err
			}
		default:
		}
	}
}

// httpStatus is the HTTP status a gRPC code maps to, for the request log.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return 200
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return 400
	case codes.Unauthenticated:
		return 401
	case codes.PermissionDenied:
		return 403
	case codes.NotFound:
		return 404
	case codes.AlreadyExists, codes.Aborted:
		return 409
	case codes.ResourceExhausted:
		return 429
	case codes.Canceled:
		return 499
	case codes.Unimplemented:
		return 501
	case codes.Unavailable:
		return 503
	case codes.DeadlineExceeded:
		return 504
	default:
		return 500
	}
}

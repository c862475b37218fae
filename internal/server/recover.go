package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/loupe-dev/loupe/internal/errs"
	"github.com/loupe-dev/loupe/internal/httpjson"
)

// A panic in a handler ends with its request: the stack unwinds through the
// handler's deferred unlocks, the panic is logged with its stack, and the
// caller gets INTERNAL (HTTP 500, or the gRPC code). net/http's own
// recovery would only drop the connection, and grpc-go's none would end the
// process.

// withRecover answers 500 INTERNAL for a request whose handler panicked
// before it wrote its answer; one that had begun its answer has its
// connection cut (http.ErrAbortHandler), as a half-written answer cannot be
// mended.
func withRecover(next http.Handler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := &answerGuard{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			logger.Error("panic in an HTTP handler", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if g.began {
				panic(http.ErrAbortHandler)
			}
			httpjson.Error(w, errs.New(errs.Internal, "internal error"))
		}()
		next.ServeHTTP(g, r)
	})
}

// answerGuard notes whether a handler has begun its answer. It passes
// Flush, ReadFrom (sendfile) and, through Unwrap, the rest of
// http.ResponseController's methods to the connection's writer.
type answerGuard struct {
	http.ResponseWriter
	began bool
}

func (g *answerGuard) WriteHeader(code int) {
	if code >= 200 {
		g.began = true
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *answerGuard) Write(b []byte) (int, error) {
	g.began = true
	return g.ResponseWriter.Write(b)
}

func (g *answerGuard) Flush() {
	g.began = true
	_ = http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *answerGuard) ReadFrom(r io.Reader) (int64, error) {
	g.began = true
	return io.Copy(g.ResponseWriter, r)
}

func (g *answerGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// recoverUnary turns a panic in a gRPC handler into INTERNAL for that call.
func recoverUnary(logger *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer recoverCall(logger, info.FullMethod, &err)
		return handler(ctx, req)
	}
}

// recoverStream is recoverUnary for streaming calls.
func recoverStream(logger *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer recoverCall(logger, info.FullMethod, &err)
		return handler(srv, ss)
	}
}

func recoverCall(logger *slog.Logger, method string, err *error) {
	if p := recover(); p != nil {
		logger.Error("panic in a gRPC call", "method", method, "panic", p, "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "internal error in %s", method)
	}
}

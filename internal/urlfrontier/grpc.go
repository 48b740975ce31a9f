package urlfrontier

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// ServiceName is the full gRPC service name.
const ServiceName = "urlfrontier.URLFrontier"

// NewGRPCServer returns a gRPC server with s registered, the health service
// (grpc.health.v1: SERVING for "" and ServiceName) and server reflection (so
// grpcurl works), and s's metrics interceptors. The caller serves it on a
// listener and stops it; the returned health server lets it report
// NOT_SERVING while shutting down.
func NewGRPCServer(s *Server, extra ...grpc.ServerOption) (*grpc.Server, *health.Server) {
	opts := []grpc.ServerOption{
		// URLFrontier messages are small; 16 MiB bounds a PutDiscovered
		// batch while leaving room for large ones.
		grpc.MaxRecvMsgSize(16 << 20),
		grpc.MaxConcurrentStreams(1024),
	}
	if m := s.o.Metrics; m != nil {
		opts = append(opts, grpc.ChainUnaryInterceptor(m.UnaryInterceptor()), grpc.ChainStreamInterceptor(m.StreamInterceptor()))
	}
	g := grpc.NewServer(append(opts, extra...)...)
	pb.RegisterURLFrontierServer(g, s)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, hs)
	reflection.Register(g)
	return g, hs
}

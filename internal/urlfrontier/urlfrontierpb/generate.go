// Package urlfrontierpb is the Go code protoc generates from
// urlfrontier.proto, the URLFrontier 2.6 wire API: messages and the gRPC
// client and server interfaces. Do not edit the .pb.go files: edit the
// .proto, run `go generate ./internal/urlfrontier/...` with the pinned
// generators below on PATH, and commit the result; scripts/check-generated
// fails when they drift.
//
// Generators (pinned; install with go install):
//
//	protoc                 Debian protobuf-compiler (3.21.12 when generated)
//	protoc-gen-go          google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	protoc-gen-go-grpc     google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
package urlfrontierpb

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go_opt=Murlfrontier.proto=github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb;urlfrontierpb --go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=Murlfrontier.proto=github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb;urlfrontierpb urlfrontier.proto

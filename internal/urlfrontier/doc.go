// Package urlfrontier serves Courtesy's frontier over the URLFrontier 2.6
// gRPC API (the API StormCrawler and other crawlers use to share a
// frontier; docs/frontier-service.md), and is a client of any such service.
//
//	f, _ := frontier.Open(db, frontier.Options{DefaultDelay: time.Second})
//	srv, _ := urlfrontier.NewServer(urlfrontier.Options{Frontier: f, Nodes: []string{addr}})
//	g, _ := urlfrontier.NewGRPCServer(srv)
//	g.Serve(listener)
//
// The wire types and gRPC stubs are generated into urlfrontierpb from
// urlfrontier.proto, which is written from the published API description
// and wire-compatible with it: clients generated from the upstream file
// work unchanged.
//
// Every RPC maps onto one frontier call (see the frontier package's doc).
// The server adds what the wire needs: crawl-ID normalisation, the default
// key (the host), validation (invalid PutURLs items are acked SKIPPED and
// never end the stream; bad parameters of other RPCs are
// INVALID_ARGUMENT), seconds on the wire and nanoseconds inside, flow
// control on the streaming puts (put.go), per-RPC metrics and the
// courtesy_frontier_* gauges (metrics.go), and per-package log levels for
// SetLogLevel (loglevel.go).
//
// Client (client.go) is the other side: the subset of *frontier.Frontier
// that Courtesy's crawler uses, spoken to a remote service, with retries
// and backoff while the service is unreachable.
package urlfrontier

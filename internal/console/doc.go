// Package console is Courtesy's web console: a JSON API under /api/, a
// live feed of server-sent events and an embedded HTML interface, over a
// crawl, a proxy and the nodes of a cluster.
//
// The console defines the small interfaces it reads and acts through
// (Crawl, Frontier, Politeness, Nodes, Proxy, FetchLog) and mounts on any
// http.ServeMux; whoever runs it supplies what it has. Adapters cover the
// real components: FrontierSource over *frontier.Frontier and
// PolitenessSource over *politeness.Gate with its robots store.
//
//	s, err := console.New(console.Config{Token: tok, Logger: log},
//		console.Sources{Crawl: crawler, Frontier: console.FrontierSource(fr, crawlID),
//			Politeness: console.PolitenessSource(gate, robotsStore)})
//	mux.Handle("/", s.Handler())
//	go s.Run(ctx) // samples the counters every second for the charts
//
// Read-only views need no token. Every action (pause, resume, seeds,
// delays, block, retire, log level) needs the access token in a header,
// refuses cross-origin requests (Origin and Sec-Fetch-Site, so that a page
// of another site cannot drive the console through a person's browser), and
// is logged with who asked and when. docs/console.md documents the API.
package console

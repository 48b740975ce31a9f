package cli

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// consoleFile is the `console:` section of the configuration, shared by
// the commands that serve the web console (crawl, proxy, serve).
type consoleFile struct {
	// Addr is where `courtesy crawl` serves the console (--console).
	Addr string `yaml:"addr"`
	// Token is the access token actions need (--console-token); empty
	// means a random one, printed at start.
	Token string `yaml:"token"`
}

// consoleAddr binds an address without a host to loopback: "9090" and
// ":9090" mean "127.0.0.1:9090". Give "0.0.0.0:9090" to listen on every
// interface.
func consoleAddr(addr string) string {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return ""
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// printConsole prints where the console is and its access token.
func printConsole(w io.Writer, cmd, addr, token string) {
	fmt.Fprintf(w, "courtesy %s: console on http://%s/ (token %s)\n", cmd, addr, token)
}

// aliasFlag is a second name for a flag: setting it sets the first.
type aliasFlag struct{ f *flag.Flag }

func (a aliasFlag) String() string {
	if a.f == nil {
		return ""
	}
	return a.f.Value.String()
}

func (a aliasFlag) Set(v string) error { return a.f.Value.Set(v) }

// withConsole serves the console's page, its files and its API (/,
// /app.js, /style.css, /vendor/..., /api/...) and everything else from
// api (the politeness services, admin API and monitoring, whose paths
// never start with these).
func withConsole(api, cons http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/{$}", "/index.html", "/app.js", "/style.css", "/vendor/", "/api/"} {
		mux.Handle(p, cons)
	}
	mux.Handle("/", api)
	return mux
}

package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/traps"
	"github.com/courtesy-crawler/courtesy/internal/warc"
)

// malformed are answers no HTTP/1.1 parser accepts, each of which a
// server sent after starting a response: the host is up, the page is at
// fault.
var malformed = map[string]string{
	"/bad-chunk":     "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n<htm\r\nzz\r\n",
	"/no-last-chunk": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n<html>\r\n",
	"/short":         "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n<html>",
	"/bad-length":    "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n<html>",
	"/long-header":   "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("z", 300<<10) + "\r\n\r\n",
	"/garbage":       "SSH-2.0-OpenSSH_9.6\r\n",
}

// serveMalformed serves robots.txt, a home page linking to every
// malformed answer and then to good pages, each answer on a connection
// closed after it.
func serveMalformed(t *testing.T, good int) string {
	t.Helper()
	return rawServer(t, func(c net.Conn, req *http.Request, _ <-chan struct{}) {
		page := func(body string) string {
			return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		}
		var a string
		switch p := req.URL.Path; {
		case p == "/":
			var b strings.Builder
			for m := range malformed {
				fmt.Fprintf(&b, `<a href="%s">m</a>`, m)
			}
			for i := range good {
				fmt.Fprintf(&b, `<a href="/good%d">g</a>`, i)
			}
			a = page("<html><body>" + b.String() + "</body></html>")
		case malformed[p] != "":
			a = malformed[p]
		default:
			a = page("<html><body>" + p + "</body></html>")
		}
		io.WriteString(c, a)
	})
}

// rawServer answers each request on its own connection, closed after the
// answer (at most 10 s): robots.txt with a 404 (all allowed), the rest
// with answer, which writes the raw response; done is closed when the
// test ends. It returns the server's address.
func rawServer(t *testing.T, answer func(c net.Conn, req *http.Request, done <-chan struct{})) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(c))
				switch {
				case err != nil:
				case req.URL.Path == "/robots.txt":
					io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
				default:
					answer(c, req, done)
				}
			})
		}
	})
	return ln.Addr().String()
}

// TestMalformedResponsesKeepHost crawls a site whose first pages answer
// with responses cut short or mis-framed (a bad chunk size, a missing last
// chunk, a body shorter than its Content-Length, a bad Content-Length, a
// header over the limit, a non-HTTP answer), more of them than
// max-host-failures. Each is the page's failure: it is retried and
// logged, and the site's good pages are crawled. Before, each counted as a
// host-level failure like a refused connection, the host was retired
// after five, and its good pages were never fetched.
func TestMalformedResponsesKeepHost(t *testing.T) {
	t.Parallel()
	const good = 5
	addr := serveMalformed(t, good)
	res, err := resolve.New([]string{"odd.test=" + addr})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: 30 * time.Second,
		MaxHostFailures: 3, RetryDelay: 20 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	sum := runCrawl(t, cfg, res, "http://odd.test/")
	if !sum.Finished || len(sum.Retired) != 0 {
		t.Errorf("finished %v, retired %v; want finished, none retired", sum.Finished, sum.Retired)
	}
	got := map[string]crawllog.Entry{}
	for _, e := range logEntries(t, dir) {
		got[e.URL] = e
	}
	for i := range good {
		if u := fmt.Sprintf("http://odd.test/good%d", i); got[u].Status != 200 {
			t.Errorf("%s: status %d, want 200", u, got[u].Status)
		}
	}
	for m := range malformed {
		e, ok := got["http://odd.test"+m]
		if !ok || e.Status >= 0 {
			t.Errorf("%s: logged %v, status %d; want a line with a failure status", m, ok, e.Status)
		}
	}
}

// TestUndecodableBodyNotTruncated crawls pages whose content coding cannot
// be undone (a gzip stream corrupt after its header, a coding nobody
// knows) though every byte arrived: their WARC response records hold the
// whole body, so they carry no WARC-Truncated field (WARC 1.1 §5.13: the
// content block was truncated), only the metadata record's note. Before,
// they were marked "unspecified" as if bytes were missing.
func TestUndecodableBodyNotTruncated(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, strings.Repeat("<p>page</p>", 100))
	zw.Close()
	corrupt := append(gz.Bytes()[:20:20], "garbage"...)
	bodies := map[string]struct {
		coding string
		body   []byte
	}{
		"/corrupt.html": {"gzip", corrupt},
		"/zstd.html":    {"zstd", []byte("(\xb5/\xfd whatever")},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if b, ok := bodies[r.URL.Path]; ok {
			w.Header().Set("Content-Encoding", b.coding)
			w.Write(b.body)
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `<html><body><a href="/corrupt.html">c</a><a href="/zstd.html">z</a></body></html>`)
	}))
	defer srv.Close()
	res, err := resolve.New([]string{"gz.test=" + srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runCrawl(t, Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: 30 * time.Second}, res, "http://gz.test/")
	seen := map[string]bool{}
	for _, p := range mustGlob(t, filepath.Join(dir, "warc", "*.warc.gz")) {
		readWARC(t, p, func(rec *warc.Record) {
			b, ok := bodies[strings.TrimPrefix(rec.Header.TargetURI(), "http://gz.test")]
			if !ok || rec.Header.Type() != warc.TypeResponse {
				return
			}
			seen[rec.Header.TargetURI()] = true
			if tr := rec.Header.Get(warc.HeaderTruncated); tr != "" {
				t.Errorf("%s: WARC-Truncated %q, want none", rec.Header.TargetURI(), tr)
			}
			if !bytes.HasSuffix(rec.Block, b.body) {
				t.Errorf("%s: record does not end with the %d bytes sent", rec.Header.TargetURI(), len(b.body))
			}
		})
	}
	if len(seen) != len(bodies) {
		t.Errorf("response records for %v, want %d", seen, len(bodies))
	}
}

// TestRetiredURLsCounted: a host whose pages stop answering is retired
// with URLs still in its queue; the summary counts them (they have no
// crawl.log line), where before it said "0 still queued" and nothing else.
func TestRetiredURLsCounted(t *testing.T) {
	t.Parallel()
	const dead = 6
	addr := rawServer(t, func(c net.Conn, req *http.Request, _ <-chan struct{}) {
		if req.URL.Path != "/" {
			return // every page: closed without a word
		}
		var b strings.Builder
		for i := range dead {
			fmt.Fprintf(&b, `<a href="/p%d">p</a>`, i)
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", b.Len(), b.String())
	})
	res, err := resolve.New([]string{"dying.test=" + addr})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Delay: -1, Workers: 2, MaxDuration: 30 * time.Second,
		MaxHostFailures: 2, RetryDelay: 20 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	sum := runCrawl(t, cfg, res, "http://dying.test/")
	if sum.Retired["dying.test"] == "" || sum.Queued != 0 || sum.RetiredURLs == 0 {
		t.Errorf("retired %v, queued %d, retired URLs %d; want dying.test retired, none queued, its URLs counted",
			sum.Retired, sum.Queued, sum.RetiredURLs)
	}
}

// TestHalfHeaderRetiresHost: a server that starts every page's header and
// never finishes it is slow, not answering: its timeouts count toward
// max-host-failures (unlike a malformed answer) and the host is retired.
func TestHalfHeaderRetiresHost(t *testing.T) {
	t.Parallel()
	addr := rawServer(t, func(c net.Conn, req *http.Request, done <-chan struct{}) {
		if req.URL.Path == "/" {
			body := `<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/d">d</a>`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Ty")
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	})
	res, err := resolve.New([]string{"slowhead.test=" + addr})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataDir: t.TempDir(), Delay: -1, Workers: 2, MaxDuration: 30 * time.Second,
		MaxHostFailures: 2, RetryDelay: 20 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond,
		Traps: traps.Limits{MaxDownloadTime: 200 * time.Millisecond}}
	sum := runCrawl(t, cfg, res, "http://slowhead.test/")
	if sum.Retired["slowhead.test"] == "" {
		t.Errorf("retired %v; want slowhead.test retired", sum.Retired)
	}
}

package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

var testNow = time.Date(2026, 11, 22, 9, 30, 15, 123456789, time.UTC)

func fixedClock() time.Time { return testNow }

func testOptions(t *testing.T) Options {
	t.Helper()
	return Options{Dir: t.TempDir(), Prefix: "test", Hostname: "host", Port: 8443, Now: fixedClock}
}

const (
	reqBytes  = "GET /page HTTP/1.1\r\nHost: example.com\r\nUser-Agent: courtesy-test\r\n\r\n"
	respHead  = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 27\r\n\r\n"
	respBody  = "<html><p>hello</p></html>\n\n"
	chunkHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunkBody = "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n"
)

func exchange(url string) *Exchange {
	return &Exchange{
		URL: url, IP: "127.0.0.1", Date: testNow.Add(-time.Second),
		Request: []byte(reqBytes), ResponseHeader: []byte(respHead), Body: []byte(respBody),
		Metadata: []Field{{"hopsFromSeed", "L"}, {"fetchTimeMs", "12"}},
	}
}

// readAll reads every record of path with digest verification.
func readAll(t *testing.T, path string) []*Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f, ReaderOptions{VerifyDigests: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []*Record
	for range 100000 {
		rec, err := r.ReadRecord()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, len(out), err)
		}
		out = append(out, rec)
	}
	t.Fatal("too many records")
	return nil
}

func TestWriteExchangeRoundTrip(t *testing.T) {
	ctx := context.Background()
	opts := testOptions(t)
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.WriteExchange(ctx, exchange("http://example.com/page"))
	if err != nil {
		t.Fatal(err)
	}
	// SHA-1 of respBody, base32 (computed with Python's hashlib).
	if want := "sha1:KA56I3534RNN6F6GFGKJPNREZL446NVU"; res.PayloadDigest != want {
		t.Errorf("payload digest %s, want %s", res.PayloadDigest, want)
	}
	if res.Status != 200 || res.MIME != "text/html" {
		t.Errorf("status/mime = %d %q", res.Status, res.MIME)
	}
	ex := exchange("http://example.com/copy")
	ex.Revisit = &Revisit{TargetURI: "http://example.com/page", Date: testNow.Add(-time.Second), RecordID: res.Response.RecordID}
	ex.Metadata = nil
	ex.Request = nil
	rv, err := w.WriteExchange(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	if rv.PayloadDigest != res.PayloadDigest {
		t.Errorf("revisit digest %s, want %s", rv.PayloadDigest, res.PayloadDigest)
	}
	tr := exchange("http://example.com/big")
	tr.Truncated = TruncatedLength
	if _, err := w.WriteExchange(ctx, tr); err != nil {
		t.Fatal(err)
	}
	resource := &Record{Block: []byte("plain text")}
	resource.Header.Add(HeaderType, string(TypeResource))
	resource.Header.Add(HeaderTargetURI, "urn:test:resource")
	resource.Header.Add(HeaderContentType, "text/plain")
	if _, err := w.WriteRecord(ctx, resource); err != nil {
		t.Fatal(err)
	}
	open, _ := filepath.Glob(filepath.Join(opts.Dir, "*.warc.gz.open"))
	if len(open) != 1 {
		t.Fatalf("before Close: open files %v, want 1", open)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteRecord(ctx, resource); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v, want ErrClosed", err)
	}
	files := w.Files()
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	name := filepath.Base(files[0])
	pat := fmt.Sprintf(`^test-20261122093015123-00000-%d~host~8443\.warc\.gz$`, os.Getpid())
	if !regexp.MustCompile(pat).MatchString(name) {
		t.Errorf("file name %q does not match %s", name, pat)
	}
	if open, _ := filepath.Glob(filepath.Join(opts.Dir, "*.open")); len(open) != 0 {
		t.Errorf("open files left: %v", open)
	}

	recs := readAll(t, files[0])
	var types []string
	for _, r := range recs {
		types = append(types, string(r.Header.Type()))
	}
	want := "warcinfo response request metadata revisit response request metadata resource"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("types:\n got %s\nwant %s", got, want)
	}
	info := recs[0]
	if info.Header.Get(HeaderFilename) != name || !bytes.Contains(info.Block, []byte("software: ")) {
		t.Errorf("warcinfo: %+v %q", info.Header, info.Block)
	}
	infoID := info.Header.RecordID()
	idRe := regexp.MustCompile(`^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$`)
	seen := map[string]bool{}
	for i, r := range recs {
		id := r.Header.RecordID()
		if !idRe.MatchString(id) || seen[id] {
			t.Errorf("record %d: bad or repeated id %q", i, id)
		}
		seen[id] = true
		if i > 0 && r.Header.Get(HeaderWarcinfoID) != infoID {
			t.Errorf("record %d: Warcinfo-ID %q, want %q", i, r.Header.Get(HeaderWarcinfoID), infoID)
		}
		if r.Header.Version != "1.1" {
			t.Errorf("record %d: version %q", i, r.Header.Version)
		}
	}
	resp, req, meta := recs[1], recs[2], recs[3]
	checks := []struct {
		name, got, want string
	}{
		{"response date", resp.Header.Get(HeaderDate), "2026-11-22T09:30:14.123456Z"},
		{"response uri", resp.Header.TargetURI(), "http://example.com/page"},
		{"response ip", resp.Header.Get(HeaderIPAddress), "127.0.0.1"},
		{"response content-type", resp.Header.Get(HeaderContentType), ContentTypeResponse},
		{"response block", string(resp.Block), respHead + respBody},
		{"response truncated", resp.Header.Get(HeaderTruncated), ""},
		{"request concurrent", req.Header.Get(HeaderConcurrentTo), resp.Header.RecordID()},
		{"request content-type", req.Header.Get(HeaderContentType), ContentTypeRequest},
		{"request block", string(req.Block), reqBytes},
		{"metadata concurrent", meta.Header.Get(HeaderConcurrentTo), resp.Header.RecordID()},
		{"metadata block", string(meta.Block), "hopsFromSeed: L\r\nfetchTimeMs: 12\r\n"},
		{"revisit profile", recs[4].Header.Get(HeaderProfile), ProfileIdenticalPayload},
		{"revisit refers uri", recs[4].Header.Get(HeaderRefersToURI), "http://example.com/page"},
		{"revisit refers date", recs[4].Header.Get(HeaderRefersToDate), "2026-11-22T09:30:14.123456Z"},
		{"revisit refers to", recs[4].Header.Get(HeaderRefersTo), res.Response.RecordID},
		{"revisit payload", recs[4].Header.Get(HeaderPayloadDigest), res.PayloadDigest},
		{"revisit block", string(recs[4].Block), respHead},
		{"truncated", recs[5].Header.Get(HeaderTruncated), "length"},
		{"resource date", recs[8].Header.Get(HeaderDate), "2026-11-22T09:30:15.123456Z"},
		{"resource digest", recs[8].Header.Get(HeaderBlockDigest), Digest([]byte("plain text"))},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}

	// The CDXJ index: response, revisit, response, resource, sorted.
	f, err := os.Open(files[0] + ".cdxj")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := cdxj.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Fatalf("cdxj entries %d, want 4: %+v", len(entries), entries)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Key > entries[i].Key {
			t.Errorf("cdxj not sorted: %q > %q", entries[i-1].Key, entries[i].Key)
		}
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		// Every entry's offset and length address exactly its record.
		r, err := NewReader(bytes.NewReader(raw[e.Offset:e.Offset+e.Length]), ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := r.Next()
		if err != nil {
			t.Fatalf("entry %+v: %v", e, err)
		}
		if h.TargetURI() != e.URL || e.Filename != name || e.Timestamp != Timestamp14(testNow.Add(-time.Second)) && h.Type() != TypeResource {
			t.Errorf("entry %+v does not match record %s %s", e, h.Type(), h.TargetURI())
		}
		switch h.Type() {
		case TypeRevisit:
			if e.MIME != "warc/revisit" || e.Status != 200 {
				t.Errorf("revisit entry %+v", e)
			}
		case TypeResponse:
			if e.MIME != "text/html" || e.Status != 200 || e.Digest != res.PayloadDigest {
				t.Errorf("response entry %+v", e)
			}
		}
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("entry %+v: length covers more than one record: %v", e, err)
		}
	}
}

func TestPayloadDigest(t *testing.T) {
	tests := []struct {
		name, header, body, want string
	}{
		{"plain", respHead, respBody, Digest([]byte(respBody))},
		{"chunked", chunkHead, chunkBody, Digest([]byte("hello, world"))},
		{"chunked-broken", chunkHead, "zz\r\nhello", Digest([]byte("zz\r\nhello"))},
		{"gzip-kept", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n", "\x1f\x8b\x08rest", Digest([]byte("\x1f\x8b\x08rest"))},
		{"empty", "HTTP/1.1 204 No Content\r\n\r\n", "", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PayloadDigest([]byte(tc.header), []byte(tc.body)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestChunkedExchangeVerifies(t *testing.T) {
	opts := testOptions(t)
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	ex := &Exchange{URL: "http://example.com/c", ResponseHeader: []byte(chunkHead), Body: []byte(chunkBody)}
	res, err := w.WriteExchange(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	if res.PayloadDigest != Digest([]byte("hello, world")) {
		t.Errorf("digest %s", res.PayloadDigest)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, w.Files()[0]) // VerifyDigests dechunks too
	if len(recs) != 2 {
		t.Errorf("records %d, want 2", len(recs))
	}
}

func TestExchangeValidate(t *testing.T) {
	good := func() *Exchange { return exchange("http://example.com/") }
	tests := []struct {
		name   string
		mutate func(*Exchange)
	}{
		{"no-url", func(e *Exchange) { e.URL = "" }},
		{"space-url", func(e *Exchange) { e.URL = "http://a b/" }},
		{"no-header", func(e *Exchange) { e.ResponseHeader = nil }},
		{"bad-ip", func(e *Exchange) { e.IP = "999.1.1.1" }},
		{"bad-truncated", func(e *Exchange) { e.Truncated = "because" }},
		{"revisit-no-date", func(e *Exchange) { e.Revisit = &Revisit{TargetURI: "http://x/"} }},
		{"metadata-newline", func(e *Exchange) { e.Metadata = []Field{{"a", "b\r\nWARC-Type: x"}} }},
		{"metadata-bad-name", func(e *Exchange) { e.Metadata = []Field{{"a b", "c"}} }},
	}
	w, err := NewWriter(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ex := good()
			tc.mutate(ex)
			if _, err := w.WriteExchange(context.Background(), ex); !errors.Is(err, ErrExchange) {
				t.Errorf("got %v, want ErrExchange", err)
			}
		})
	}
	// Header injection through WriteRecord is refused too.
	rec := &Record{}
	rec.Header.Add(HeaderType, "resource")
	rec.Header.Add("X-Evil", "a\r\nWARC-Type: response")
	if _, err := w.WriteRecord(context.Background(), rec); err == nil {
		t.Error("CRLF in a header value accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.WriteExchange(ctx, good()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"zero-with-dir", Options{Dir: "x"}, true},
		{"no-dir", Options{}, false},
		{"bad-prefix", Options{Dir: "x", Prefix: "a/b"}, false},
		{"bad-host", Options{Dir: "x", Hostname: "a~b"}, false},
		{"bad-port", Options{Dir: "x", Port: 70000}, false},
		{"bad-level", Options{Dir: "x", Level: 10}, false},
		{"negative-size", Options{Dir: "x", MaxFileBytes: -1}, false},
		{"small-members-level-1", Options{Dir: "x", Level: 1, SmallMemberBytes: 1 << 16}, true},
		{"small-members-level-6", Options{Dir: "x", SmallMemberBytes: 1 << 16}, false},
		{"small-members-negative", Options{Dir: "x", Level: 1, SmallMemberBytes: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	opts := testOptions(t)
	opts.MaxFileBytes = 2000
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	for i := range n {
		if _, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://example.com/%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) < 3 {
		t.Fatalf("only %d files with a 2000-byte cap", len(files))
	}
	responses := 0
	for i, f := range files {
		if !strings.Contains(f, fmt.Sprintf("-%05d-", i)) {
			t.Errorf("file %d name %s: serial not %05d", i, f, i)
		}
		recs := readAll(t, f)
		if recs[0].Header.Type() != TypeWarcinfo {
			t.Errorf("%s does not start with warcinfo", f)
		}
		// Exchanges are never split: request and metadata follow their
		// response in the same file.
		if (len(recs)-1)%3 != 0 {
			t.Errorf("%s holds %d records after warcinfo, not whole exchanges", f, len(recs)-1)
		}
		for _, r := range recs {
			if r.Header.Type() == TypeResponse {
				responses++
			}
		}
		if _, err := os.Stat(f + ".cdxj"); err != nil {
			t.Errorf("no index: %v", err)
		}
	}
	if responses != n {
		t.Errorf("%d responses, want %d", responses, n)
	}
}

func TestMaxFileRecords(t *testing.T) {
	opts := testOptions(t)
	opts.MaxFileRecords = 4 // warcinfo + one exchange
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://example.com/%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(w.Files()); got != 3 {
		t.Errorf("%d files, want 3", got)
	}
}

func TestConcurrentWriters(t *testing.T) {
	opts := testOptions(t)
	opts.MaxFileBytes = 20000
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.example/%d", g, i))); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					if err := w.Flush(); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	uris := map[string]bool{}
	for _, f := range w.Files() {
		for _, r := range readAll(t, f) {
			if r.Header.Type() == TypeResponse {
				uris[r.Header.TargetURI()] = true
			}
		}
	}
	if len(uris) != workers*each {
		t.Errorf("%d distinct responses, want %d", len(uris), workers*each)
	}
}

func TestStreams(t *testing.T) {
	opts := testOptions(t)
	s, err := NewStreams(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"news", "sport", "news"} {
		w, err := s.Writer(topic)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteExchange(context.Background(), exchange("http://example.com/"+topic)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Writer("../x"); err == nil {
		t.Error("bad topic accepted")
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]int{"news": 2, "sport": 1} {
		files, _ := filepath.Glob(filepath.Join(opts.Dir, "test-"+topic+"-*.warc.gz"))
		if len(files) != 1 {
			t.Fatalf("topic %s: files %v", topic, files)
		}
		n := 0
		for _, r := range readAll(t, files[0]) {
			if r.Header.Type() == TypeResponse {
				n++
			}
		}
		if n != want {
			t.Errorf("topic %s: %d responses, want %d", topic, n, want)
		}
	}
	if _, err := s.Writer("news"); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v", err)
	}
}

func TestHeaderMethods(t *testing.T) {
	var h Header
	h.Add("A", "1")
	h.Add("b", "2")
	h.Add("a", "3")
	if h.Get("a") != "1" || !h.Has("B") || h.Has("c") {
		t.Errorf("get/has: %+v", h)
	}
	h.Set("A", "x")
	if len(h.Fields) != 2 || h.Fields[0] != (Field{"A", "x"}) {
		t.Errorf("set: %+v", h.Fields)
	}
	h.Set("c", "4")
	h.Del("b")
	if got := fmt.Sprint(h.Fields); got != "[{A x} {c 4}]" {
		t.Errorf("fields %s", got)
	}
}

func TestDates(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"micro", testNow, "2026-11-22T09:30:15.123456Z"},
		{"second", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05Z"},
		{"zone", time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), "2026-01-02T02:04:05Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := FormatDate(tc.in)
			if s != tc.want {
				t.Errorf("FormatDate = %s, want %s", s, tc.want)
			}
			back, err := ParseDate(s)
			if err != nil || !back.Equal(tc.in.Truncate(time.Microsecond)) {
				t.Errorf("ParseDate(%s) = %v, %v", s, back, err)
			}
		})
	}
	if _, err := ParseDate("yesterday"); err == nil {
		t.Error("bad date parsed")
	}
}

func TestHTTPHeader(t *testing.T) {
	h := map[string][]string{"Content-Type": {"text/html"}, "Set-Cookie": {"a=1", "b=2\r\nX: y"}}
	got := string(HTTPHeader("HTTP/1.1 200 OK", h))
	want := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2  X: y\r\n\r\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

package testweb

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"
)

func TestAppendEntryIsJSON(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 0, 0, 123456789, time.UTC)
	tests := []struct {
		name string
		e    Entry
	}{
		{"plain", Entry{Start: start, End: start.Add(time.Millisecond), Method: "GET", Host: "site-0001.test", Target: "/a?b=c", Client: "127.0.0.1:5000", Status: 200, Bytes: 2048, UserAgent: "courtesy/0.1 (+http://example.test/bot)"}},
		{"quotes and backslashes", Entry{Start: start, End: start, Host: `a"b\c`, UserAgent: `say "hi" \o/`}},
		{"control characters", Entry{Start: start, End: start, UserAgent: "tab\tnl\ncr\rnul\x00del\x7f"}},
		{"unicode", Entry{Start: start, End: start, UserAgent: "bøt/1 ☃ 🕷"}},
		{"html characters", Entry{Start: start, End: start, Target: "/<script>&amp;"}},
		{"proxy form", Entry{Start: start, End: start, Proxy: true, Status: 421}},
		{"non-UTC times", Entry{Start: start.In(time.FixedZone("x", 3600)), End: start.Add(time.Second).In(time.FixedZone("y", -7200))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := AppendEntry(nil, &tc.e)
			if !bytes.HasSuffix(line, []byte("}\n")) || bytes.Count(line, []byte("\n")) != 1 {
				t.Fatalf("not one line: %q", line)
			}
			if !json.Valid(line) {
				t.Fatalf("invalid JSON: %s", line)
			}
			got, err := ParseEntry(line)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Start.Equal(tc.e.Start) || !got.End.Equal(tc.e.End) || got.Host != tc.e.Host || got.Target != tc.e.Target ||
				got.UserAgent != tc.e.UserAgent || got.Status != tc.e.Status || got.Bytes != tc.e.Bytes || got.Proxy != tc.e.Proxy ||
				got.Method != tc.e.Method || got.Client != tc.e.Client {
				t.Errorf("round trip: got %+v, want %+v", got, tc.e)
			}
		})
	}
	// Invalid UTF-8 becomes U+FFFD and the line stays valid JSON.
	line := AppendEntry(nil, &Entry{Start: start, End: start, UserAgent: "bad\xffbyte"})
	got, err := ParseEntry(line)
	if err != nil || got.UserAgent != "bad\ufffdbyte" {
		t.Errorf("invalid UTF-8: %q, %v", got.UserAgent, err)
	}
}

func TestParseEntryErrors(t *testing.T) {
	tests := []struct{ name, line string }{
		{"empty", ""},
		{"not an object", `[1,2]`},
		{"broken JSON", `{"start":`},
		{"no times", `{"host":"a"}`},
		{"end before start", `{"start":"2026-01-01T00:00:01Z","end":"2026-01-01T00:00:00Z"}`},
		{"bad time", `{"start":"yesterday","end":"2026-01-01T00:00:00Z"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseEntry([]byte(tc.line)); err == nil || !strings.HasPrefix(err.Error(), "testweb: ") {
				t.Errorf("error %v, want a testweb error", err)
			}
		})
	}
}

func TestReadLog(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	for i := 0; i < 3; i++ {
		buf.Write(AppendEntry(nil, &Entry{Start: start, End: start, Status: 200 + i}))
	}
	full := buf.String()
	tests := []struct {
		name    string
		log     string
		entries int
		wantErr bool
	}{
		{"whole", full, 3, false},
		{"blank lines", "\n" + strings.ReplaceAll(full, "\n", "\n\n"), 3, false},
		{"cut last line", full + `{"start":"2026-11-22T09:0`, 3, false},
		{"last line without newline", strings.TrimSuffix(full, "\n"), 3, false},
		{"garbage in the middle", strings.Replace(full, "\n", "\nnot json\n", 1), 1, true},
		{"line too long", `{"x":"` + strings.Repeat("a", MaxLogLine) + "\"}\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := ReadLog(strings.NewReader(tc.log), func(Entry) error { n++; return nil })
			if (err != nil) != tc.wantErr || n != tc.entries {
				t.Errorf("ReadLog: %d entries, err %v; want %d, error %v", n, err, tc.entries, tc.wantErr)
			}
		})
	}
	stop := errors.New("stop")
	if err := ReadLog(strings.NewReader(full), func(Entry) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error not returned: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for the Log's flusher and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogFlushesPeriodicallyAndOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		l := NewLog(&out)
		l.Record(&Entry{Start: time.Now(), End: time.Now(), Host: "a.test"})
		if out.String() != "" {
			t.Fatal("written before any flush")
		}
		time.Sleep(FlushInterval + time.Millisecond)
		synctest.Wait()
		if !strings.Contains(out.String(), `"host":"a.test"`) {
			t.Fatal("not flushed after FlushInterval")
		}
		l.Record(&Entry{Start: time.Now(), End: time.Now(), Host: "b.test"})
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"host":"b.test"`) {
			t.Fatal("not flushed on Close")
		}
		l.Record(&Entry{Host: "c.test"}) // after Close: ignored
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "c.test") || l.Entries() != 2 {
			t.Errorf("recorded after Close (entries %d)", l.Entries())
		}
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestLogReportsWriteErrors(t *testing.T) {
	l := NewLog(failWriter{})
	l.Record(&Entry{Start: time.Now(), End: time.Now()})
	if err := l.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close() = %v, want the write error", err)
	}
}

func TestLoggedHandlerRecords(t *testing.T) {
	w := mustNew(t, Config{})
	var mem Memory
	srv := httptest.NewServer(w.LoggedHandler(&mem))
	defer srv.Close()
	proxy, _ := url.Parse(srv.URL)
	client := &http.Client{
		Transport:     &http.Transport{Proxy: http.ProxyURL(proxy)},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	for _, u := range []string{"http://Hub.Test/", "http://redirects.test/r/301?x=1", "http://nowhere.example/"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", "testbot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// The handler records an entry after the response is flushed, so the
	// client can finish before the server has logged: wait (bounded) for
	// all three, then order them by start time.
	es := mem.Entries()
	for deadline := time.Now().Add(5 * time.Second); len(es) < 3 && time.Now().Before(deadline); es = mem.Entries() {
		time.Sleep(5 * time.Millisecond)
	}
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3", len(es))
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
	tests := []struct {
		host, target string
		status       int
	}{
		{"Hub.Test", "/", 200},
		{"redirects.test", "/r/301?x=1", 301},
		{"nowhere.example", "/", 421},
	}
	for i, tc := range tests {
		e := es[i]
		if e.Host != tc.host || e.Target != tc.target || e.Status != tc.status || !e.Proxy || e.UserAgent != "testbot/1.0" ||
			e.Method != "GET" || !strings.HasPrefix(e.Client, "127.0.0.1:") || e.End.Before(e.Start) || e.Bytes <= 0 {
			t.Errorf("entry %d = %+v", i, e)
		}
	}
	home := body(t, get(t, w.Handler(), "http://hub.test/"))
	if es[0].Bytes != int64(len(home)) {
		t.Errorf("bytes %d, body is %d", es[0].Bytes, len(home))
	}
	m := Memory{Limit: 1}
	m.Record(&es[0])
	m.Record(&es[1])
	if len(m.Entries()) != 1 || m.Dropped() != 1 {
		t.Errorf("Memory limit: %d kept, %d dropped", len(m.Entries()), m.Dropped())
	}
}

func FuzzParseEntry(f *testing.F) {
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	f.Add(AppendEntry(nil, &Entry{Start: start, End: start.Add(time.Second), Host: "a.test", Target: "/", Status: 200}))
	f.Add([]byte(`{"start":"2026-11-22T09:00:00Z","end":"2026-11-22T09:00:00Z","ua":"\u0000"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseEntry(line)
		if err != nil {
			return
		}
		// What parses re-encodes to a line that parses to the same entry.
		again, err := ParseEntry(AppendEntry(nil, &e))
		if err != nil {
			t.Fatalf("re-encoded entry does not parse: %v", err)
		}
		if !again.Start.Equal(e.Start) || !again.End.Equal(e.End) || again.Host != e.Host || again.Target != e.Target ||
			again.UserAgent != e.UserAgent || again.Status != e.Status || again.Bytes != e.Bytes {
			t.Fatalf("round trip changed %+v into %+v", e, again)
		}
	})
}

func FuzzAppendEntry(f *testing.F) {
	f.Add("site-0001.test", "/a?b", "courtesy/1.0", int64(0))
	f.Add("a\"b", "\x00\n", "\xff\xfe", int64(-1))
	f.Fuzz(func(t *testing.T, host, target, ua string, ns int64) {
		start := time.Unix(0, ns%(1<<62)).UTC()
		e := Entry{Start: start, End: start, Host: host, Target: target, UserAgent: ua, Status: 200}
		line := AppendEntry(nil, &e)
		if !json.Valid(line) {
			t.Fatalf("invalid JSON %q", line)
		}
		if start.Year() < 0 || start.Year() > 9999 {
			return // RFC 3339 cannot carry the year
		}
		got, err := ParseEntry(line)
		if err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if utf8.ValidString(host) && got.Host != host || utf8.ValidString(ua) && got.UserAgent != ua ||
			utf8.ValidString(target) && got.Target != target {
			t.Fatalf("round trip: %+v", got)
		}
	})
}

// Lookup and the handler accept anything without panicking, and agree on
// the status.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"/", "/robots.txt", "/calendar/2026/11/30/", "/a/a/", "/pub/?C=M;O=D", "/item/9",
		"/?PHPSESSID=0123456789abcdef", "/hidden/orphan-1.html", "/%zz", "/docs/a/page-1.html", "/chain/5", "?",
		"/sitemaps/b.xml.gz", "/private/page-1.html"} {
		f.Add("site-0000.test", s, "")
		f.Add("calendar.test", s, "gzip")
	}
	f.Add("x.wild.test", "/", "")
	f.Add("Dirlist.Test:80", "/pub/docs/?N=D&C=S", "")
	f.Add("compressed.test", "/", "br;q=0.5, gzip;q=0")
	f.Add("session.test", "/docs/a/page-1.html?PHPSESSID=0123456789abcdef", "x")
	w, err := New(Config{SlowDelay: time.Nanosecond, EndlessBytes: 1000, EndlessTime: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	h := w.Handler()
	// header is sent as Accept-Encoding and as the PHPSESSID cookie.
	f.Fuzz(func(t *testing.T, host, target, header string) {
		r := w.Lookup(host, target)
		if (r.Site == nil) != (r.Class == ClassUnknownHost) {
			t.Fatalf("site %v for class %s", r.Site, r.Class)
		}
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \x00\r\n#") || strings.ContainsAny(host, " /?#@\\%\x00\r\n") || host == "" {
			return // not something an HTTP request line can carry
		}
		u := "http://" + host + target
		if _, err := url.ParseRequestURI(u); err != nil {
			return
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		req.URL, _ = url.ParseRequestURI(target)
		req.RequestURI = target
		if req.URL == nil {
			return
		}
		req.Header.Set("Accept-Encoding", header)
		req.AddCookie(&http.Cookie{Name: "PHPSESSID", Value: strings.Map(func(r rune) rune {
			if r < 0x21 || r > 0x7e || r == '"' || r == ';' || r == '\\' || r == ',' {
				return -1
			}
			return r
		}, header)})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := w.Lookup(host, req.URL.RequestURI()); rec.Code != got.Status && got.Class != ClassUnknownHost {
			t.Fatalf("served %d, Lookup says %d (%s)", rec.Code, got.Status, got.Class)
		}
	})
}

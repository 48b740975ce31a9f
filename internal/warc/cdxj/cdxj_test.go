package cdxj

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSURT(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"basic", "http://example.com/", "com,example)/"},
		{"www-case-port-fragment", "http://www.Example.com:80/A/b?z=1&a=2#top", "com,example)/a/b?a=2&z=1"},
		{"https-default-port", "https://sub.example.co.uk:443/x", "uk,co,example,sub)/x"},
		{"other-port", "http://example.com:8080/", "com,example:8080)/"},
		{"no-path", "http://example.com", "com,example)/"},
		{"userinfo", "http://user:pw@example.com/p", "com,example)/p"},
		{"www2", "http://www2.example.com/", "com,example)/"},
		{"ip", "http://127.0.0.1:8081/p?q", "127.0.0.1:8081)/p?q"},
		{"session", "http://example.com/p?jsessionid=abc&x=1&PHPSESSID=2", "com,example)/p?x=1"},
		{"trailing-dot", "http://example.com./", "com,example)/"},
		{"escaped", "http://example.com/a%20b", "com,example)/a%20b"},
		{"dns", "dns:example.com", "dns:example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SURT(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("SURT(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "/relative", "http://[::1", strings.Repeat("a", MaxURLBytes+1)} {
		if got, err := SURT(bad); err == nil {
			t.Errorf("SURT(%.20q) = %q, want error", bad, got)
		}
	}
}

func TestLineRoundTrip(t *testing.T) {
	e := Entry{Timestamp: "20261122093015", URL: "http://example.com/a?b=1", MIME: "text/html", Status: 200,
		Digest: "sha1:KA56I3534RNN6F6GFGKJPNREZL446NVU", Length: 1234, Offset: 567, Filename: "f.warc.gz"}
	line, err := e.Line()
	if err != nil {
		t.Fatal(err)
	}
	want := `com,example)/a?b=1 20261122093015 {"url":"http://example.com/a?b=1","mime":"text/html","status":"200","digest":"KA56I3534RNN6F6GFGKJPNREZL446NVU","length":"1234","offset":"567","filename":"f.warc.gz"}`
	if line != want {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
	back, err := Parse(line + "\n")
	if err != nil {
		t.Fatal(err)
	}
	e.Key = "com,example)/a?b=1"
	if back != e {
		t.Errorf("parse: %+v, want %+v", back, e)
	}
	// Numbers instead of strings (other writers) parse too.
	n, err := Parse(`com,example)/ 20260101000000 {"url":"http://example.com/","status":301,"length":10,"offset":0}`)
	if err != nil || n.Status != 301 || n.Length != 10 {
		t.Errorf("numeric json: %+v %v", n, err)
	}
}

// TestDigestField checks the digest as pywb and warcio index it: a SHA-1
// digest without its "sha1:" label in the line, the label back in Entry.
func TestDigestField(t *testing.T) {
	const b32 = "KA56I3534RNN6F6GFGKJPNREZL446NVU"
	tests := []struct {
		name, entry, line, parsed string
	}{
		{"sha1", "sha1:" + b32, b32, "sha1:" + b32},
		{"sha1-upper-label", "SHA1:" + b32, b32, "sha1:" + b32},
		{"sha256-kept", "sha256:abcd", "sha256:abcd", "sha256:abcd"},
		{"bare", b32, b32, "sha1:" + b32},
		{"short-bare-kept", "AAAA", "AAAA", "AAAA"},
		{"none", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Entry{Timestamp: "20261122093015", URL: "http://example.com/", Digest: tc.entry, Filename: "f.warc.gz"}
			line, err := e.Line()
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]string
			if err := json.Unmarshal([]byte(line[strings.IndexByte(line, '{'):]), &raw); err != nil {
				t.Fatal(err)
			}
			if raw["digest"] != tc.line {
				t.Errorf("line digest %q, want %q", raw["digest"], tc.line)
			}
			back, err := Parse(line)
			if err != nil || back.Digest != tc.parsed {
				t.Errorf("parsed digest %q, %v; want %q", back.Digest, err, tc.parsed)
			}
		})
	}
	// An index written before the label was dropped still parses.
	old, err := Parse(`com,example)/ 20261122093015 {"url":"http://example.com/","digest":"sha1:` + b32 + `","length":"1","offset":"0","filename":"f"}`)
	if err != nil || old.Digest != "sha1:"+b32 {
		t.Errorf("labelled digest parsed as %q, %v", old.Digest, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, line string }{
		{"empty", ""},
		{"no-json", "com,example)/ 20260101000000"},
		{"short-ts", `com,example)/ 2026 {}`},
		{"bad-json", `com,example)/ 20260101000000 {`},
		{"neg-length", `com,example)/ 20260101000000 {"length":"-1"}`},
		{"bad-status", `com,example)/ 20260101000000 {"status":"abc"}`},
		{"huge-status", `com,example)/ 20260101000000 {"status":"1000"}`},
		{"long", "k 20260101000000 " + strings.Repeat("x", MaxLineBytes)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if e, err := Parse(tc.line); err == nil {
				t.Errorf("parsed %+v", e)
			}
		})
	}
	if _, err := (Entry{URL: "http://x/", Timestamp: "1"}).Line(); err == nil {
		t.Error("bad timestamp formatted")
	}
}

func TestWriteSorted(t *testing.T) {
	entries := []Entry{
		{Timestamp: "20260102000000", URL: "http://b.example/"},
		{Timestamp: "20260101000000", URL: "http://a.example/z"},
		{Timestamp: "20260101000000", URL: "http://a.example/"},
		{Timestamp: "20250101000000", URL: "http://a.example/"},
	}
	var b bytes.Buffer
	if err := Write(&b, entries); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(&b)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range got {
		keys = append(keys, e.Key+" "+e.Timestamp)
	}
	want := "example,a)/ 20250101000000|example,a)/ 20260101000000|example,a)/z 20260101000000|example,b)/ 20260102000000"
	if strings.Join(keys, "|") != want {
		t.Errorf("order %s", strings.Join(keys, "|"))
	}
	if err := Write(&b, []Entry{{URL: "::", Timestamp: "20260101000000"}}); err == nil {
		t.Error("bad url written")
	}
	if _, err := ReadAll(strings.NewReader("bad line\n")); err == nil {
		t.Error("bad line read")
	}
}

// The index file is readable by all, like the WARC files beside it.
func TestWriteFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.cdxj")
	if err := WriteFile(path, []Entry{{Timestamp: "20260101000000", URL: "http://a.example/"}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if m, _ := filepath.Glob(path + ".tmp*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`com,example)/ 20261122093015 {"url":"http://example.com/","status":"200","length":"1","offset":"0","filename":"f"}`)
	f.Add(`k 20260101000000 {"status":1e300}`)
	f.Fuzz(func(t *testing.T, line string) {
		e, err := Parse(line)
		if err != nil {
			return
		}
		if e.Length < 0 || e.Offset < 0 || e.Status < 0 || e.Status > 999 {
			t.Fatalf("out of range: %+v", e)
		}
	})
}

func FuzzSURT(f *testing.F) {
	f.Add("http://www.Example.com:80/A/b?z=1&a=2#top")
	f.Add("dns:x")
	f.Fuzz(func(t *testing.T, u string) {
		s, err := SURT(u)
		if err != nil {
			return
		}
		if strings.ContainsAny(s, " \r\n") && !strings.HasPrefix(s, "dns:") {
			// Keys must not break the line format; Line rejects them.
			if _, err := (Entry{Key: s, Timestamp: "20260101000000", URL: u}).Line(); err == nil {
				t.Fatalf("key %q with whitespace formatted", s)
			}
		}
	})
}

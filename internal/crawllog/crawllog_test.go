package crawllog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	logTime   = time.Date(2026, 11, 22, 9, 30, 15, 123_000_000, time.UTC)
	fetchTime = time.Date(2026, 11, 22, 9, 30, 14, 900_000_000, time.UTC)
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{
			name: "fetched-duplicate",
			e: Entry{Time: logTime, Status: 200, Size: 11429, URL: "http://example.com/a", Path: "LL",
				Via: "http://example.com/", MIME: "text/html; charset=utf-8", Thread: 7,
				FetchStart: fetchTime, FetchDuration: 223 * time.Millisecond,
				Digest: "sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW", Annotations: []string{AnnotationDuplicateDigest, Tries(2)}},
			want: "2026-11-22T09:30:15.123Z   200      11429 http://example.com/a LL http://example.com/ text/html #007 20261122093014900+223 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - duplicate:digest,2t",
		},
		{
			name: "seed-robots-blocked",
			e:    Entry{Time: logTime, Status: StatusRobotsDisallowed, Size: -1, URL: "http://example.com/private", Source: "http://example.com/", Annotations: []string{AnnotationRobotsDisallow}},
			want: "2026-11-22T09:30:15.123Z -9998          - http://example.com/private - - - #000 - - http://example.com/ robots:disallowed",
		},
		{
			name: "space-in-url",
			e:    Entry{Time: logTime, Status: StatusDNSFailed, Size: -1, URL: "http://bad host/", Thread: 1234},
			want: "2026-11-22T09:30:15.123Z    -1          - http://bad%20host/ - - - #1234 - - - -",
		},
		{
			name: "zero-time-uses-clock",
			e:    Entry{Status: 404, Size: 0, URL: "http://example.com/x", Path: "L"},
			want: "2026-11-22T09:30:15.123Z   404          0 http://example.com/x L - - #000 - - - -",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.e.Format(logTime)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestFormatErrors(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
	}{
		{"no-url", Entry{}},
		{"bad-path", Entry{URL: "u", Path: "LQ"}},
		{"bad-annotation", Entry{URL: "u", Annotations: []string{"a b"}}},
		{"comma-annotation", Entry{URL: "u", Annotations: []string{"a,b"}}},
		{"empty-annotation", Entry{URL: "u", Annotations: []string{""}}},
		{"negative-thread", Entry{URL: "u", Thread: -1}},
		{"too-many-annotations", Entry{URL: "u", Annotations: strings.Split(strings.Repeat("a,", MaxAnnotations)+"a", ",")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.e.Format(logTime); !errors.Is(err, ErrBadLine) {
				t.Errorf("got %v, want ErrBadLine", err)
			}
		})
	}
}

func TestHopPathShortened(t *testing.T) {
	long := strings.Repeat("L", 60) + "E"
	got, err := hopPath(long)
	if err != nil {
		t.Fatal(err)
	}
	if want := "11+" + strings.Repeat("L", 49) + "E"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Shortening an already shortened path adds up.
	again, err := hopPath("5+" + long)
	if err != nil || !strings.HasPrefix(again, "16+") {
		t.Errorf("got %s %v", again, err)
	}
}

func TestRoundTrip(t *testing.T) {
	entries := []Entry{
		{Time: logTime, Status: 200, Size: 11429, URL: "http://example.com/a", Path: "LLRE", Via: "http://example.com/",
			MIME: "text/html", Thread: 7, FetchStart: fetchTime, FetchDuration: 223 * time.Millisecond,
			Digest: "sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW", Source: "seed", Annotations: []string{"duplicate:digest", "size-truncated"}},
		{Time: logTime, Status: StatusOutOfScope, Size: -1, URL: "http://other.example/", Thread: 3},
	}
	for i, e := range entries {
		line, err := e.Format(logTime)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(line + "\n")
		if err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		if fmt.Sprintf("%+v", back) != fmt.Sprintf("%+v", e) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, back, e)
		}
	}
	// Heritrix's own lines (from its documentation) parse, extra column
	// ignored.
	h := "2011-06-23T17:12:09.591Z   200      15829 http://www.identitytheory.com/etexts/poetics.html L http://www.identitytheory.com/ text/html #025 20110623171208546+922 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - - {\"warcFilename\":\"x\"}"
	e, err := Parse(h)
	if err != nil || e.Size != 15829 || e.Thread != 25 || e.FetchDuration != 922*time.Millisecond || e.Path != "L" {
		t.Errorf("heritrix line: %+v %v", e, err)
	}
}

func TestParseErrors(t *testing.T) {
	good := "2026-11-22T09:30:15.123Z   200      11429 http://example.com/a LL http://example.com/ text/html #007 20261122093014900+223 sha1:X - -"
	tests := []struct {
		name, line string
	}{
		{"short", "2026-11-22T09:30:15.123Z 200"},
		{"bad-time", strings.Replace(good, "2026-11-22T09", "yesterday", 1)},
		{"bad-status", strings.Replace(good, " 200 ", " abc ", 1)},
		{"bad-size", strings.Replace(good, "11429", "-5", 1)},
		{"bad-path", strings.Replace(good, " LL ", " LZ ", 1)},
		{"bad-thread", strings.Replace(good, "#007", "007", 1)},
		{"bad-fetch", strings.Replace(good, "20261122093014900+223", "2026+223", 1)},
		{"bad-duration", strings.Replace(good, "+223", "+x", 1)},
		{"huge-duration", strings.Replace(good, "+223", "+99999999999999999", 1)},
		{"long", good + strings.Repeat("x", MaxLineBytes)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if e, err := Parse(tc.line); !errors.Is(err, ErrBadLine) {
				t.Errorf("got %+v %v, want ErrBadLine", e, err)
			}
		})
	}
}

func TestWriterConcurrentAndResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.log")
	w, err := Create(path, Options{Now: func() time.Time { return logTime }, BufferBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				e := &Entry{Status: 200, Size: int64(i), URL: fmt.Sprintf("http://h%d.example/%d", g, i), Thread: g}
				if err := w.Log(e); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Log(&Entry{URL: "u"}); err == nil {
		t.Error("log after close accepted")
	}
	// A machine crash leaves a partial line; the reopened log cuts it.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("2026-11-22T09:30:15.123Z   200   12")
	f.Close()
	w, err = Create(path, Options{Now: func() time.Time { return logTime }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Log(&Entry{Status: 200, Size: 1, URL: "http://after.example/"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScanner(bytes.NewReader(data))
	urls := map[string]bool{}
	bad := 0
	for range workers*each + 10 {
		e, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrBadLine) {
			bad++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		urls[e.URL] = true
	}
	if len(urls) != workers*each+1 || bad != 0 || !urls["http://after.example/"] {
		t.Errorf("read %d urls, %d bad lines; want %d and 0", len(urls), bad, workers*each+1)
	}
}

func TestScannerLongLine(t *testing.T) {
	good := "2026-11-22T09:30:15.123Z   200          1 http://example.com/ - - - #000 - - - -\n"
	data := good + strings.Repeat("x", MaxLineBytes+10) + "\n" + good
	s := NewScanner(strings.NewReader(data))
	var results []string
	for range 10 {
		_, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		results = append(results, fmt.Sprint(err))
	}
	if len(results) != 3 || results[0] != "<nil>" || !strings.Contains(results[1], "line 2") || results[2] != "<nil>" {
		t.Errorf("results %q", results)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("2026-11-22T09:30:15.123Z   200      11429 http://example.com/a LL http://example.com/ text/html #007 20261122093014900+223 sha1:X - duplicate:digest")
	f.Add("2026-11-22T09:30:15.123Z -9998 - u 3+L - - #1 - - - -")
	f.Fuzz(func(t *testing.T, line string) {
		e, err := Parse(line)
		if err != nil {
			return
		}
		// What parses formats again and parses to the same entry.
		out, err := e.Format(e.Time)
		if err != nil {
			return // e.g. an annotation list with an empty element
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if back.Status != e.Status || back.Size != e.Size || back.URL != e.URL || back.Thread != e.Thread {
			t.Fatalf("round trip changed %+v to %+v", e, back)
		}
	})
}

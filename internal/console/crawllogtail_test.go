package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
)

func TestCrawlLogTail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crawl.log")
	w, err := crawllog.Create(path, crawllog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for i, u := range []string{"http://a.test/1", "http://b.test/1", "http://A.test/2", "http://a.test/3"} {
		e := &crawllog.Entry{Time: at.Add(time.Duration(i) * time.Second), Status: 200, Size: int64(100 * i), URL: u, MIME: "text/html",
			FetchStart: at, FetchDuration: 20 * time.Millisecond}
		if err := w.Log(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := CrawlLogTail{Path: path}.Recent("a.test", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].URL != "http://a.test/3" || got[1].URL != "http://A.test/2" || got[0].Size != 300 || got[0].Duration != 20*time.Millisecond {
		t.Errorf("Recent = %+v", got)
	}
	// A tail that starts mid-line drops the partial line.
	b, _ := os.ReadFile(path)
	lines := strings.Count(string(b), "\n")
	got, _ = CrawlLogTail{Path: path, Bytes: int64(len(b)) - 5}.Recent("a.test", 10)
	if len(got) != 2 || lines != 4 {
		t.Errorf("partial tail: %d fetches (file of %d lines), want 2", len(got), lines)
	}
	if got, err := (CrawlLogTail{Path: filepath.Join(t.TempDir(), "none")}).Recent("a.test", 5); err != nil || len(got) != 0 {
		t.Errorf("missing file: %v, %v", got, err)
	}
	if got := tailFetches([]byte("garbage\n\n  \nno\n"), false, "a.test", 5); len(got) != 0 {
		t.Errorf("garbage gave %v", got)
	}
}

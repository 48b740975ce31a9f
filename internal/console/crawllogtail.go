package console

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/crawllog"
)

// CrawlLogTail reads a host's recent fetches from the end of a crawl.log.
type CrawlLogTail struct {
	// Path is the crawl.log file.
	Path string
	// Bytes is how much of the file's end is read. Default 1 MiB.
	Bytes int64
}

// Recent returns up to n lines about host from the file's last Bytes,
// newest first. A missing file gives none.
func (t CrawlLogTail) Recent(host string, n int) ([]Fetch, error) {
	f, err := os.Open(t.Path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("console: crawl log: %w", err)
	}
	defer f.Close()
	size := t.Bytes
	if size <= 0 {
		size = 1 << 20
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("console: crawl log: %w", err)
	}
	off := max(st.Size()-size, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("console: crawl log: %w", err)
	}
	return tailFetches(buf, off > 0, host, n), nil
}

// tailFetches parses the lines of buf (dropping the first, cut, one when
// partial) about host, newest first, at most n.
func tailFetches(buf []byte, partial bool, host string, n int) []Fetch {
	if partial {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			return nil
		}
	}
	host = strings.ToLower(host)
	var out []Fetch
	for len(buf) > 0 && len(out) < n {
		i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
		line := buf[i+1:]
		buf = buf[:i+1]
		if i < 0 {
			buf = nil
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			continue
		}
		e, err := crawllog.Parse(string(line))
		if err != nil {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil || strings.ToLower(u.Hostname()) != host {
			continue
		}
		out = append(out, Fetch{Time: e.Time, Status: e.Status, Size: e.Size, URL: e.URL, MIME: e.MIME,
			Duration: e.FetchDuration, Notes: e.Annotations})
	}
	return out
}

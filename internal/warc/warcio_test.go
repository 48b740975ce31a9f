package warc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/warc/cdxj"
)

// repoRoot walks up from the test's working directory to go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	t.Fatal("repository root (go.mod) not found above the working directory")
	return ""
}

// warcioRecord is one line of tools/warcio/read.mjs.
type warcioRecord struct {
	Offset                int64   `json:"offset"`
	Length                int64   `json:"length"`
	Type                  string  `json:"type"`
	URI                   *string `json:"uri"`
	Status                *int    `json:"status"`
	SURT                  *string `json:"surt"`
	ContentLength         int64   `json:"contentLength"`
	BlockLength           int64   `json:"blockLength"`
	BlockDigest           *string `json:"blockDigest"`
	BlockDigestComputed   string  `json:"blockDigestComputed"`
	BlockDigestOK         *bool   `json:"blockDigestOK"`
	PayloadDigest         *string `json:"payloadDigest"`
	PayloadDigestComputed *string `json:"payloadDigestComputed"`
	PayloadDigestOK       *bool   `json:"payloadDigestOK"`
}

// runWarcio reads path with the independent warcio.js reader.
func runWarcio(t *testing.T, path string) []warcioRecord {
	t.Helper()
	root := repoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found (%v): run scripts/install-test-deps (needs node and npm)", err)
	}
	dir := filepath.Join(root, "tools", "warcio")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "warcio", "package.json")); err != nil {
		t.Fatalf("npm package warcio missing in tools/warcio (%v): run scripts/install-test-deps", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "read.mjs"), path)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio reader failed: %v\n%s", err, stderr.String())
	}
	var recs []warcioRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r warcioRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("warcio output %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if stderr.Len() > 0 {
		// warcio warns on stderr about malformed records (e.g. "Content-Length
		// Too Small"); our files must not cause any.
		t.Errorf("warcio warnings:\n%s", stderr.String())
	}
	return recs
}

// TestWarcioCrossCheck writes every record type and has warcio.js read the
// file back: record count, types, target URIs, offsets and lengths, and
// both digests (recomputed by the script) must agree with what we wrote.
// TestWarcioCrossCheck has warcio read what the writer wrote, with members
// from klauspost/compress (level 6) and from gzmember (level 1, as the
// crawler writes).
func TestWarcioCrossCheck(t *testing.T) {
	for _, small := range []int{0, DefaultSmallMemberBytes} {
		t.Run(fmt.Sprintf("small-member-bytes=%d", small), func(t *testing.T) {
			opts := testOptions(t)
			if small > 0 {
				opts.Level, opts.SmallMemberBytes = 1, small
			}
			warcioCrossCheck(t, opts)
		})
	}
}

func warcioCrossCheck(t *testing.T, opts Options) {
	ctx := context.Background()
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.WriteExchange(ctx, exchange("http://example.com/page"))
	if err != nil {
		t.Fatal(err)
	}
	rv := exchange("http://www.example.com/copy?b=2&a=1")
	rv.Revisit = &Revisit{TargetURI: "http://example.com/page", Date: testNow, RecordID: first.Response.RecordID}
	if _, err := w.WriteExchange(ctx, rv); err != nil {
		t.Fatal(err)
	}
	// warcio.js does not skip chunked trailers, so this body has none (the
	// trailer case is covered by TestPayloadDigest).
	ch := &Exchange{URL: "https://example.org:8443/chunked", IP: "::1", ResponseHeader: []byte(chunkHead),
		Body:    []byte("5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n"),
		Request: []byte("GET /chunked HTTP/1.1\r\nHost: example.org:8443\r\n\r\n")}
	if _, err := w.WriteExchange(ctx, ch); err != nil {
		t.Fatal(err)
	}
	post := exchange("http://example.net/form")
	post.Request = []byte("POST /form HTTP/1.1\r\nHost: example.net\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nq=hello")
	post.Truncated = TruncatedTime
	if _, err := w.WriteExchange(ctx, post); err != nil {
		t.Fatal(err)
	}
	res := &Record{Block: []byte("resource body\n")}
	res.Header.Add(HeaderType, string(TypeResource))
	res.Header.Add(HeaderTargetURI, "http://example.com/resource.txt")
	res.Header.Add(HeaderContentType, "text/plain")
	res.Header.Add(HeaderPayloadDigest, Digest(res.Block))
	if _, err := w.WriteRecord(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := w.Files()[0]

	ours := readAll(t, path)
	theirs := runWarcio(t, path)
	if len(theirs) != len(ours) {
		t.Fatalf("warcio read %d records, we wrote %d", len(theirs), len(ours))
	}
	ms, err := scanMembers(ctx, mustOpen(t, path))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for i, o := range ours {
		th := theirs[i]
		types[th.Type]++
		if th.Type != string(o.Header.Type()) {
			t.Errorf("record %d: warcio type %s, ours %s", i, th.Type, o.Header.Type())
		}
		uri := o.Header.TargetURI()
		if (th.URI == nil && uri != "") || (th.URI != nil && *th.URI != uri) {
			t.Errorf("record %d: warcio uri %v, ours %q", i, th.URI, uri)
		}
		if th.ContentLength != int64(len(o.Block)) || th.BlockLength != int64(len(o.Block)) {
			t.Errorf("record %d: warcio length %d/%d, ours %d", i, th.ContentLength, th.BlockLength, len(o.Block))
		}
		if th.Offset != ms[i].start || th.Length != ms[i].end-ms[i].start {
			t.Errorf("record %d: warcio offset/length %d/%d, members %d/%d", i, th.Offset, th.Length, ms[i].start, ms[i].end-ms[i].start)
		}
		if th.BlockDigest == nil || *th.BlockDigest != o.Header.Get(HeaderBlockDigest) || th.BlockDigestOK == nil || !*th.BlockDigestOK {
			t.Errorf("record %d (%s): block digest: warcio %v computed %s, ours %s", i, th.Type, th.BlockDigest, th.BlockDigestComputed, o.Header.Get(HeaderBlockDigest))
		}
		if pd := o.Header.Get(HeaderPayloadDigest); pd != "" && o.Header.Type() != TypeRevisit {
			if th.PayloadDigestComputed == nil || *th.PayloadDigestComputed != pd || th.PayloadDigestOK == nil || !*th.PayloadDigestOK {
				t.Errorf("record %d (%s %s): payload digest ours %s, warcio computed %v", i, th.Type, uri, pd, th.PayloadDigestComputed)
			}
		}
		if o.Header.Type() == TypeResponse || o.Header.Type() == TypeRevisit {
			if th.Status == nil || *th.Status != 200 {
				t.Errorf("record %d: warcio status %v, want 200", i, th.Status)
			}
		}
		if th.SURT != nil {
			if key, err := cdxj.SURT(uri); err != nil || key != *th.SURT {
				t.Errorf("record %d: SURT ours %q (%v), warcio %q", i, key, err, *th.SURT)
			}
		}
	}
	want := map[string]int{"warcinfo": 1, "response": 3, "request": 4, "metadata": 3, "revisit": 1, "resource": 1}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("warcio saw %d %s records, want %d (all: %v)", types[k], k, v, types)
		}
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

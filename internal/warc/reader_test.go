package warc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSample writes a file with every record type and returns its bytes.
func writeSample(t *testing.T) []byte {
	t.Helper()
	w, err := NewWriter(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if _, err := w.WriteExchange(ctx, exchange(fmt.Sprintf("http://example.com/%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.Files()[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gunzipAll returns the decompressed bytes of a multi-member file.
func gunzipAll(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func gzipOne(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// summary reads all records and returns "type uri" lines and offsets.
func summary(data []byte, opts ReaderOptions) ([]string, []int64, error) {
	r, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		return nil, nil, err
	}
	var lines []string
	var offs []int64
	for range 10000 {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return lines, offs, nil
		}
		if err != nil {
			return lines, offs, err
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return lines, offs, err
		}
		lines = append(lines, string(h.Type())+" "+h.TargetURI())
		offs = append(offs, r.Offset())
	}
	return lines, offs, errors.New("too many records")
}

func TestReaderFormats(t *testing.T) {
	gz := writeSample(t)
	plain := gunzipAll(t, gz)
	want, _, err := summary(gz, ReaderOptions{VerifyDigests: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 10 {
		t.Fatalf("%d records, want 10: %v", len(want), want)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"uncompressed", plain},
		{"one-gzip-stream", gzipOne(t, plain)},
		{"lf-only-trailers", bytes.ReplaceAll(plain, []byte("\r\n\r\nWARC/1.1"), []byte("\n\nWARC/1.1"))},
		{"extra-blank-lines", bytes.ReplaceAll(plain, []byte("\r\n\r\nWARC/1.1"), []byte("\r\n\r\n\r\n\r\nWARC/1.1"))},
		{"missing-final-trailer", bytes.TrimSuffix(plain, []byte("\r\n\r\n"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := summary(tc.data, ReaderOptions{VerifyDigests: true})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestReaderOffsets(t *testing.T) {
	gz := writeSample(t)
	_, offs, err := summary(gz, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := scanMembers(context.Background(), bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(offs) {
		t.Fatalf("%d members, %d records", len(ms), len(offs))
	}
	for i := range ms {
		if ms[i].start != offs[i] {
			t.Errorf("record %d at %d, member at %d", i, offs[i], ms[i].start)
		}
	}
	plain := gunzipAll(t, gz)
	_, offs, err = summary(plain, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range offs {
		if !bytes.HasPrefix(plain[o:], []byte("WARC/1.1\r\n")) {
			t.Errorf("uncompressed record %d offset %d does not start a record", i, o)
		}
	}
}

func TestReaderEmpty(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("\r\n\r\n")} {
		got, _, err := summary(data, ReaderOptions{})
		if err != nil || len(got) != 0 {
			t.Errorf("%q: %v %v", data, got, err)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	gz := writeSample(t)
	plain := gunzipAll(t, gz)
	first := func(s string) []byte { return []byte(s) }
	rec := func(header, block string) []byte {
		return []byte("WARC/1.1\r\n" + header + "\r\n" + block + "\r\n\r\n")
	}
	tests := []struct {
		name string
		data []byte
		opts ReaderOptions
		want error
	}{
		{"gzip-cut", gz[:len(gz)-10], ReaderOptions{}, ErrTruncated},
		{"gzip-cut-header", gz[:len(gz)-len(gz)/3], ReaderOptions{}, ErrTruncated},
		{"plain-cut-block", plain[:len(plain)-100], ReaderOptions{}, ErrTruncated},
		{"plain-cut-header", plain[:20], ReaderOptions{}, ErrTruncated},
		{"not-warc", first("HTTP/1.1 200 OK\r\n\r\n"), ReaderOptions{}, ErrFormat},
		{"no-length", rec("WARC-Type: resource\r\n", ""), ReaderOptions{}, ErrFormat},
		{"bad-length", rec("Content-Length: -5\r\n", ""), ReaderOptions{}, ErrFormat},
		{"huge-length", rec("Content-Length: 99999999999999999\r\n", ""), ReaderOptions{}, ErrTooLarge},
		{"bad-field", rec("No colon here\r\nContent-Length: 0\r\n", ""), ReaderOptions{}, ErrFormat},
		{"continuation-first", rec(" folded\r\nContent-Length: 0\r\n", ""), ReaderOptions{}, ErrFormat},
		{"long-line", rec("X: "+strings.Repeat("a", 200)+"\r\nContent-Length: 0\r\n", ""), ReaderOptions{MaxLineBytes: 64}, ErrTooLarge},
		{"many-fields", rec(strings.Repeat("X: 1\r\n", 10)+"Content-Length: 0\r\n", ""), ReaderOptions{MaxHeaderFields: 5}, ErrTooLarge},
		{"big-header", rec(strings.Repeat("X: 1234567890\r\n", 20)+"Content-Length: 0\r\n", ""), ReaderOptions{MaxHeaderBytes: 100}, ErrTooLarge},
		{"block-digest", rec("Content-Length: 3\r\nWARC-Block-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n", "abc"), ReaderOptions{VerifyDigests: true}, ErrDigest},
		{"block-digest-garbage", rec("Content-Length: 3\r\nWARC-Block-Digest: sha1:!!\r\n", "abc"), ReaderOptions{VerifyDigests: true}, ErrDigest},
		{"no-trailer", []byte("WARC/1.1\r\nContent-Length: 1\r\n\r\naXXWARC/1.1\r\n"), ReaderOptions{}, ErrFormat},
		{"gzip-garbage-after", append(append([]byte{}, gz...), 0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0), ReaderOptions{}, ErrFormat},
		{"gzip-header-cut-after", append(append([]byte{}, gz...), 0x1f, 0x8b, 8), ReaderOptions{}, ErrTruncated},
		{"blank-flood", append(append([]byte{}, plain...), bytes.Repeat([]byte("\r\n"), 100)...), ReaderOptions{}, ErrFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := summary(tc.data, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReaderDigestsPass(t *testing.T) {
	// sha256 in hex and base32, and unknown algorithms, are accepted.
	tests := []struct{ name, digest string }{
		{"sha256-hex", "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"sha256-base32", "sha256:XJ4BNP4PAHH6UQKBIDPF3LRCEOYAGYNDSYLXVHFUCD7WD4QACWWQ===="},
		{"unknown", "md5:900150983cd24fb0d6963f7d28e17f72"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte("WARC/1.1\r\nContent-Length: 3\r\nWARC-Block-Digest: " + tc.digest + "\r\n\r\nabc\r\n\r\n")
			if _, _, err := summary(data, ReaderOptions{VerifyDigests: true}); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestReadRecordLimits(t *testing.T) {
	data := []byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 10\r\n\r\n0123456789\r\n\r\n" +
		"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 2\r\n\r\nok\r\n\r\n")
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{MaxBlockBytes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadRecord(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big block: %v", err)
	}
	rec, err := r.ReadRecord()
	if err != nil || string(rec.Block) != "ok" {
		t.Fatalf("next after skip: %v %+v", err, rec)
	}
	// A wrong payload digest is caught by ReadRecord.
	bad := []byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Type: application/http;msgtype=response\r\n" +
		"WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\nContent-Length: 23\r\n\r\nHTTP/1.1 200 OK\r\n\r\nbody\r\n\r\n")
	r, _ = NewReader(bytes.NewReader(bad), ReaderOptions{VerifyDigests: true})
	if _, err := r.ReadRecord(); !errors.Is(err, ErrDigest) {
		t.Errorf("payload digest: %v", err)
	}
}

func TestFolding(t *testing.T) {
	data := []byte("WARC/1.0\r\nWARC-Type: resource\r\nX-Long: a\r\n\tb\r\n  c\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
	r, _ := NewReader(bytes.NewReader(data), ReaderOptions{})
	h, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("x-long") != "a b c" || h.Version != "1.0" {
		t.Errorf("folded header %+v", h)
	}
}

// TestRecover simulates SIGKILL at every point of the last record: the file
// is cut there, left as .open, and Recover must keep exactly the complete
// records.
func TestRecover(t *testing.T) {
	ctx := context.Background()
	gz := writeSample(t)
	ms, err := scanMembers(ctx, bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	last := ms[len(ms)-1]
	cuts := []int64{0, 5, ms[0].end, ms[1].end - 1, ms[1].end, last.start + 1, last.start + 30, last.end - 8, last.end - 1, last.end}
	for _, cut := range cuts {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			dir := t.TempDir()
			name := "x-20261122093015123-00000-1~h~0.warc.gz"
			if err := os.WriteFile(filepath.Join(dir, name+OpenSuffix), gz[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			// An unrelated finished file is left alone.
			if err := os.WriteFile(filepath.Join(dir, "other.warc.gz"), []byte("junk"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Recover(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			complete := 0
			for _, m := range ms {
				if m.end <= cut {
					complete++
				}
			}
			if len(res) != 1 || res[0].Records != complete {
				t.Fatalf("result %+v, want %d records", res, complete)
			}
			if open, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(open) != 0 {
				t.Errorf("open files left: %v", open)
			}
			if complete == 0 {
				if res[0].Path != "" {
					t.Errorf("empty file kept as %s", res[0].Path)
				}
				return
			}
			recs := readAll(t, res[0].Path)
			if len(recs) != complete {
				t.Errorf("%d records readable, want %d", len(recs), complete)
			}
			idx, err := os.ReadFile(res[0].Path + ".cdxj")
			if err != nil {
				t.Fatal(err)
			}
			responses := 0
			for _, r := range recs {
				if r.Header.Type() == TypeResponse {
					responses++
				}
			}
			if got := bytes.Count(idx, []byte("\n")); got != responses {
				t.Errorf("index has %d lines, want %d", got, responses)
			}
			if j, _ := os.ReadFile(filepath.Join(dir, "other.warc.gz")); string(j) != "junk" {
				t.Error("unrelated file touched")
			}
		})
	}
}

// TestRecoverAfterFlush: records acknowledged by Flush survive when the
// process dies without Close.
func TestRecoverAfterFlush(t *testing.T) {
	ctx := context.Background()
	opts := testOptions(t)
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := w.WriteExchange(ctx, exchange(fmt.Sprintf("http://example.com/%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// Simulated crash: the writer is dropped, its file stays .open. Copy it
	// so that the still-open descriptor does not matter.
	open, _ := filepath.Glob(filepath.Join(opts.Dir, "*.open"))
	if len(open) != 1 {
		t.Fatalf("open files %v", open)
	}
	data, err := os.ReadFile(open[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(open[0])), append(data, 0x1f, 0x8b, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Recover(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Records != 16 || res[0].Cut != 3 {
		t.Fatalf("recover %+v, want 16 records, 3 bytes cut", res)
	}
	if err := IndexFile(ctx, res[0].Path); err != nil {
		t.Errorf("IndexFile on recovered file: %v", err)
	}
	w.Close()
}

func TestIndexFileRejectsPartial(t *testing.T) {
	gz := writeSample(t)
	p := filepath.Join(t.TempDir(), "a.warc.gz")
	os.WriteFile(p, gz[:len(gz)-3], 0o644)
	if err := IndexFile(context.Background(), p); !errors.Is(err, ErrFormat) {
		t.Errorf("got %v, want ErrFormat", err)
	}
}

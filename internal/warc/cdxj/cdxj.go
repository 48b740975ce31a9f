// Package cdxj writes and parses CDXJ index lines, the index format of pywb
// and OpenWayback: one line per capture,
//
//	SURT-KEY TIMESTAMP14 {"url": ..., "mime": ..., "status": ..., "digest": ..., "length": ..., "offset": ..., "filename": ...}
//
// sorted by key then timestamp (byte order, as `LC_ALL=C sort` does), so a
// replay tool can binary-search it. Values in the JSON are strings, as pywb
// writes them. The key is the SURT form of the URL (see SURT).
package cdxj

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MaxLineBytes bounds one index line when parsing (a URL of up to 64 KiB
// plus the fields).
const MaxLineBytes = 80 << 10

// Entry is one capture in the index.
type Entry struct {
	// Key is the SURT of URL; computed from URL by Line when empty.
	Key string
	// Timestamp is the 14-digit UTC capture time yyyyMMddHHmmss.
	Timestamp string
	URL       string
	// MIME is the media type without parameters; "warc/revisit" for
	// revisit records, as pywb writes.
	MIME string
	// Status is the HTTP status code; 0 when unknown.
	Status int
	// Digest is the payload digest, "sha1:BASE32" (WARC-Payload-Digest).
	// The line holds it without the "sha1:" label, as pywb and warcio
	// write it (see digestField); Parse puts the label back.
	Digest string
	// Length is the record's compressed length in bytes.
	Length int64
	// Offset is the record's byte offset in the file.
	Offset int64
	// Filename is the WARC file's base name.
	Filename string
}

type jsonEntry struct {
	URL      string `json:"url"`
	MIME     string `json:"mime,omitempty"`
	Status   string `json:"status,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// Line formats e as one CDXJ line without the newline.
func (e Entry) Line() (string, error) {
	key := e.Key
	if key == "" {
		k, err := SURT(e.URL)
		if err != nil {
			return "", err
		}
		key = k
	}
	if strings.ContainsAny(key, " \r\n") {
		return "", fmt.Errorf("cdxj: key %q contains a space or newline", key)
	}
	if len(e.Timestamp) != 14 || strings.Trim(e.Timestamp, "0123456789") != "" {
		return "", fmt.Errorf("cdxj: timestamp %q is not 14 digits", e.Timestamp)
	}
	je := jsonEntry{
		URL: e.URL, MIME: e.MIME, Digest: digestField(e.Digest), Filename: e.Filename,
		Length: strconv.FormatInt(e.Length, 10), Offset: strconv.FormatInt(e.Offset, 10),
	}
	if e.Status > 0 {
		je.Status = strconv.Itoa(e.Status)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(je); err != nil {
		return "", fmt.Errorf("cdxj: encode: %w", err)
	}
	return key + " " + e.Timestamp + " " + strings.TrimRight(b.String(), "\n"), nil
}

// sha1Label prefixes a SHA-1 payload digest in WARC headers.
const sha1Label = "sha1:"

// digestField is the index form of a payload digest: pywb's indexer and
// warcio (Python and JS) write a SHA-1 digest's base32 value without its
// "sha1:" label, so that index lines from different tools, and the CDX
// servers that merge them (OutbackCDX, pywb's revisit lookup by digest),
// compare equal. Other algorithms keep their label.
func digestField(d string) string {
	if len(d) > len(sha1Label) && strings.EqualFold(d[:len(sha1Label)], sha1Label) {
		return d[len(sha1Label):]
	}
	return d
}

// entryDigest is the inverse of digestField: a bare base32 SHA-1 (32
// characters, as pywb writes) gets its "sha1:" label back; labelled
// values, which earlier Courtesy indexes hold, are kept as they are.
func entryDigest(d string) string {
	if len(d) == 32 && strings.Trim(d, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") == "" {
		return sha1Label + d
	}
	return d
}

// Parse parses one CDXJ line (trailing newline allowed).
func Parse(line string) (Entry, error) {
	line = strings.TrimRight(line, "\r\n")
	if len(line) > MaxLineBytes {
		return Entry{}, fmt.Errorf("cdxj: line longer than %d bytes", MaxLineBytes)
	}
	key, rest, ok1 := strings.Cut(line, " ")
	ts, js, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || key == "" {
		return Entry{}, errors.New("cdxj: want KEY TIMESTAMP JSON")
	}
	if len(ts) != 14 || strings.Trim(ts, "0123456789") != "" {
		return Entry{}, fmt.Errorf("cdxj: timestamp %q is not 14 digits", ts)
	}
	// Decode into raw values: other writers put numbers where pywb puts
	// strings.
	var raw map[string]any
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		return Entry{}, fmt.Errorf("cdxj: json: %w", err)
	}
	e := Entry{Key: key, Timestamp: ts}
	str := func(k string) string {
		switch v := raw[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	num := func(k string) (int64, error) {
		s := str(k)
		if s == "" || s == "-" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("cdxj: %s %q is not a non-negative integer", k, s)
		}
		return n, nil
	}
	e.URL, e.MIME, e.Digest, e.Filename = str("url"), str("mime"), entryDigest(str("digest")), str("filename")
	var err error
	if e.Length, err = num("length"); err != nil {
		return Entry{}, err
	}
	if e.Offset, err = num("offset"); err != nil {
		return Entry{}, err
	}
	st, err := num("status")
	if err != nil || st > 999 {
		return Entry{}, fmt.Errorf("cdxj: bad status %q", str("status"))
	}
	e.Status = int(st)
	return e, nil
}

// Write writes the lines of entries sorted by key, timestamp and offset.
// Entries without Key get it computed; entries whose URL has no SURT are an
// error.
func Write(w io.Writer, entries []Entry) error {
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		l, err := e.Line()
		if err != nil {
			return err
		}
		lines = append(lines, l)
	}
	// Byte order of whole lines is the CDXJ sort order (key, then
	// timestamp, then JSON), the order pywb's binary search expects.
	slices.Sort(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cdxj: write: %w", err)
	}
	return nil
}

// WriteFile writes the sorted index to path atomically: a temporary file in
// the same directory, fsync, rename, fsync of the directory. The file is
// made readable by all (0644), like the WARC files it indexes: replay
// tools run as other users (os.CreateTemp would leave it 0600).
func WriteFile(path string, entries []Entry) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cdxj: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := Write(tmp, entries); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("cdxj: chmod: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("cdxj: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cdxj: close: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cdxj: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("cdxj: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cdxj: sync dir: %w", err)
	}
	return nil
}

// ReadAll parses every line of r, stopping at the first bad line.
func ReadAll(r io.Reader) ([]Entry, error) {
	var out []Entry
	err := Each(r, func(n int, e Entry, err error) error {
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// Each parses r line by line, without holding it, and calls fn with each
// non-blank line's number (from 1) and entry, or its parse error; an
// error fn returns stops the reading and is returned.
func Each(r io.Reader, fn func(line int, e Entry, err error) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLineBytes+2)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		e, err := Parse(sc.Text())
		if err := fn(n, e, err); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cdxj: %w", err)
	}
	return nil
}

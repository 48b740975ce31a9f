package httpcache

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// countRecords counts the cache's records of one kind ('d' or 'm').
func countRecords(t *testing.T, c *Cache, kind string) int {
	t.Helper()
	n := 0
	if err := c.bucket.Scan([]byte(kind), func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCacheDataRecordsNumbered: data records are numbered in store order,
// a replaced variant leaves no data record behind, and the numbering goes
// on after a restart without reusing a number.
func TestCacheDataRecordsNumbered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, dir)
	c, err := Open(db, Options{MemoryBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := hdr("Cache-Control", "max-age=600")
	mustStore(t, c, get("http://example.org/a"), 200, h, "a1", t0)
	mustStore(t, c, get("http://example.org/a"), 200, h, "a2", t0.Add(time.Second)) // replaces a1
	mustStore(t, c, get("http://example.org/b"), 200, h, "b", t0)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d, m := countRecords(t, c, "d"), countRecords(t, c, "m"); d != 2 || m != 2 {
		t.Errorf("records after a replacement: %d data, %d meta; want 2, 2", d, m)
	}
	var keys [][]byte
	_ = c.bucket.Scan([]byte("d"), func(k, _ []byte) error { keys = append(keys, bytes.Clone(k)); return nil })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, dir)
	defer db.Close()
	c, err = Open(db, Options{MemoryBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustStore(t, c, get("http://example.org/c"), 200, h, "c", t0)
	var last []byte
	_ = c.bucket.Scan([]byte("d"), func(k, _ []byte) error { last = bytes.Clone(k); return nil })
	if len(keys) == 0 || bytes.Compare(last, keys[len(keys)-1]) <= 0 {
		t.Errorf("data key after restart %x does not sort after %x", last, keys)
	}
	for u, want := range map[string]string{"http://example.org/a": "a2", "http://example.org/b": "b", "http://example.org/c": "c"} {
		res := c.Lookup(get(u), t0.Add(time.Minute))
		if res.Action != Fresh || string(res.Entry.Body) != want {
			t.Errorf("%s: %v %q, want fresh %q", u, res.Action, bodyOf(res), want)
		}
	}
}

// TestCacheOldLayoutDropped: records of the first layout (metadata version
// 1, data keyed by variant key) and data records without metadata are
// removed at Open.
func TestCacheOldLayoutDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, dir)
	b := db.Bucket(DefaultPrefix)
	vk := bytes.Repeat([]byte{7}, 16)
	oldMeta := []byte{1, 3, 'G', 'E', 'T', 0, 4, 0, 0} // version 1
	for k, v := range map[string][]byte{
		"m" + string(vk):                    oldMeta,
		"d" + string(vk):                    {1, 2, 3},
		"d\x00\x00\x00\x00\x00\x00\x00\x09": {1}, // numbered, no metadata
	} {
		if err := b.Set([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Open(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustStore(t, c, get("http://example.org/new"), 200, hdr("Cache-Control", "max-age=600"), "new", t0)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d, m := countRecords(t, c, "d"), countRecords(t, c, "m"); d != 1 || m != 1 {
		t.Errorf("records after Open: %d data, %d meta; want only the new entry's", d, m)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCacheOldVersionsDropped: a cache written before the override was
// refused to requests with credentials (metadata version 2), before a
// response to a request with cookies or credentials became a variant of
// them (versions 3 and 4), or before a compressed response became a
// variant of Accept-Encoding (4), may hold a page fetched with one user's
// cookie; such records are dropped at Open, so that no other user is
// ever served them.
func TestCacheOldVersionsDropped(t *testing.T) {
	t.Parallel()
	for _, ver := range []byte{2, 3, 4} {
		t.Run(fmt.Sprint("version ", ver), func(t *testing.T) {
			dir := t.TempDir()
			db := openDB(t, dir)
			v := &variant{pk: "GET http://example.org/me", size: 10, storedAt: t0.UnixNano(), seq: 1}
			vk := bytes.Repeat([]byte{9}, 16)
			meta := encodeMeta(v)
			meta[0] = ver
			e := &Entry{Method: "GET", URL: "http://example.org/me", Status: 200, Header: hdr("Cache-Control", "max-age=600"),
				Body: []byte("alice"), RequestTime: t0, ResponseTime: t0}
			b := db.Bucket(DefaultPrefix)
			for k, val := range map[string][]byte{
				"m" + string(vk):                    meta,
				"d\x00\x00\x00\x00\x00\x00\x00\x01": encodeEntry(e),
			} {
				if err := b.Set([]byte(k), val); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Open(db, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res := c.Lookup(get("http://example.org/me"), t0.Add(time.Minute)); res.Action != Miss {
				t.Errorf("version-%d entry answered %v, want miss", ver, res.Action)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if d, m := countRecords(t, c, "d"), countRecords(t, c, "m"); d != 0 || m != 0 {
				t.Errorf("records after Open: %d data, %d meta; want none", d, m)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzDecodeMeta: metadata records are read back from disk at Open and are
// untrusted; decoding fails cleanly, and what decodes re-encodes to the
// same bytes.
func FuzzDecodeMeta(f *testing.F) {
	f.Add(encodeMeta(&variant{pk: "GET http://example.org/", mediaType: "text/html", size: 1200, storedAt: 42, seq: 7,
		varyNames: []string{"Accept-Language"}, varyValues: []string{"de"}}))
	f.Add([]byte{metaVersion})
	f.Add([]byte{1, 3, 'G', 'E', 'T', 0, 4, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeMeta(b)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v does not wrap errCorrupt", err)
			}
			return
		}
		if enc := encodeMeta(v); !bytes.Equal(enc, b) {
			// Varints have one shortest form; a longer one in b is the
			// only way to differ.
			v2, err := decodeMeta(enc)
			if err != nil || v2.pk != v.pk || v2.seq != v.seq || v2.size != v.size || v2.storedAt != v.storedAt {
				t.Fatalf("re-decode differs: %+v vs %+v (%v)", v2, v, err)
			}
		}
	})
}

// TestCacheCloseCommitsQueued: stores served from the memory tier do not
// wait for their commit (the writer encodes them later); Close commits
// every one.
func TestCacheCloseCommitsQueued(t *testing.T) {
	t.Parallel()
	c, _ := openCache(t, Options{})
	const n = 50
	for i := range n {
		mustStore(t, c, get(fmt.Sprintf("http://example.org/%d", i)), 200, hdr("Cache-Control", "max-age=600"), "x", t0)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d, m := countRecords(t, c, "d"), countRecords(t, c, "m"); d != n || m != n {
		t.Errorf("after Close: %d data, %d meta records; want %d each", d, m, n)
	}
}

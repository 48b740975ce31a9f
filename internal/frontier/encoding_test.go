package frontier

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rec  urlRecord
	}{
		{"queued", urlRecord{state: stateQueued, qid: 7, pos: entryPos{due: 123456789, prio: -3, depth: 5, seq: 1 << 40}, created: 1700000000}},
		{"completed", urlRecord{state: stateCompleted, qid: 0, created: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeURLRecord(tc.rec.encode())
			if err != nil || got != tc.rec {
				t.Errorf("round trip = %+v, %v; want %+v", got, err, tc.rec)
			}
		})
	}
	// Format 1 carried the URL after the fields; it still decodes.
	v1 := append([]byte{1}, (&urlRecord{state: stateQueued, qid: 7, pos: entryPos{seq: 3}, created: 5}).encode()[1:]...)
	v1 = append(v1, "http://h.test/"...)
	if got, err := decodeURLRecord(v1); err != nil || got != (urlRecord{state: stateQueued, qid: 7, pos: entryPos{seq: 3}, created: 5}) {
		t.Errorf("format 1 record = %+v, %v", got, err)
	}
	q := queueRecord{qid: 3, queued: 10, completed: 4, delay: -1, blocked: 99, limit: 5000, retired: "dns"}
	if got, err := decodeQueueRecord(q.encode()); err != nil || got != q {
		t.Errorf("queue record round trip = %+v, %v", got, err)
	}
	pos := entryPos{due: 42, prio: 127, depth: 65535, seq: 9}
	if got, err := decodeEntryKey(entryKey(1, 2, pos)); err != nil || got != pos {
		t.Errorf("entry key round trip = %+v, %v", got, err)
	}
	// Priority order is preserved by the key bytes: higher first.
	hi, lo := entryKey(1, 2, entryPos{prio: 5}), entryKey(1, 2, entryPos{prio: -5})
	if bytes.Compare(hi, lo) >= 0 {
		t.Errorf("higher priority does not sort first")
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder of stored records: a
// corrupt store must give errors, never panics or huge allocations.
func FuzzDecode(f *testing.F) {
	f.Add((&urlRecord{state: stateQueued, qid: 1}).encode())
	f.Add(append([]byte{1, 1, 1, 0, 0, 0, 0}, "http://x.test/"...))
	f.Add((&queueRecord{qid: 1, queued: 2, retired: "x"}).encode())
	f.Add(crawlRecord{cid: 1, nextQID: 2}.encode())
	f.Add(encodeEntry(hashURL("http://x.test/"), "http://x.test/", map[string][]string{"a": {"b", "c"}}, 1700000000))
	f.Add(encodeEntryV1(hashURL("http://x.test/"), "http://x.test/", map[string][]string{"a": {"b"}}))
	f.Add(append(encodeEntryV1(hashURL("http://x.test/"), "http://x.test/", nil), 2, 4))
	f.Add([]byte{1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := decodeURLRecord(b); err == nil {
			if r2, err := decodeURLRecord(r.encode()); err != nil || r2 != r {
				t.Errorf("url record re-encode mismatch: %+v vs %+v (%v)", r, r2, err)
			}
		}
		if r, err := decodeQueueRecord(b); err == nil {
			if r2, err := decodeQueueRecord(r.encode()); err != nil || r2 != r {
				t.Errorf("queue record re-encode mismatch")
			}
		}
		decodeCrawlRecord(b)
		// Get checks an entry under its lock with checkEntry and decodes
		// it after: they must accept the same entries.
		e, err := decodeEntry(b)
		created, hasCreated, cerr := checkEntry(b)
		if (err == nil) != (cerr == nil) || err == nil && (created != e.created || hasCreated != e.hasCreated) {
			t.Errorf("checkEntry = %d, %v, %v; decodeEntry = %+v, %v", created, hasCreated, cerr, e, err)
		}
		if err == nil {
			e2, err := decodeEntry(encodeEntry(e.hash, e.url, e.md, e.created))
			if err != nil || e2.hash != e.hash || e2.url != e.url || len(e2.md) != len(e.md) || !e2.hasCreated || e2.created != e.created {
				t.Errorf("entry re-encode mismatch: %+v vs %+v (%v)", e, e2, err)
			}
			if !e.hasCreated && e.created != 0 {
				t.Errorf("entry without trailer has created %d", e.created)
			}
		}
		decodeEntryKey(b)
	})
}

// encodeEntryV1 is the queue entry as builds before 2026-11-22 wrote it:
// hash, URL, metadata, no created trailer.
func encodeEntryV1(h urlHash, url string, md map[string][]string) []byte {
	b := append([]byte(nil), h[:]...)
	b = binary.AppendUvarint(b, uint64(len(url)))
	b = append(b, url...)
	return appendMetadata(b, md)
}

func TestEntryFormats(t *testing.T) {
	h := hashURL("http://h.test/a")
	md := map[string][]string{"hop": {"L", "R"}, "srcloc": {"http://x.test/"}}
	current := encodeEntry(h, "http://h.test/a", md, 1700000000)
	tests := []struct {
		name        string
		b           []byte
		wantErr     bool
		wantCreated int64
		hasCreated  bool
	}{
		{"current", current, false, 1700000000, true},
		{"current, negative time", encodeEntry(h, "http://h.test/a", md, -5), false, -5, true},
		{"previous build (no trailer)", encodeEntryV1(h, "http://h.test/a", md), false, 0, false},
		{"unknown trailer tag", append(encodeEntryV1(h, "http://h.test/a", md), 2, 4), true, 0, false},
		{"truncated trailer", append(encodeEntryV1(h, "http://h.test/a", md), entryTagCreated), true, 0, false},
		{"bytes after trailer", append(bytes.Clone(current), 0), true, 0, false},
		{"short", h[:10], true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := decodeEntry(tc.b)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.hash != h || e.url != "http://h.test/a" || !maps.EqualFunc(e.md, md, slices.Equal[[]string]) {
				t.Errorf("entry = %+v", e)
			}
			if e.hasCreated != tc.hasCreated || e.created != tc.wantCreated {
				t.Errorf("created = %d (%v), want %d (%v)", e.created, e.hasCreated, tc.wantCreated, tc.hasCreated)
			}
		})
	}
}

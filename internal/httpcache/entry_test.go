package httpcache

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func sampleEntry() *Entry {
	e := &Entry{
		Method:       "GET",
		URL:          "http://example.org/a?b=c",
		Status:       200,
		Header:       hdr("Content-Type", "text/html", "Cache-Control", "max-age=60", "X-Two", "1", "X-Two", "2"),
		Body:         []byte("<html>hello</html>"),
		RequestTime:  t0,
		ResponseTime: t0.Add(time.Second),
		MediaType:    "text/html",
		VaryNames:    []string{"Accept-Language"},
		VaryValues:   []string{"de,en"},
	}
	e.derive(Policy{})
	return e
}

func TestEntryRoundTrip(t *testing.T) {
	t.Parallel()
	e := sampleEntry()
	got, err := decodeEntry(encodeEntry(e), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	// time.Time from Unix(0, n) has a local location; compare instants.
	if !got.RequestTime.Equal(e.RequestTime) || !got.ResponseTime.Equal(e.ResponseTime) {
		t.Errorf("times %v %v, want %v %v", got.RequestTime, got.ResponseTime, e.RequestTime, e.ResponseTime)
	}
	got.RequestTime, got.ResponseTime = e.RequestTime, e.ResponseTime
	if !reflect.DeepEqual(got, e) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, e)
	}
	if got.Lifetime != time.Minute {
		t.Errorf("derived lifetime %v, want 1m", got.Lifetime)
	}
}

// TestEntrySize: the index accounts an entry by entrySize before the
// writer encodes it, so the two must agree to the byte.
func TestEntrySize(t *testing.T) {
	t.Parallel()
	big := sampleEntry()
	big.Body = make([]byte, 1<<16+3)
	big.Header["X-Long"] = []string{string(make([]byte, 300))}
	tests := []struct {
		name string
		e    *Entry
	}{
		{"sample", sampleEntry()},
		{"empty", &Entry{}},
		{"negative times", &Entry{Method: "GET", RequestTime: time.Unix(0, -1), ResponseTime: time.Unix(-1<<40, 0)}},
		{"large body and field", big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, want := entrySize(tt.e), len(encodeEntry(tt.e)); got != want {
				t.Errorf("entrySize = %d, len(encodeEntry) = %d", got, want)
			}
		})
	}
}

func TestDecodeEntryCorrupt(t *testing.T) {
	t.Parallel()
	good := encodeEntry(sampleEntry())
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"bad version", append([]byte{9}, good[1:]...)},
		{"truncated", good[:len(good)-3]},
		{"trailing", append(bytes.Clone(good), 0)},
		{"huge count", []byte{encVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := decodeEntry(tt.b, Policy{}); !errors.Is(err, errCorrupt) {
				t.Errorf("decodeEntry error = %v, want errCorrupt", err)
			}
		})
	}
}

// FuzzDecodeEntry: records read back from disk are untrusted; decoding
// must fail cleanly, and whatever decodes must re-encode to the same bytes
// when it has at most one value list per header (map order aside).
func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(sampleEntry()))
	f.Add([]byte{encVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b, Policy{})
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v does not wrap errCorrupt", err)
			}
			return
		}
		enc := encodeEntry(e)
		if n := entrySize(e); n != len(enc) {
			t.Fatalf("entrySize = %d, encoding has %d bytes", n, len(enc))
		}
		e2, err := decodeEntry(enc, Policy{})
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if e2.URL != e.URL || e2.Status != e.Status || !bytes.Equal(e2.Body, e.Body) || len(e2.Header) != len(e.Header) {
			t.Fatalf("re-decode differs: %+v vs %+v", e2, e)
		}
	})
}

func TestEntryAge(t *testing.T) {
	t.Parallel()
	e := &Entry{InitialAge: 5 * time.Second, ResponseTime: t0, Header: http.Header{}}
	if got := e.Age(t0.Add(10 * time.Second)); got != 15*time.Second {
		t.Errorf("Age = %v, want 15s", got)
	}
	if got := e.Age(t0.Add(-time.Hour)); got != 5*time.Second {
		t.Errorf("Age with clock going back = %v, want 5s", got)
	}
}

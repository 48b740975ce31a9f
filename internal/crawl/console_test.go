package crawl

import (
	"fmt"
	"testing"
	"time"
)

func TestCountResponse(t *testing.T) {
	c := &Crawler{now: time.Now}
	for _, r := range []struct {
		status int
		ct     string
	}{
		{200, "text/html; charset=utf-8"},
		{200, " TEXT/HTML "},
		{404, ""},
		{301, "application/xml"},
	} {
		c.countResponse(r.status, r.ct)
	}
	p := c.Progress()
	want := map[string]int64{"text/html": 2, "unknown": 1, "application/xml": 1}
	for k, n := range want {
		if p.MIME[k] != n {
			t.Errorf("MIME[%q] = %d, want %d (%v)", k, p.MIME[k], n, p.MIME)
		}
	}
	if p.Status["200"] != 2 || p.Status["404"] != 1 || p.Status["301"] != 1 || len(p.Status) != 3 {
		t.Errorf("status counts %v", p.Status)
	}
	// Media types are bounded: later new ones count as "other".
	for i := range 2 * maxMIMETypes {
		c.countResponse(200, fmt.Sprintf("x/t%d", i))
	}
	p = c.Progress()
	if len(p.MIME) != maxMIMETypes+1 || p.MIME["other"] != int64(2*maxMIMETypes-(maxMIMETypes-len(want))) {
		t.Errorf("%d media types, %d other; want %d and %d", len(p.MIME), p.MIME["other"], maxMIMETypes+1, 2*maxMIMETypes-(maxMIMETypes-len(want)))
	}
}

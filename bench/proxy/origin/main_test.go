package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHandler(t *testing.T) {
	h := newHandler(1024)
	tests := []struct {
		name       string
		method     string
		target     string
		wantStatus int
		wantLen    int // -1: not checked
		wantCC     string
	}{
		{"page", "GET", "http://site-0001.test/miss/x/1", 200, 1024, "public, max-age=86400"},
		{"head", "HEAD", "http://site-0002.test/a", 200, 0, "public, max-age=86400"},
		{"robots", "GET", "http://site-0001.test/robots.txt", 200, -1, ""},
		{"post refused", "POST", "http://site-0001.test/", 405, -1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tc.wantStatus)
			}
			if tc.wantLen >= 0 && rec.Body.Len() != tc.wantLen {
				t.Errorf("body %d bytes, want %d", rec.Body.Len(), tc.wantLen)
			}
			if got := rec.Header().Get("Cache-Control"); got != tc.wantCC {
				t.Errorf("Cache-Control %q, want %q", got, tc.wantCC)
			}
		})
	}
	// page, head and post count; robots.txt and the stats do not.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/_origin/stats", nil))
	var s struct{ Requests int64 }
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || s.Requests != 3 {
		t.Errorf("stats %q (%v): want requests 3", rec.Body.String(), err)
	}
	if rec.Code != http.StatusOK {
		t.Errorf("stats status %d", rec.Code)
	}
}

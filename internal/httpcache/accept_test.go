package httpcache

import (
	"net/http"
	"strings"
	"testing"
)

func TestAcceptable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		accept []string
		media  string
		want   bool
	}{
		{"no accept takes anything", nil, "text/html", true},
		{"no accept takes untyped", nil, "", true},
		{"exact", []string{"text/html"}, "text/html", true},
		{"exact mismatch (the polite-proxy thesis §5.4)", []string{"application/json"}, "text/html", false},
		{"wildcard", []string{"*/*"}, "image/png", true},
		{"type wildcard", []string{"text/*"}, "text/plain", true},
		{"type wildcard mismatch", []string{"text/*"}, "image/png", false},
		{"browser accept", []string{"text/html,application/xhtml+xml,*/*;q=0.8"}, "image/png", true},
		{"q=0 excludes", []string{"text/html;q=0, */*;q=0"}, "text/html", false},
		{"q=0.0 excludes, other range admits", []string{"text/html; q=0.0, text/*"}, "text/html", true},
		{"params ignored", []string{"text/html;level=1"}, "text/html", true},
		{"untyped entry needs */*", []string{"text/html"}, "", false},
		{"two lines", []string{"application/json", "text/html"}, "text/html", true},
		{"empty field acts as absent", []string{""}, "text/html", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for _, a := range tt.accept {
				h.Add("Accept", a)
			}
			if got := Acceptable(h, tt.media); got != tt.want {
				t.Errorf("Acceptable(%q, %q) = %v, want %v", tt.accept, tt.media, got, tt.want)
			}
		})
	}
}

func TestAcceptableTooLong(t *testing.T) {
	t.Parallel()
	h := http.Header{"Accept": {strings.Repeat("a/b,", MaxAcceptRanges+5)}}
	if !Acceptable(h, "text/html") {
		t.Error("an over-long Accept should be treated as absent")
	}
}

func TestMediaType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"text/HTML; charset=utf-8": "text/html",
		"":                         "",
		"garbage":                  "",
		" application/json ":       "application/json",
	} {
		if got := MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", in, got, want)
		}
	}
}

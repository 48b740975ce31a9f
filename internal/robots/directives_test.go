package robots

import (
	"testing"
	"time"
)

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    Directives
	}{
		{"seed 000 §4.3 example", "NOINDEX,NOFOLLOW", Directives{NoIndex: true, NoFollow: true}},
		{"spacing and case", "  noIndex ,   NoFollow  ", Directives{NoIndex: true, NoFollow: true}},
		{"space separated", "noindex nofollow", Directives{NoIndex: true, NoFollow: true}},
		{"none", "none", Directives{NoIndex: true, NoFollow: true}},
		{"all", "all", Directives{}},
		{"empty", "", Directives{}},
		{"unknown tokens ignored", "noodp, frobnicate, noarchive", Directives{NoArchive: true}},
		{"nocache", "nocache", Directives{NoArchive: true}},
		{"snippet, image, translate", "nosnippet,noimageindex,notranslate", Directives{NoSnippet: true, NoImageIndex: true, NoTranslate: true}},
		{"max-snippet 0 is nosnippet", "max-snippet:0", Directives{NoSnippet: true}},
		{"max-snippet", "max-snippet: 50", Directives{MaxSnippet: 50}},
		{"max-snippet unlimited", "max-snippet:-1", Directives{MaxSnippet: -1}},
		{"max-image-preview", "max-image-preview:Standard", Directives{MaxImagePreview: "standard"}},
		{"max-video-preview", "max-video-preview:30", Directives{MaxVideoPreview: 30}},
		{"bad max-snippet ignored", "max-snippet:lots", Directives{}},
		{"unavailable_after ISO", "unavailable_after: 2026-12-31", Directives{UnavailableAfter: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}},
		{"unavailable_after RFC 850 with comma", "noindex, unavailable_after: Friday, 25-Jun-10 15:00:00 GMT", Directives{NoIndex: true, UnavailableAfter: time.Date(2010, 6, 25, 15, 0, 0, 0, time.UTC)}},
		{"unavailable_after RFC 822", "unavailable_after: 25 Jun 2010 15:00:00 GMT", Directives{UnavailableAfter: time.Date(2010, 6, 25, 15, 0, 0, 0, time.UTC)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseDirectives(tc.content); got != tc.want {
				t.Errorf("ParseDirectives(%q) = %+v, want %+v", tc.content, got, tc.want)
			}
		})
	}
}

func TestMetaApplies(t *testing.T) {
	tests := []struct {
		name, meta, agent string
		want              bool
	}{
		{"robots", "robots", "courtesy", true},
		{"ROBOTS upper case", " ROBOTS ", "courtesy", true},
		{"own token", "Courtesy", "courtesy", true},
		{"other crawler", "googlebot", "courtesy", false},
		{"empty agent", "", "", false},
		{"description", "description", "courtesy", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MetaApplies(tc.meta, tc.agent); got != tc.want {
				t.Errorf("MetaApplies(%q, %q) = %v", tc.meta, tc.agent, got)
			}
		})
	}
}

func TestXRobotsTag(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		agent  string
		want   Directives
	}{
		{"unprefixed", []string{"noindex"}, "courtesy", Directives{NoIndex: true}},
		{"own prefix", []string{"Courtesy: nofollow"}, "courtesy", Directives{NoFollow: true}},
		{"other prefix ignored", []string{"googlebot: noindex, nofollow"}, "courtesy", Directives{}},
		{"mixed headers", []string{"googlebot: noindex", "noarchive", "courtesy: nosnippet, notranslate"}, "courtesy", Directives{NoArchive: true, NoSnippet: true, NoTranslate: true}},
		{"prefix switches within a value", []string{"googlebot: noindex, courtesy: nofollow"}, "courtesy", Directives{NoFollow: true}},
		{"unavailable_after is not a prefix", []string{"unavailable_after: 2030-01-02"}, "courtesy", Directives{UnavailableAfter: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}},
		{"no agent: prefixed ignored", []string{"bot: noindex", "nofollow"}, "", Directives{NoFollow: true}},
		{"none", []string{"none"}, "x", Directives{NoIndex: true, NoFollow: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := XRobotsTag(tc.values, tc.agent); got != tc.want {
				t.Errorf("XRobotsTag(%q, %q) = %+v, want %+v", tc.values, tc.agent, got, tc.want)
			}
		})
	}
}

func TestDirectivesMerge(t *testing.T) {
	early := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	late := early.AddDate(1, 0, 0)
	tests := []struct {
		name string
		a, b Directives
		want Directives
	}{
		{"union of flags", Directives{NoIndex: true}, Directives{NoFollow: true, NoArchive: true}, Directives{NoIndex: true, NoFollow: true, NoArchive: true}},
		{"earliest unavailable_after", Directives{UnavailableAfter: late}, Directives{UnavailableAfter: early}, Directives{UnavailableAfter: early}},
		{"zero keeps other", Directives{UnavailableAfter: late}, Directives{}, Directives{UnavailableAfter: late}},
		{"smaller snippet", Directives{MaxSnippet: 100}, Directives{MaxSnippet: 20}, Directives{MaxSnippet: 20}},
		{"limit beats unlimited", Directives{MaxSnippet: -1}, Directives{MaxSnippet: 20}, Directives{MaxSnippet: 20}},
		{"smaller image preview", Directives{MaxImagePreview: "large"}, Directives{MaxImagePreview: "none"}, Directives{MaxImagePreview: "none"}},
		{"video static wins", Directives{MaxVideoPreview: 30}, Directives{MaxVideoPreview: -2}, Directives{MaxVideoPreview: -2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Merge(tc.b); got != tc.want {
				t.Errorf("Merge = %+v, want %+v", got, tc.want)
			}
			if got := tc.b.Merge(tc.a); got != tc.want {
				t.Errorf("Merge (reversed) = %+v, want %+v", got, tc.want)
			}
		})
	}
}

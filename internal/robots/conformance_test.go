package robots

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// conformance is testdata/conformance/cases.json (see its README.md).
type conformance struct {
	AllowCases []struct {
		ID             string  `json:"id"`
		Robots         *string `json:"robots"`
		RobotsBase64   string  `json:"robots_base64"`
		Agent          string  `json:"agent"`
		URL            string  `json:"url"`
		Allowed        bool    `json:"allowed"`
		RFCExpected    *bool   `json:"rfc9309_expected"`
		GoogleSpecific bool    `json:"google_specific"`
		RFCOptional    bool    `json:"rfc9309_optional"`
		RFCAmbiguous   bool    `json:"rfc9309_ambiguous"`
		Note           string  `json:"note"`
	} `json:"allow_cases"`
	AgentTokenCases []struct {
		ID    string `json:"id"`
		Input string `json:"input"`
		Valid bool   `json:"valid"`
	} `json:"agent_token_cases"`
	CrawlDelayCases []struct {
		ID      string   `json:"id"`
		Robots  string   `json:"robots"`
		Agent   string   `json:"agent"`
		Seconds *float64 `json:"crawl_delay_seconds"`
	} `json:"crawl_delay_cases"`
	SitemapCases []struct {
		ID        string   `json:"id"`
		Robots    string   `json:"robots"`
		RobotsURL string   `json:"robots_url"`
		Sitemaps  []string `json:"sitemaps"`
	} `json:"sitemap_cases"`
}

func loadConformance(t testing.TB) *conformance {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "conformance", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c conformance
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestConformanceAllow(t *testing.T) {
	c := loadConformance(t)
	counts := map[string][2]int{} // flag -> {passed, total}
	count := func(flag string, ok bool) {
		n := counts[flag]
		n[1]++
		if ok {
			n[0]++
		}
		counts[flag] = n
	}
	for _, tc := range c.AllowCases {
		var body []byte
		if tc.Robots != nil {
			body = []byte(*tc.Robots)
		} else {
			var err error
			if body, err = base64.StdEncoding.DecodeString(tc.RobotsBase64); err != nil {
				t.Fatalf("%s: %v", tc.ID, err)
			}
		}
		want := tc.Allowed
		if tc.RFCExpected != nil {
			want = *tc.RFCExpected
		}
		got := Parse(body).Allowed(tc.Agent, RequestPath(tc.URL))
		ok := got == want
		flagged := ""
		switch {
		case tc.GoogleSpecific:
			flagged = "google_specific"
		case tc.RFCOptional:
			flagged = "rfc9309_optional"
		case tc.RFCAmbiguous:
			flagged = "rfc9309_ambiguous"
		}
		if flagged != "" {
			count(flagged, ok)
			if !ok {
				t.Logf("flagged %s case %s differs: got %v, want %v (%s)", flagged, tc.ID, got, want, tc.Note)
			}
			continue
		}
		count("required", ok)
		if !ok {
			t.Errorf("%s: Allowed(%q, %q) = %v, want %v\nnote: %s\nrobots: %q", tc.ID, tc.Agent, tc.URL, got, want, tc.Note, body)
		}
	}
	for _, flag := range []string{"required", "google_specific", "rfc9309_optional", "rfc9309_ambiguous"} {
		t.Logf("conformance %-18s %d/%d pass", flag, counts[flag][0], counts[flag][1])
	}
	if n := counts["required"]; n[1] < 500 {
		t.Errorf("only %d required cases ran", n[1])
	}
}

func TestConformanceAgentTokens(t *testing.T) {
	for _, tc := range loadConformance(t).AgentTokenCases {
		if got := ValidAgent(tc.Input); got != tc.Valid {
			t.Errorf("%s: ValidAgent(%q) = %v, want %v", tc.ID, tc.Input, got, tc.Valid)
		}
	}
}

func TestConformanceCrawlDelay(t *testing.T) {
	for _, tc := range loadConformance(t).CrawlDelayCases {
		d, ok := Parse([]byte(tc.Robots)).Group(tc.Agent).CrawlDelay()
		switch {
		case tc.Seconds == nil && ok:
			t.Errorf("%s: CrawlDelay = %v, want none", tc.ID, d)
		case tc.Seconds != nil && (!ok || d != time.Duration(*tc.Seconds*float64(time.Second))):
			t.Errorf("%s: CrawlDelay = %v, %v; want %vs", tc.ID, d, ok, *tc.Seconds)
		}
	}
}

func TestConformanceSitemaps(t *testing.T) {
	for _, tc := range loadConformance(t).SitemapCases {
		got := ParseOptions([]byte(tc.Robots), Options{URL: tc.RobotsURL}).Sitemaps()
		if !slices.Equal(got, tc.Sitemaps) {
			t.Errorf("%s: Sitemaps = %q, want %q", tc.ID, got, tc.Sitemaps)
		}
	}
}

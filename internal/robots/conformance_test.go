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

// allowCase is one decision case of a conformance file.
type allowCase struct {
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
}

// body returns the exact robots.txt bytes of the case.
func (tc *allowCase) body(t testing.TB) []byte {
	t.Helper()
	if tc.Robots != nil {
		return []byte(*tc.Robots)
	}
	b, err := base64.StdEncoding.DecodeString(tc.RobotsBase64)
	if err != nil {
		t.Fatalf("%s: robots_base64: %v", tc.ID, err)
	}
	return b
}

// want is the expected answer: rfc9309_expected when set, else allowed.
func (tc *allowCase) want() bool {
	if tc.RFCExpected != nil {
		return *tc.RFCExpected
	}
	return tc.Allowed
}

// flag names the policy class of the case: "required" (a mismatch fails the
// test) or the flag under which a mismatch is only reported.
func (tc *allowCase) flag() string {
	switch {
	case tc.GoogleSpecific:
		return "google_specific"
	case tc.RFCOptional:
		return "rfc9309_optional"
	case tc.RFCAmbiguous:
		return "rfc9309_ambiguous"
	}
	return "required"
}

// checkAllow runs decision cases under the README policy and returns
// {passed, total} by flag.
func checkAllow(t *testing.T, cases []allowCase) map[string][2]int {
	t.Helper()
	counts := map[string][2]int{}
	for _, tc := range cases {
		body := tc.body(t)
		want := tc.want()
		got := Parse(body).Allowed(tc.Agent, RequestPath(tc.URL))
		flag := tc.flag()
		n := counts[flag]
		n[1]++
		if got == want {
			n[0]++
		}
		counts[flag] = n
		switch {
		case got == want:
		case flag != "required":
			t.Logf("flagged %s case %s differs: got %v, want %v (%s)", flag, tc.ID, got, want, tc.Note)
		default:
			t.Errorf("%s: Allowed(%q, %q) = %v, want %v\nnote: %s\nrobots: %q", tc.ID, tc.Agent, tc.URL, got, want, tc.Note, body)
		}
	}
	for _, flag := range []string{"required", "google_specific", "rfc9309_optional", "rfc9309_ambiguous"} {
		if n := counts[flag]; n[1] > 0 {
			t.Logf("%-18s %d/%d pass", flag, n[0], n[1])
		}
	}
	return counts
}

// tokenCase asks whether Input is a valid product token.
type tokenCase struct {
	ID    string `json:"id"`
	Input string `json:"input"`
	Valid bool   `json:"valid"`
}

// delayCase is the Crawl-delay (seconds, nil for none) of Agent's group.
type delayCase struct {
	ID      string   `json:"id"`
	Robots  string   `json:"robots"`
	Agent   string   `json:"agent"`
	Seconds *float64 `json:"crawl_delay_seconds"`
}

// sitemapCase lists the Sitemap URLs of a file fetched from RobotsURL.
type sitemapCase struct {
	ID        string   `json:"id"`
	Robots    string   `json:"robots"`
	RobotsURL string   `json:"robots_url"`
	Sitemaps  []string `json:"sitemaps"`
}

// conformance is testdata/conformance/cases.json (see its README.md).
type conformance struct {
	AllowCases      []allowCase   `json:"allow_cases"`
	AgentTokenCases []tokenCase   `json:"agent_token_cases"`
	CrawlDelayCases []delayCase   `json:"crawl_delay_cases"`
	SitemapCases    []sitemapCase `json:"sitemap_cases"`
}

func loadConformance(t testing.TB) *conformance {
	t.Helper()
	var c conformance
	loadJSON(t, filepath.Join("testdata", "conformance", "cases.json"), &c)
	return &c
}

// loadJSON decodes the JSON file at path into v.
func loadJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestConformanceAllow(t *testing.T) {
	counts := checkAllow(t, loadConformance(t).AllowCases)
	if n := counts["required"]; n[1] < 500 {
		t.Errorf("only %d required cases ran", n[1])
	}
}

func TestConformanceAgentTokens(t *testing.T) { checkTokens(t, loadConformance(t).AgentTokenCases) }

func TestConformanceCrawlDelay(t *testing.T) { checkDelays(t, loadConformance(t).CrawlDelayCases) }

func TestConformanceSitemaps(t *testing.T) { checkSitemaps(t, loadConformance(t).SitemapCases) }

func checkTokens(t *testing.T, cases []tokenCase) {
	t.Helper()
	for _, tc := range cases {
		if got := ValidAgent(tc.Input); got != tc.Valid {
			t.Errorf("%s: ValidAgent(%q) = %v, want %v", tc.ID, tc.Input, got, tc.Valid)
		}
	}
}

func checkDelays(t *testing.T, cases []delayCase) {
	t.Helper()
	for _, tc := range cases {
		d, ok := Parse([]byte(tc.Robots)).Group(tc.Agent).CrawlDelay()
		switch {
		case tc.Seconds == nil && ok:
			t.Errorf("%s: CrawlDelay = %v, want none", tc.ID, d)
		case tc.Seconds != nil && (!ok || d != time.Duration(*tc.Seconds*float64(time.Second))):
			t.Errorf("%s: CrawlDelay = %v, %v; want %vs", tc.ID, d, ok, *tc.Seconds)
		}
	}
}

func checkSitemaps(t *testing.T, cases []sitemapCase) {
	t.Helper()
	for _, tc := range cases {
		got := ParseOptions([]byte(tc.Robots), Options{URL: tc.RobotsURL}).Sitemaps()
		if !slices.Equal(got, tc.Sitemaps) {
			t.Errorf("%s: Sitemaps = %q, want %q", tc.ID, got, tc.Sitemaps)
		}
	}
}

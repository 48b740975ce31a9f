package robots

import (
	"path/filepath"
	"slices"
	"testing"
)

// heldout is testdata/heldout/cases.json: assertions of the google/robotstxt
// and crawler-commons robots tests that the conformance set leaves out or
// folds into a skipped entry. Ids extend the conformance ids (`-10.1` is the
// first case of skipped entry 10). The policy is the conformance one:
// rfc9309_expected wins over allowed, google_specific cases are reported
// but not required. Where crawler-commons departs from RFC 9309 (legacy
// substring matching of robot names, lower-case-only names) the case holds
// the RFC answer: rfc9309_expected for decisions, valid=true for FOOBOT.
type heldout struct {
	conformance
	// PathCases: RequestPath(URL) == Path (GetPathParamsQuery).
	PathCases []struct {
		ID             string `json:"id"`
		URL            string `json:"url"`
		Path           string `json:"path"`
		GoogleSpecific bool   `json:"google_specific"`
		Note           string `json:"note"`
	} `json:"path_cases"`
	// LineCases check line numbering and skipped lines: the rule deciding
	// URL for Agent is on Line (0: none), Clean means the file has no
	// problems, UnknownLines must each be reported as a problem.
	LineCases []struct {
		allowCase
		Line         int   `json:"line"`
		Clean        bool  `json:"clean"`
		UnknownLines []int `json:"unknown_lines"`
	} `json:"line_cases"`
}

func loadHeldout(t testing.TB) *heldout {
	t.Helper()
	var h heldout
	loadJSON(t, filepath.Join("testdata", "heldout", "cases.json"), &h)
	return &h
}

func TestHeldoutAllow(t *testing.T) { checkAllow(t, loadHeldout(t).AllowCases) }

func TestHeldoutAgentTokens(t *testing.T) { checkTokens(t, loadHeldout(t).AgentTokenCases) }

func TestHeldoutCrawlDelay(t *testing.T) { checkDelays(t, loadHeldout(t).CrawlDelayCases) }

func TestHeldoutSitemaps(t *testing.T) { checkSitemaps(t, loadHeldout(t).SitemapCases) }

func TestHeldoutRequestPath(t *testing.T) {
	for _, tc := range loadHeldout(t).PathCases {
		got := RequestPath(tc.URL)
		switch {
		case got == tc.Path:
		case tc.GoogleSpecific:
			t.Logf("flagged google_specific case %s differs: RequestPath(%q) = %q, want %q (%s)", tc.ID, tc.URL, got, tc.Path, tc.Note)
		default:
			t.Errorf("%s: RequestPath(%q) = %q, want %q", tc.ID, tc.URL, got, tc.Path)
		}
	}
}

func TestHeldoutLines(t *testing.T) {
	for _, tc := range loadHeldout(t).LineCases {
		f := Parse(tc.body(t))
		d := f.Group(tc.Agent).Explain(RequestPath(tc.URL))
		if d.Allowed != tc.want() || d.Line != tc.Line {
			t.Errorf("%s: Explain(%q) = %v at line %d, want %v at line %d (%s)", tc.ID, tc.URL, d.Allowed, d.Line, tc.want(), tc.Line, tc.Note)
		}
		var lines []int
		for _, p := range f.Problems() {
			lines = append(lines, p.Line)
		}
		if tc.Clean && len(lines) > 0 {
			t.Errorf("%s: Problems = %v, want none", tc.ID, f.Problems())
		}
		for _, n := range tc.UnknownLines {
			if !slices.Contains(lines, n) {
				t.Errorf("%s: Problems = %v, want one on line %d", tc.ID, f.Problems(), n)
			}
		}
	}
}

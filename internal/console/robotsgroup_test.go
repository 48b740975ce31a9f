package console

import (
	"slices"
	"testing"
)

func TestGroupLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, agent string
		want              []LineRange
	}{
		{"empty", "", "courtesy", []LineRange{}},
		{"star only", "User-agent: *\nDisallow: /x\n", "courtesy", []LineRange{{1, 2}}},
		{"own group wins", "User-agent: *\nDisallow: /\n\nUser-agent: Courtesy\nAllow: /\n", "courtesy", []LineRange{{4, 5}}},
		{"shared header", "User-agent: a\nUser-agent: courtesy\nDisallow: /p\nUser-agent: b\nDisallow: /\n", "courtesy", []LineRange{{1, 3}}},
		{"merged groups", "User-agent: courtesy\nDisallow: /a\nUser-agent: x\nDisallow: /\nUser-agent: courtesy\nDisallow: /b", "courtesy", []LineRange{{1, 2}, {5, 6}}},
		{"comment and version", "user-agent: courtesy/1.0 # us\ndisallow: /", "courtesy/1.0", []LineRange{{1, 2}}},
		{"sitemap inside header", "User-agent: a\nSitemap: http://x/s.xml\nUser-agent: *\nDisallow: /", "courtesy", []LineRange{{1, 4}}},
		{"no match no star", "User-agent: other\nDisallow: /", "courtesy", []LineRange{}},
		{"rules before any group", "Disallow: /\nUser-agent: *\nAllow: /", "", []LineRange{{2, 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := GroupLines([]byte(c.body), c.agent); !slices.Equal(got, c.want) {
				t.Errorf("GroupLines = %v, want %v", got, c.want)
			}
		})
	}
}

func FuzzGroupLines(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /x\n"), "courtesy")
	f.Add([]byte("User-agent: a\nUser-agent: courtesy\nDisallow: /p\n# c\nUser-agent: b\n"), "courtesy")
	f.Add([]byte("\n\n:::\nuser-agent:\n"), "")
	f.Fuzz(func(t *testing.T, body []byte, agent string) {
		lines := 1
		for _, c := range body {
			if c == '\n' {
				lines++
			}
		}
		prev := 0
		for _, r := range GroupLines(body, agent) {
			if r.From < 1 || r.To < r.From || r.From <= prev || r.To > lines {
				t.Fatalf("bad range %v after %d (%d lines)", r, prev, lines)
			}
			prev = r.To
		}
		explain(body, agent, []string{"http://a.test/x?y", "%%"})
	})
}

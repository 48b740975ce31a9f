package console

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// maxRobotsLines bounds the lines GroupLines reads (robots.txt bodies are
// at most 500 KiB; the politeness gate already cut them).
const maxRobotsLines = 50_000

// LineRange is a run of robots.txt lines, 1-based and inclusive.
type LineRange struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// GroupLines returns the lines of the groups of body that apply to agent
// under RFC 9309 §2.2.1: every group with a User-agent line naming agent
// (case-insensitive), else every group of `*`. A group runs from its first
// User-agent line to the line before the next group's first User-agent
// line. It is for showing the file; the decisions themselves come from
// package robots.
func GroupLines(body []byte, agent string) []LineRange {
	type group struct {
		from, to int
		agents   []string
	}
	var groups []group
	inAgents := false // the previous rule-bearing line was a User-agent line
	n := 0
	for len(body) > 0 && n < maxRobotsLines {
		var line []byte
		line, body, _ = bytes.Cut(body, []byte("\n"))
		n++
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(string(name)))
		if key == "user-agent" {
			v := strings.TrimSpace(string(value))
			if sp := strings.IndexAny(v, " \t"); sp >= 0 {
				v = v[:sp]
			}
			if !inAgents {
				if len(groups) > 0 {
					groups[len(groups)-1].to = n - 1
				}
				groups = append(groups, group{from: n})
			}
			groups[len(groups)-1].agents = append(groups[len(groups)-1].agents, v)
			inAgents = true
			continue
		}
		if key == "sitemap" {
			continue // file-global, does not end the agent lines
		}
		inAgents = false
	}
	if len(groups) > 0 {
		groups[len(groups)-1].to = n
	}
	pick := func(match func(string) bool) []LineRange {
		var out []LineRange
		for _, g := range groups {
			for _, a := range g.agents {
				if match(a) {
					out = append(out, LineRange{g.from, g.to})
					break
				}
			}
		}
		return out
	}
	if agent != "" {
		if out := pick(func(a string) bool { return a != "*" && strings.EqualFold(a, agent) }); out != nil {
			return out
		}
	}
	out := pick(func(a string) bool { return a == "*" })
	if out == nil {
		out = []LineRange{}
	}
	return out
}

// Verdict is robots.txt's answer for one URL and the line that gave it.
type Verdict struct {
	URL     string `json:"url"`
	Allowed bool   `json:"allowed"`
	Line    int    `json:"line,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// explain asks package robots about each URL.
func explain(body []byte, agent string, urls []string) []Verdict {
	if len(urls) == 0 {
		return nil
	}
	g := robots.Parse(body).Group(agent)
	out := make([]Verdict, 0, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		d := g.Explain(u.RequestURI())
		out = append(out, Verdict{URL: raw, Allowed: d.Allowed, Line: d.Line, Rule: d.Rule, Reason: d.Reason})
	}
	return out
}

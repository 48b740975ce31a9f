package robots

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

type parser struct {
	f        *File
	base     *url.URL
	regp     bool
	cur      *block   // current top-level group
	stack    []*block // open REGP `{ }` blocks
	skipped  int      // `{` lines beyond maxDepth still open
	seenLine bool     // a directive line was seen (Robot-version must be first)
	dropped  int

	seenSitemap map[string]bool
}

// maxSitemaps bounds the Sitemap URLs kept for one file.
const maxSitemaps = 10000

func newParser(opts Options) *parser {
	p := &parser{f: &File{dialect: RFC9309, global: &block{}, egress: slices.Clone(opts.EgressIPs)}}
	if opts.URL != "" {
		if u, err := url.Parse(opts.URL); err == nil && u.IsAbs() && u.Host != "" {
			p.base = u
		}
	}
	return p
}

func (p *parser) problem(line int, format string, args ...any) {
	if len(p.f.problems) >= maxProblems {
		p.dropped++
		return
	}
	p.f.problems = append(p.f.problems, Problem{Line: line, Message: fmt.Sprintf(format, args...)})
}

// decode returns the text to parse: at most MaxSize bytes, UTF-16 bridged to
// UTF-8 (RFC 9309 §2.3 allows implementors to bridge encoding mismatches),
// a UTF-8 byte order mark (also a truncated one) removed.
func (p *parser) decode(body []byte) []byte {
	if len(body) > MaxSize {
		p.problem(0, "file is longer than %d bytes; the rest is ignored", MaxSize)
		body = body[:MaxSize]
	}
	if len(body) >= 2 && (body[0] == 0xFF && body[1] == 0xFE || body[0] == 0xFE && body[1] == 0xFF) {
		le := body[0] == 0xFF
		u := make([]uint16, 0, len(body)/2)
		for i := 2; i+1 < len(body); i += 2 {
			if le {
				u = append(u, uint16(body[i])|uint16(body[i+1])<<8)
			} else {
				u = append(u, uint16(body[i])<<8|uint16(body[i+1]))
			}
		}
		p.problem(1, "file is UTF-16; read as UTF-8 after conversion (RFC 9309 requires UTF-8)")
		var out []byte
		for _, r := range utf16.Decode(u) {
			out = utf8.AppendRune(out, r)
		}
		return out
	}
	bom := []byte{0xEF, 0xBB, 0xBF}
	for n := 3; n > 0; n-- {
		if len(body) >= n && bytes.Equal(body[:n], bom[:n]) {
			return body[n:]
		}
	}
	return body
}

// lines calls fn for every line of text, split at LF, CR or CRLF, with
// 1-based numbers.
func lines(text []byte, fn func(n int, line []byte)) {
	n := 1
	for len(text) > 0 {
		i := bytes.IndexAny(text, "\r\n")
		if i < 0 {
			fn(n, text)
			return
		}
		fn(n, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
		n++
	}
}

func (p *parser) parse(body []byte) {
	text := p.decode(body)
	p.regp = detectREGP(text)
	if p.regp {
		p.f.dialect = REGP
	}
	lines(text, p.line)
	if len(p.stack) > 0 || p.skipped > 0 {
		p.problem(p.stack[0].line, "'{' is never closed")
	}
	if p.dropped > 0 {
		p.f.problems = append(p.f.problems, Problem{Line: 0, Message: fmt.Sprintf("%d more problems not listed", p.dropped)})
	}
	slices.SortStableFunc(p.f.problems, func(a, b Problem) int { return a.Line - b.Line })
}

// detectREGP reports whether the first directive line is `Robot-version:`
// with a version of 3.0 or higher (REGP §3.2.1).
func detectREGP(text []byte) bool {
	for len(text) > 0 {
		i := bytes.IndexAny(text, "\r\n")
		var l []byte
		if i < 0 {
			l, text = text, nil
		} else {
			l, text = text[:i], text[i+1:]
		}
		s := strings.TrimSpace(string(l))
		if s == "" || s[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(s, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "robot-version") {
			return false
		}
		v, _, _ = strings.Cut(v, "#")
		return versionAtLeast3(strings.TrimSpace(v))
	}
	return false
}

func versionAtLeast3(v string) bool {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 3
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func (p *parser) line(n int, raw []byte) {
	s := string(raw)
	// Comments: `#` (RFC 9309 §2.2); REGP uses `##` so that `#` can appear
	// in paths (§3.2), but a line starting with `#` is still a comment.
	if p.regp {
		if i := strings.Index(s, "##"); i >= 0 {
			s = s[:i]
		}
		if t := trimSpace(s); t != "" && t[0] == '#' {
			s = ""
		}
	} else if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	s = trimSpace(s)
	if s == "" {
		if p.regp && len(p.stack) == 0 && p.skipped == 0 && strings.TrimSpace(string(raw)) == "" {
			// REGP §3.2: a blank line ends a command sequence; what follows
			// without a User-agent line is the global command section.
			p.cur = nil
		}
		return
	}
	if p.regp && (s[0] == '{' || s[0] == '}') {
		p.brace(n, s)
		return
	}
	key, value, ok := strings.Cut(s, ":")
	if !ok {
		// The reference parser accepts whitespace for a missing colon when
		// the line has exactly two words.
		f := strings.Fields(s)
		if len(f) == 2 {
			if name := canonical(f[0]); name != "" {
				p.problem(n, "missing ':' after %q", f[0])
				p.directive(n, name, f[1])
				return
			}
		}
		p.problem(n, "line is not `name: value`; skipped")
		return
	}
	key = trimSpace(key)
	value = trimSpace(value)
	lk := strings.ToLower(key)
	name := canonical(lk)
	if name == "" {
		if (lk == "http" || lk == "https") && strings.HasPrefix(value, "//") {
			p.problem(n, "bare URL read as a Sitemap line")
			p.sitemap(n, key+":"+value)
			return
		}
		if len(key) > 40 {
			key = key[:40] + "…"
		}
		p.problem(n, "unknown directive %q; skipped", key)
		return
	}
	if name != lk {
		p.problem(n, "%q read as %q", key, canonicalSpelling(name))
	}
	p.directive(n, name, value)
}

func canonical(key string) string {
	key = strings.ToLower(key)
	if d, ok := directives[key]; ok {
		return d
	}
	return typos[key]
}

// canonicalSpelling gives the usual capitalisation, for messages.
func canonicalSpelling(name string) string {
	parts := strings.Split(name, "-")
	for i, s := range parts {
		if s != "" {
			parts[i] = strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return strings.Join(parts, "-")
}

func (p *parser) brace(n int, s string) {
	if rest := trimSpace(s[1:]); rest != "" {
		p.problem(n, "text after %q ignored", s[:1])
	}
	if s[0] == '{' {
		if len(p.stack) >= maxDepth {
			p.problem(n, "blocks nested deeper than %d; inner braces ignored", maxDepth)
			p.skipped++
			return
		}
		parent := p.target()
		child := &block{line: n}
		parent.children = append(parent.children, child)
		parent.started = true
		p.stack = append(p.stack, child)
		return
	}
	switch {
	case p.skipped > 0:
		p.skipped--
	case len(p.stack) > 0:
		p.stack = p.stack[:len(p.stack)-1]
	default:
		p.problem(n, "'}' without '{'")
	}
}

// target is the block that content lines go to.
func (p *parser) target() *block {
	if len(p.stack) > 0 {
		return p.stack[len(p.stack)-1]
	}
	if p.cur != nil {
		return p.cur
	}
	return p.f.global
}

// group returns the group a User-agent or Ip-* line belongs to, starting a
// new one after any rule (RFC 9309 §2.2.1; other records do not end a
// group) or, in REGP, after any content line.
func (p *parser) group(n int) *block {
	if len(p.stack) > 0 {
		return p.stack[len(p.stack)-1]
	}
	if p.cur == nil || p.cur.started {
		p.cur = &block{line: n}
		p.f.groups = append(p.f.groups, p.cur)
	}
	return p.cur
}

func (p *parser) directive(n int, name, value string) {
	first := !p.seenLine
	p.seenLine = true
	if !p.regp && regpOnly[name] {
		p.problem(n, "%s is a REGP directive, honoured only in files that start with `Robot-version: 3.0`; ignored", canonicalSpelling(name))
		return
	}
	switch name {
	case "robot-version":
		if !first {
			p.problem(n, "Robot-version must be the first line; ignored")
			return
		}
		p.f.version = value
		if _, _, ok := strings.Cut(value, "."); !ok || !validVersion(value) {
			p.problem(n, "Robot-version %q is not `N.N`", value)
		}
	case "last-modified":
		te, err := parseTimeExpr(value)
		if err != nil || !te.hasDate {
			p.problem(n, "Last-modified %q is not an RFC 822 date", value)
			return
		}
		p.f.lastMod = te.absolute()
	case "user-agent":
		p.userAgent(n, value)
	case "ip-allow", "ip-disallow":
		pat, err := parseIPPattern(value)
		if err != nil {
			p.problem(n, "%v; line skipped", err)
			return
		}
		if len(p.stack) > 0 {
			p.problem(n, "Ip-allow/Ip-disallow inside { } is not supported; ignored")
			return
		}
		g := p.group(n)
		g.ips = append(g.ips, ipRule{allow: name == "ip-allow", any: pat.any, pat: pat, line: n})
	case "allow", "disallow":
		p.rule(n, name == "allow", value)
	case "sitemap":
		p.sitemap(n, value)
	case "host":
		if value == "" {
			p.problem(n, "empty Host")
			return
		}
		if p.f.host != "" {
			p.problem(n, "second Host line ignored (the first one counts)")
			return
		}
		p.f.host = value
	default:
		p.record(n, name, value)
	}
}

func validVersion(v string) bool {
	a, b, _ := strings.Cut(v, ".")
	_, err1 := strconv.Atoi(a)
	_, err2 := strconv.Atoi(b)
	return err1 == nil && err2 == nil
}

func (p *parser) userAgent(n int, value string) {
	g := p.group(n)
	a := agentLine{line: n}
	if value != "" && value[0] == '*' && (len(value) == 1 || !isTokenChar(value[1], p.regp)) {
		// `*` followed by anything that cannot continue a token (space,
		// markup) is still the global group, as in the reference parser.
		a.global = true
		if len(value) > 1 {
			p.problem(n, "text after User-agent '*' ignored")
		}
	} else {
		i := 0
		for i < len(value) && isTokenChar(value[i], p.regp) {
			i++
		}
		a.token = value[:i]
		switch {
		case i == 0:
			p.problem(n, "User-agent %q has no product token; the group matches no crawler", value)
		case i < len(value):
			// RFC 9309 §2.2.1: the value is a product token; the reference
			// parser uses the part up to the first other character.
			p.problem(n, "User-agent %q: only the product token %q is matched", value, a.token)
		}
	}
	g.agents = append(g.agents, a)
}

func (p *parser) rule(n int, allow bool, value string) {
	t := p.target()
	if !p.regp && p.cur == nil {
		p.problem(n, "rule before any User-agent line; ignored")
		return
	}
	t.started = true
	if value == "" {
		// RFC 9309 §2.2.2: an empty value matches nothing.
		return
	}
	if value[0] != '/' && value[0] != '*' {
		p.problem(n, "path %q does not start with '/'", value)
	}
	pat := compilePattern(value, p.regp)
	t.rules = append(t.rules, rule{allow: allow, line: n, pat: pat})
	if len(p.stack) > 0 {
		t.scope = append(t.scope, pat)
	}
}

func (p *parser) sitemap(n int, value string) {
	value = strings.TrimSuffix(strings.TrimPrefix(value, "<"), ">")
	if value == "" {
		p.problem(n, "empty Sitemap")
		return
	}
	if p.base != nil {
		if u, err := url.Parse(value); err == nil && !u.IsAbs() {
			value = p.base.ResolveReference(u).String()
		}
	}
	if p.seenSitemap[value] {
		return
	}
	if len(p.f.sitemaps) >= maxSitemaps {
		p.problem(n, "more than %d Sitemap lines; ignored", maxSitemaps)
		return
	}
	if p.seenSitemap == nil {
		p.seenSitemap = make(map[string]bool)
	}
	p.seenSitemap[value] = true
	p.f.sitemaps = append(p.f.sitemaps, value)
}

func (p *parser) record(n int, name, value string) {
	t := p.target()
	if !p.regp && p.cur == nil {
		p.problem(n, "%s before any User-agent line; ignored", canonicalSpelling(name))
		return
	}
	r := record{kind: name, line: n, after: len(t.agents), text: value}
	var err error
	switch name {
	case "crawl-delay", "ip-delay":
		var junk bool
		r.dur, junk, err = parseSeconds(value)
		if junk && err == nil {
			p.problem(n, "text after the number in %q ignored", value)
		}
	case "request-rate", "ip-rate":
		r.rate, err = parseRate(value)
	case "visit-time", "time-forbidden":
		r.win, err = parseWindow(value)
	case "language", "encoding", "charset":
		for item := range strings.SplitSeq(value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				r.list = append(r.list, item)
			}
		}
	case "index-page", "change-always", "change-hourly", "change-daily",
		"change-weekly", "change-monthly", "change-yearly", "change-never":
		r.pat = compilePattern(value, true)
	}
	if err != nil {
		p.problem(n, "%s: %v; line skipped", canonicalSpelling(name), strings.TrimPrefix(err.Error(), "robots: "))
		return
	}
	if value == "" {
		p.problem(n, "empty %s; line skipped", canonicalSpelling(name))
		return
	}
	if p.regp {
		// RFC 9309 §2.2.4: other records must not end a group; in REGP any
		// content line ends the target segment.
		t.started = true
	}
	t.records = append(t.records, r)
}

// build computes the group for agent.
func (f *File) build(agent string) *Group {
	switch f.mode {
	case modeAllowAll:
		return &Group{dialect: f.dialect}
	case modeDisallowAll:
		return &Group{dialect: f.dialect, denyAll: true}
	}
	if f.dialect == REGP {
		return f.buildREGP(agent)
	}
	return f.buildRFC(agent)
}

func (f *File) buildRFC(agent string) *Group {
	type match struct {
		b   *block
		idx int // first matching User-agent line
	}
	var ms []match
	if agent != "" {
		for _, b := range f.groups {
			for i, a := range b.agents {
				if !a.global && a.token != "" && strings.EqualFold(a.token, agent) {
					ms = append(ms, match{b, i})
					break
				}
			}
		}
	}
	if len(ms) == 0 {
		for _, b := range f.groups {
			for i, a := range b.agents {
				if a.global {
					ms = append(ms, match{b, i})
					break
				}
			}
		}
	}
	g := &Group{dialect: RFC9309}
	for _, m := range ms {
		g.rules = append(g.rules, m.b.rules...)
		for i := range m.b.records {
			// An extension line holds for the User-agent lines before it
			// in its group (crawler-commons semantics, conformance set).
			if r := &m.b.records[i]; r.after > m.idx {
				g.set.apply(r, true)
			}
		}
	}
	// Longest pattern first, Allow first on a tie (RFC 9309 §2.2.2).
	slices.SortStableFunc(g.rules, func(a, b rule) int {
		if d := b.pat.priority() - a.pat.priority(); d != 0 {
			return d
		}
		switch {
		case a.allow == b.allow:
			return 0
		case a.allow:
			return -1
		default:
			return 1
		}
	})
	return g
}

func (f *File) buildREGP(agent string) *Group {
	var sel *block
	for _, b := range f.groups {
		if b.matchesREGP(agent) {
			sel = b
			break
		}
	}
	if sel == nil {
		for _, b := range f.groups {
			if b.hasGlobal() {
				sel = b
				break
			}
		}
	}
	g := &Group{dialect: REGP, defaultAllow: true}
	g.rules = append(g.rules, f.global.rules...)
	g.set = settingsOf(f.global.records, false)
	g.collect(f.global, agent, nil)
	first := f.global.rules
	if sel != nil {
		g.rules = append(g.rules, sel.rules...)
		g.set = g.set.over(settingsOf(sel.records, false))
		g.collect(sel, agent, nil)
		g.ips = sel.ips
		if len(sel.rules) > 0 {
			first = sel.rules
		}
		if len(f.egress) > 0 {
			for _, a := range f.egress {
				if !ipAllowed(sel.ips, a) {
					g.ipDenied = true
				}
			}
		}
	}
	slices.SortStableFunc(g.rules, func(a, b rule) int { return a.line - b.line })
	// §3.2.5: a first Allow whose value is not `*` or `/` implies a
	// `Disallow: /` before it; otherwise an `Allow: /` is implied.
	if len(first) > 0 && first[0].allow && first[0].pat.raw != "*" && first[0].pat.raw != "/" {
		g.defaultAllow = false
	}
	return g
}

// collect adds the nested blocks of b that apply to agent: their rules, and
// their settings either for the whole group or, when they name paths, for
// those paths only. parent is the enclosing scope (nil: the group).
func (g *Group) collect(b *block, agent string, parent *scope) {
	for _, c := range b.children {
		if len(c.agents) > 0 && !c.hasGlobal() && !c.matchesREGP(agent) {
			continue
		}
		g.rules = append(g.rules, c.rules...)
		cs := settingsOf(c.records, false)
		switch {
		case parent == nil && len(c.scope) == 0:
			g.set = g.set.over(cs)
			g.collect(c, agent, nil)
		default:
			sc := scope{pats: c.scope}
			base := g.set
			if parent != nil {
				base = parent.set
				if len(sc.pats) == 0 {
					sc.pats = parent.pats
				}
			}
			sc.set = base.over(cs)
			g.scopes = append(g.scopes, sc)
			g.collect(c, agent, &sc)
		}
	}
}

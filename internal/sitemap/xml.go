package sitemap

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// maxFieldFactor times Options.MaxURLLength bounds the text collected for
// one field (loc, lastmod, …): a field longer than a few URL lengths is
// garbage, and the bound keeps a hostile file from growing one string to
// MaxBytes.
const maxFieldFactor = 4

// parseXML streams a <urlset> or <sitemapindex>. Element names are matched
// by local name, case-insensitively, so that any namespace (or none, or a
// wrong one, as often seen) is accepted; elements of extensions (image:,
// video:, news:, xhtml:link) are skipped, including their own <loc>s,
// because only direct children of <url> and <sitemap> are read.
func (p *parser) parseXML(r io.Reader) error {
	d := xml.NewDecoder(r)
	// Non-strict mode accepts the commonest authoring error, a bare & in a
	// URL ("?a=1&b=2"), and unknown entities, as browsers would.
	d.Strict = false
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		rd, err := charset.NewReaderLabel(label, in)
		if err != nil {
			return nil, fmt.Errorf("sitemap: charset %q: %w", label, err)
		}
		return rd, nil
	}

	var (
		depth   int    // element depth; root is 1
		inEntry bool   // inside <url> or <sitemap> (at depth 2)
		field   string // direct child of the entry being collected ("" = none)
		text    strings.Builder
		long    bool // the field's text went over its bound
		e       fields
		line    int    // line of the entry's start
		root    string // the root element's name
	)
	maxField := maxFieldFactor * p.o.MaxURLLength
	for !p.full {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				if depth > 0 && !p.limitHit() {
					p.problem(ProblemSyntax, lineOf(d), "unexpected end of file")
					p.sm.Truncated = true
				}
				break
			}
			switch {
			case errors.Is(err, errCorrupt):
				p.problem(ProblemGzip, 0, err.Error())
				p.sm.Truncated = true
			case p.sm.Kind == "" && depth == 0:
				return fmt.Errorf("%w: %v", ErrFormat, err)
			case p.limitHit():
				// The size limit cut the XML: reported by Parse.
			default:
				p.problem(ProblemSyntax, lineOf(d), err.Error())
				p.sm.Truncated = true
			}
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := strings.ToLower(t.Name.Local)
			switch {
			case depth == 1:
				root = name
				switch name {
				case "urlset":
					p.sm.Kind = KindURLSet
				case "sitemapindex":
					p.sm.Kind = KindIndex
				default:
					return fmt.Errorf("%w: root element <%s>", ErrFormat, clip(t.Name.Local))
				}
			case depth == 2:
				want := "url"
				if p.sm.Kind == KindIndex {
					want = "sitemap"
				}
				if name == want {
					inEntry, e, line = true, fields{}, lineOf(d)
				} else if name == "url" || name == "sitemap" {
					p.problem(ProblemMixed, lineOf(d), "<"+name+"> in <"+root+">")
				}
			case depth == 3 && inEntry:
				field = name
				text.Reset()
				long = false
			}
		case xml.CharData:
			if field != "" && !long {
				if text.Len()+len(t) > maxField {
					long = true
				} else {
					text.Write(t)
				}
			}
		case xml.EndElement:
			switch {
			case depth == 3 && inEntry && field != "":
				e.set(field, text.String(), long)
				field = ""
			case depth == 2 && inEntry:
				inEntry = false
				p.entry(&e, line)
			}
			depth--
		}
	}
	if p.sm.Kind == "" {
		return fmt.Errorf("%w: no root element", ErrFormat)
	}
	return nil
}

// limitHit reports whether the size limit ended the input early.
func (p *parser) limitHit() bool { return p.lim != nil && p.lim.hit }

func lineOf(d *xml.Decoder) int {
	line, _ := d.InputPos()
	return line
}

// fields are the raw texts of one entry's children.
type fields struct {
	loc, lastmod, changefreq, priority, typ, srcloc string

	hasLoc, hasLastMod, hasChangeFreq, hasPriority, hasType, hasSrcLoc bool
	longLoc, longSrc                                                   bool // over the field bound
}

func (f *fields) set(name, v string, long bool) {
	switch name {
	case "loc":
		if !f.hasLoc { // the first loc wins
			f.loc, f.hasLoc, f.longLoc = v, true, long
		}
	case "lastmod":
		f.lastmod, f.hasLastMod = v, true
	case "changefreq":
		f.changefreq, f.hasChangeFreq = v, true
	case "priority":
		f.priority, f.hasPriority = v, true
	case "type":
		f.typ, f.hasType = v, true
	case "srcloc":
		f.srcloc, f.hasSrcLoc, f.longSrc = v, true, long
	}
}

// entry validates one <url> or <sitemap> and keeps it.
func (p *parser) entry(f *fields, line int) {
	if !f.hasLoc || strings.TrimSpace(f.loc) == "" {
		if f.longLoc {
			p.problem(ProblemURLTooLong, line, f.loc)
		} else {
			p.problem(ProblemMissingLoc, line, "")
		}
		return
	}
	if f.longLoc {
		p.problem(ProblemURLTooLong, line, f.loc)
		return
	}
	loc, other, ok := p.loc(f.loc, line)
	if !ok {
		return
	}
	if p.sm.Kind == KindIndex {
		p.addSitemap(loc, line)
		return
	}
	e := Entry{Loc: loc, Priority: -1, OtherHost: other}
	if f.hasLastMod {
		if t, ok := parseLastMod(f.lastmod); ok {
			e.LastMod = t
		} else {
			p.problem(ProblemBadLastMod, line, f.lastmod)
		}
	}
	if f.hasChangeFreq {
		cf := strings.ToLower(strings.TrimSpace(f.changefreq))
		if changeFreqs[cf] {
			e.ChangeFreq = cf
		} else {
			p.problem(ProblemBadChangeFreq, line, f.changefreq)
		}
	}
	if f.hasPriority {
		if pr, ok := parsePriority(f.priority); ok {
			e.Priority = pr
		} else {
			p.problem(ProblemBadPriority, line, f.priority)
		}
	}
	if f.hasType {
		switch t := strings.ToLower(strings.TrimSpace(f.typ)); t {
		case TypeData, TypeList, TypeOther:
			e.Type = t
		default:
			p.problem(ProblemBadType, line, f.typ)
		}
	}
	if f.hasSrcLoc {
		if s, ok := p.srcloc(f.srcloc, f.longSrc); ok {
			e.SrcLoc = s
		} else {
			p.problem(ProblemBadSrcLoc, line, f.srcloc)
		}
	}
	p.addURL(e, line)
}

// srcloc validates a REGP <srcloc>: an absolute http(s) URL (relative ones
// resolved against the sitemap) of bounded length. Its host is not checked:
// the origin of a crawler copy is the site's business (REGP §3).
func (p *parser) srcloc(s string, long bool) (string, bool) {
	if long {
		return "", false
	}
	s = cleanURL(s)
	if s == "" {
		return "", false
	}
	u, err := resolve(p.base, s, p.o.MaxURLLength)
	if err != nil {
		return "", false
	}
	out := u.String()
	if len(out) > p.o.MaxURLLength {
		return "", false
	}
	return out, true
}

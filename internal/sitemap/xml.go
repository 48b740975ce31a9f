package sitemap

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"time"

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
		own     strings.Builder // text directly inside a <url> or <sitemap>
		ownLong bool            // own went over the field bound
		line    int             // line of the entry's start
		root    string          // the root element's name
		// Entries are the elements named entryName at entryDepth:
		// <url>/<sitemap> under the root, an RSS 2.0 <item> under
		// <channel>, an RSS 1.0 <item> or an Atom <entry> under the root.
		entryDepth = 2
		entryName  string
	)
	maxField := maxFieldFactor * p.o.MaxURLLength
	// newEntry starts an entry at the decoder's line.
	newEntry := func() {
		e, line = fields{}, lineOf(d)
		own.Reset()
		ownLong = false
	}
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
					p.sm.Kind, entryName = KindURLSet, "url"
				case "sitemapindex":
					p.sm.Kind, entryName = KindIndex, "sitemap"
				case "rss": // RSS 2.0: rss/channel/item
					p.sm.Kind, entryName, entryDepth = KindFeed, "item", 3
				case "rdf": // RSS 1.0: rdf:RDF/item
					p.sm.Kind, entryName = KindFeed, "item"
				case "feed": // Atom: feed/entry
					p.sm.Kind, entryName = KindFeed, "entry"
				default:
					return fmt.Errorf("%w: root element <%s>", ErrFormat, clip(t.Name.Local))
				}
			case depth == entryDepth && !inEntry:
				if name == entryName {
					inEntry = true
					newEntry()
					if root == "rdf" {
						// RSS 1.0: the item's rdf:about is its URL.
						e.guid, e.hasGUID = attr(t.Attr, "about")
					}
				} else if p.sm.Kind != KindFeed && (name == "url" || name == "sitemap") {
					p.problem(ProblemMixed, lineOf(d), "<"+name+"> in <"+root+">")
				}
			case depth == entryDepth+1 && inEntry:
				if name == "loc" && e.hasLoc && p.sm.Kind != KindFeed {
					// A second <loc>: the generator forgot to close the
					// <url> or <sitemap> (seen in the wild; crawler-commons
					// testUnclosedSitemapIndexFile). The entry so far is
					// complete, and a new one starts with this loc.
					p.entry(&e, line)
					newEntry()
				}
				field = name
				text.Reset()
				long = false
				if p.sm.Kind == KindFeed {
					field = feedField(name)
					if name == "guid" {
						// RSS 2.0: a <guid> is the item's URL unless
						// isPermaLink says false; used when no <link>.
						field = "guid"
						if v, ok := attr(t.Attr, "ispermalink"); ok && strings.EqualFold(strings.TrimSpace(v), "false") {
							field = "guid-id"
						}
					}
					if name == "link" {
						// Atom (and atom:link in RSS): the href of the
						// first link that is the entry itself.
						if href, ok := feedLinkHref(t.Attr); ok {
							if href != "" && !e.hasLoc {
								e.set("loc", href, len(href) > maxField)
							}
							field = ""
						}
					}
				}
			}
		case xml.CharData:
			if field != "" && !long {
				if text.Len()+len(t) > maxField {
					long = true
				} else {
					text.Write(t)
				}
			} else if inEntry && depth == entryDepth && p.sm.Kind != KindFeed && !ownLong {
				if own.Len()+len(t) > maxField {
					ownLong = true
				} else {
					own.Write(t)
				}
			}
		case xml.EndElement:
			switch {
			case depth == entryDepth+1 && inEntry && field != "":
				if field != "loc" || strings.TrimSpace(text.String()) != "" || long {
					e.set(field, text.String(), long)
				}
				field = ""
			case depth == entryDepth && inEntry:
				inEntry = false
				if !e.hasLoc && (ownLong || strings.TrimSpace(own.String()) != "") {
					// <sitemap>URL</sitemap> without <loc>: one obvious
					// meaning (crawler-commons testMissingLocSitemapIndexFile).
					e.set("loc", own.String(), ownLong)
				}
				p.entry(&e, line)
			}
			depth--
		}
	}
	if inEntry && e.hasLoc && !p.full {
		// The input ended (cut, broken XML or corrupt gzip) inside an
		// entry whose <loc> was complete: the entry is kept. One cut
		// inside its <loc> is not, since the URL may be cut short.
		p.entry(&e, line)
	}
	if p.sm.Kind == "" {
		return fmt.Errorf("%w: no root element", ErrFormat)
	}
	return nil
}

// feedField maps a feed entry's child onto the sitemap field it stands for
// (sitemaps.org: RSS <link> and <pubDate>, Atom <link href> and
// <updated>); "" for the others.
func feedField(name string) string {
	switch name {
	case "link":
		return "loc"
	case "pubdate", "updated":
		return "lastmod"
	}
	return ""
}

// attr returns the value of the attribute of local name (lower case),
// matched case-insensitively, and whether it is there.
func attr(attrs []xml.Attr, name string) (string, bool) {
	for _, a := range attrs {
		if strings.EqualFold(a.Name.Local, name) {
			return a.Value, true
		}
	}
	return "", false
}

// feedLinkHref returns the href of an Atom <link> that points at the entry
// itself: no rel, or rel="alternate". A link without href is RSS's, whose
// URL is its text.
func feedLinkHref(attrs []xml.Attr) (string, bool) {
	href, has := attr(attrs, "href")
	if !has {
		return "", false
	}
	rel, _ := attr(attrs, "rel")
	if rel = strings.ToLower(strings.TrimSpace(rel)); rel != "" && rel != "alternate" {
		return "", true // another kind of link: neither href nor text
	}
	return href, true
}

// parsePubDate reads an RSS <pubDate>: an RFC 822 date, which net/mail
// parses in all its forms (day name or not, two- or four-digit years,
// zone as offset or name).
func parsePubDate(s string) (time.Time, bool) {
	t, err := mail.ParseDate(strings.TrimSpace(s))
	return t, err == nil
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
	// guid is a feed item's permalink (RSS 2.0 <guid>, RSS 1.0
	// rdf:about), its URL when it has no <link>; guidID says the feed
	// called it no permalink (isPermaLink="false").
	guid   string
	guidID bool

	hasLoc, hasLastMod, hasChangeFreq, hasPriority, hasType, hasSrcLoc, hasGUID bool
	longLoc, longSrc, longGUID                                                  bool // over the field bound
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
	case "guid", "guid-id":
		f.guid, f.hasGUID, f.longGUID, f.guidID = v, true, long, name == "guid-id"
	}
}

// entry validates one <url> or <sitemap> and keeps it.
func (p *parser) entry(f *fields, line int) {
	// A guid said not to be a permalink is used only when it is an
	// absolute http(s) URL all the same (crawler-commons testRSSFormat);
	// a tag: or urn: identifier is never fetched.
	if (!f.hasLoc || strings.TrimSpace(f.loc) == "") && f.hasGUID && strings.TrimSpace(f.guid) != "" &&
		(!f.guidID || absHTTP(cleanURL(f.guid))) {
		f.loc, f.hasLoc, f.longLoc = f.guid, true, f.longGUID
	}
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
		t, ok := parseLastMod(f.lastmod)
		if !ok && p.sm.Kind == KindFeed {
			t, ok = parsePubDate(f.lastmod)
		}
		if ok {
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

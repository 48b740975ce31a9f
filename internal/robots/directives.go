package robots

import (
	"strconv"
	"strings"
	"time"
)

// Directives are the page-level rules of a robots meta tag
// (`<meta name="robots" content="noindex, nofollow">`) or an X-Robots-Tag
// header (the polite-proxy thesis §4.3: "use the more restricting directives"). The zero
// value restricts nothing. Finding the tags in HTML is the extract
// package's job; this is their meaning.
type Directives struct {
	NoIndex      bool // do not index the page (also from `none`)
	NoFollow     bool // do not follow its links (also from `none`)
	NoArchive    bool // do not keep a cached copy (`noarchive`, `nocache`)
	NoSnippet    bool // show no snippet (`nosnippet`, `max-snippet:0`)
	NoImageIndex bool // do not index the page's images
	NoTranslate  bool // do not offer a translation
	// UnavailableAfter is the time after which the page should be dropped
	// (`unavailable_after: 2026-12-31`); zero when not given.
	UnavailableAfter time.Time
	// MaxSnippet is `max-snippet:N` in characters: 0 not given, -1 no
	// limit. `max-snippet:0` sets NoSnippet instead.
	MaxSnippet int
	// MaxImagePreview is `max-image-preview:` none, standard or large; ""
	// when not given.
	MaxImagePreview string
	// MaxVideoPreview is `max-video-preview:N` in seconds: 0 not given, -1
	// no limit; `max-video-preview:0` is stored as -2 (static image only).
	MaxVideoPreview int
}

// valued are the directive names that take a `name: value` form; any other
// `word:` prefix in an X-Robots-Tag value names a crawler.
var valued = map[string]bool{
	"unavailable_after": true, "max-snippet": true,
	"max-image-preview": true, "max-video-preview": true,
}

// maxDirectiveLen bounds the text ParseDirectives and XRobotsTag look at.
const maxDirectiveLen = 4096

// ParseDirectives parses the content of a robots meta tag: comma- or
// space-separated tokens in any case and spacing; `none` means noindex and
// nofollow, `all` and unknown tokens change nothing.
func ParseDirectives(content string) Directives {
	var d Directives
	d.parse(content, "")
	return d
}

// parse applies the directives of content. With agent set, a `name:`
// prefix that is not a directive selects the crawler the following
// directives are for (X-Robots-Tag form), and only those for agent or for
// no crawler are applied.
func (d *Directives) parse(content, agent string) {
	scope := ""
	if len(content) > maxDirectiveLen {
		content = content[:maxDirectiveLen]
	}
	parts := strings.Split(content, ",")
	for i := 0; i < len(parts); i++ {
		part := strings.TrimSpace(parts[i])
		if part == "" {
			continue
		}
		name, value, hasColon := strings.Cut(part, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if hasColon && !valued[name] && agent != "" && !strings.ContainsAny(name, " \t") {
			// `googlebot: noindex`: a crawler prefix.
			scope = name
			part = value
			if part == "" {
				continue
			}
			name, value, hasColon = strings.Cut(part, ":")
			name = strings.ToLower(strings.TrimSpace(name))
			value = strings.TrimSpace(value)
		}
		apply := scope == "" || strings.EqualFold(scope, agent)
		if hasColon && valued[name] {
			if name == "unavailable_after" {
				// Dates such as `Friday, 25-Jun-10 15:00:00 PST` contain a
				// comma: try joining the next part.
				t, ok := parseUnavailable(value)
				if !ok && i+1 < len(parts) {
					if t2, ok2 := parseUnavailable(value + "," + parts[i+1]); ok2 {
						t, ok = t2, true
						i++
					}
				}
				if ok && apply && (d.UnavailableAfter.IsZero() || t.Before(d.UnavailableAfter)) {
					d.UnavailableAfter = t
				}
				continue
			}
			if apply {
				d.setValued(name, value)
			}
			continue
		}
		if !apply {
			continue
		}
		for _, tok := range strings.Fields(part) {
			d.setToken(strings.ToLower(tok))
		}
	}
}

func (d *Directives) setToken(tok string) {
	switch tok {
	case "noindex":
		d.NoIndex = true
	case "nofollow":
		d.NoFollow = true
	case "none":
		d.NoIndex, d.NoFollow = true, true
	case "noarchive", "nocache":
		d.NoArchive = true
	case "nosnippet":
		d.NoSnippet = true
	case "noimageindex":
		d.NoImageIndex = true
	case "notranslate":
		d.NoTranslate = true
	}
}

func (d *Directives) setValued(name, value string) {
	switch name {
	case "max-snippet", "max-video-preview":
		n, err := strconv.Atoi(value)
		if err != nil || n < -1 {
			return
		}
		if name == "max-snippet" {
			if n == 0 {
				d.NoSnippet = true
				return
			}
			d.MaxSnippet = stricterLimit(d.MaxSnippet, n)
			return
		}
		if n == 0 {
			n = -2
		}
		if d.MaxVideoPreview == 0 || d.MaxVideoPreview == -1 || n == -2 || (n > 0 && n < d.MaxVideoPreview) {
			d.MaxVideoPreview = n
		}
	case "max-image-preview":
		v := strings.ToLower(value)
		rank := map[string]int{"none": 1, "standard": 2, "large": 3}
		if rank[v] == 0 {
			return
		}
		if d.MaxImagePreview == "" || rank[v] < rank[d.MaxImagePreview] {
			d.MaxImagePreview = v
		}
	}
}

// stricterLimit combines two limits where 0 is "not given" and -1 "none".
func stricterLimit(a, b int) int {
	switch {
	case a == 0 || a == -1:
		if b == -1 && a == 0 {
			return -1
		}
		if b == -1 {
			return a
		}
		return b
	case b == -1:
		return a
	default:
		return min(a, b)
	}
}

var unavailableLayouts = []string{
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02",
	time.RFC1123, time.RFC1123Z, time.RFC850, time.RFC822, time.RFC822Z,
	"2 Jan 2006 15:04:05 MST", "02 Jan 2006 15:04:05 MST", "2-Jan-2006 15:04:05 MST",
	"Monday, 02-Jan-06 15:04:05 MST", time.ANSIC,
}

func parseUnavailable(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, l := range unavailableLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// MetaApplies reports whether a meta tag with this name attribute speaks to
// the crawler with product token agent: `robots` addresses every crawler,
// otherwise the name must be the token (case-insensitive; the polite-proxy thesis §4.3).
func MetaApplies(name, agent string) bool {
	name = strings.TrimSpace(name)
	return strings.EqualFold(name, "robots") || agent != "" && strings.EqualFold(name, agent)
}

// XRobotsTag returns the directives of the X-Robots-Tag header values that
// apply to agent: unprefixed ones and those after `agent:`
// (`googlebot: noindex`); directives for other crawlers are ignored.
func XRobotsTag(values []string, agent string) Directives {
	var d Directives
	for i, v := range values {
		if i >= 64 {
			break // bound the work on hostile headers
		}
		a := agent
		if a == "" {
			// Still recognise prefixes so that they are not applied.
			a = "\x00"
		}
		d.parse(v, a)
	}
	return d
}

// Merge returns the union of d and o: every restriction of either, the
// earliest UnavailableAfter, the smaller limits.
func (d Directives) Merge(o Directives) Directives {
	r := d
	r.NoIndex = d.NoIndex || o.NoIndex
	r.NoFollow = d.NoFollow || o.NoFollow
	r.NoArchive = d.NoArchive || o.NoArchive
	r.NoSnippet = d.NoSnippet || o.NoSnippet
	r.NoImageIndex = d.NoImageIndex || o.NoImageIndex
	r.NoTranslate = d.NoTranslate || o.NoTranslate
	if !o.UnavailableAfter.IsZero() && (r.UnavailableAfter.IsZero() || o.UnavailableAfter.Before(r.UnavailableAfter)) {
		r.UnavailableAfter = o.UnavailableAfter
	}
	if o.MaxSnippet != 0 {
		r.MaxSnippet = stricterLimit(r.MaxSnippet, o.MaxSnippet)
	}
	if o.MaxImagePreview != "" {
		rank := map[string]int{"none": 1, "standard": 2, "large": 3}
		if r.MaxImagePreview == "" || rank[o.MaxImagePreview] < rank[r.MaxImagePreview] {
			r.MaxImagePreview = o.MaxImagePreview
		}
	}
	if o.MaxVideoPreview != 0 {
		switch {
		case r.MaxVideoPreview == 0 || r.MaxVideoPreview == -1:
			r.MaxVideoPreview = o.MaxVideoPreview
		case o.MaxVideoPreview == -2 || r.MaxVideoPreview == -2:
			r.MaxVideoPreview = -2
		case o.MaxVideoPreview > 0:
			r.MaxVideoPreview = min(r.MaxVideoPreview, o.MaxVideoPreview)
		}
	}
	return r
}

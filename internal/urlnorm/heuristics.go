package urlnorm

import (
	"slices"
	"strings"
)

// applyHeuristics runs the optional crawler rules on RFC-normalized parts.
// Order matters: session ids go first (a ";jsessionid=" path parameter
// hides the index file name), the directory-sort test needs the final
// query, trailing-slash removal comes after index-file removal.
func applyHeuristics(p *parts, o *Options) {
	if o.StripSessionIDs {
		if sp := stripSessionPathParams(p.path, o); sp != p.path {
			// "/a/..;jsessionid=1/b" hid a dot segment.
			p.path = removeDotSegments(sp)
		}
		if p.hasQuery {
			p.query = filterQuery(p.query, func(name string) bool { return !o.isSessionParam(name) })
		}
	}
	if o.StripDirectorySort && p.hasQuery && strings.HasSuffix(p.path, "/") && isDirectorySort(p.query) {
		// The Viuva Negra report §5.4: "VN trims URLs of Apache directory reorderings
		// at the last slash".
		p.query, p.hasQuery = "", false
	}
	if o.SortQuery && p.hasQuery {
		p.query = sortQuery(p.query)
	}
	if p.hasQuery && p.query == "" && o.RemoveEmptyQuery {
		p.hasQuery = false
	}
	if o.CollapseSlashes && strings.Contains(p.path, "//") {
		p.path = collapseSlashes(p.path)
	}
	// Index-file and trailing-slash removal feed each other
	// ("/index.html/index.html/"), so repeat until nothing changes; each
	// round removes a segment, so the loop is bounded by the path length.
	for {
		before := p.path
		if o.TrailingSlash == SlashRemove {
			p.path = trimTrailingSlashes(p.path)
		}
		if o.RemoveIndexFiles && !p.hasQuery {
			p.path = removeIndexFile(p.path, o.indexFiles())
		}
		if o.TrailingSlash == SlashRemove {
			p.path = trimTrailingSlashes(p.path)
		}
		if p.path == before {
			break
		}
	}
}

func trimTrailingSlashes(path string) string {
	if len(path) <= 1 || path[len(path)-1] != '/' {
		return path
	}
	path = strings.TrimRight(path, "/")
	if path == "" {
		return "/"
	}
	return path
}

// stripSessionPathParams removes ";name=value" path parameters whose name
// is a session id: the servlet form "/a/b.jsp;jsessionid=0A1B?x=1".
// An encoded ";" (%3B) is data and is left alone.
func stripSessionPathParams(path string, o *Options) string {
	if strings.IndexByte(path, ';') < 0 {
		return path
	}
	segs := strings.Split(path, "/")
	changed := false
	for i, seg := range segs {
		if strings.IndexByte(seg, ';') < 0 {
			continue
		}
		head, params, _ := strings.Cut(seg, ";")
		var kept []string
		for param := range strings.SplitSeq(params, ";") {
			name, _, _ := strings.Cut(param, "=")
			if o.isSessionParam(name) {
				changed = true
				continue
			}
			kept = append(kept, param)
		}
		if len(kept) == 0 {
			segs[i] = head
		} else {
			segs[i] = head + ";" + strings.Join(kept, ";")
		}
	}
	if !changed {
		return path
	}
	return strings.Join(segs, "/")
}

// filterQuery keeps the '&'-separated parameters whose name keep accepts.
// It allocates only when it removes something.
func filterQuery(q string, keep func(name string) bool) string {
	var b strings.Builder
	removed := false
	start := 0
	for start <= len(q) {
		end := strings.IndexByte(q[start:], '&')
		if end < 0 {
			end = len(q)
		} else {
			end += start
		}
		param := q[start:end]
		name, _, _ := strings.Cut(param, "=")
		if keep(name) {
			if removed {
				if b.Len() > 0 {
					b.WriteByte('&')
				}
				b.WriteString(param)
			}
		} else if !removed {
			removed = true
			b.WriteString(strings.TrimSuffix(q[:start], "&"))
		}
		start = end + 1
	}
	if !removed {
		return q
	}
	return b.String()
}

// isDirectorySort reports whether q holds only Apache mod_autoindex query
// arguments: C (sort column N, M, S, D), O (order A, D), F (format 0-2),
// V (version sort 0, 1), P (pattern), separated by ';' or '&'; or the
// pre-2.0 single form "N=D", "M=A", "S=A", "D=D" of the Viuva Negra report §5.4's
// example "apache.clix.pt/foundation/press/kit/?N=D".
func isDirectorySort(q string) bool {
	if q == "" {
		return false
	}
	n := 0
	for arg := range strings.FieldsFuncSeq(q, func(r rune) bool { return r == ';' || r == '&' }) {
		n++
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return false
		}
		switch k {
		case "C":
			if v != "N" && v != "M" && v != "S" && v != "D" {
				return false
			}
		case "O":
			if v != "A" && v != "D" {
				return false
			}
		case "F":
			if v != "0" && v != "1" && v != "2" {
				return false
			}
		case "V":
			if v != "0" && v != "1" {
				return false
			}
		case "P":
		case "N", "M", "S", "D":
			if v != "A" && v != "D" {
				return false
			}
		default:
			return false
		}
	}
	return n > 0
}

// sortQuery orders the '&'-separated parameters by name, stably.
func sortQuery(q string) string {
	if strings.IndexByte(q, '&') < 0 {
		return q
	}
	params := strings.Split(q, "&")
	slices.SortStableFunc(params, func(a, b string) int {
		an, _, _ := strings.Cut(a, "=")
		bn, _, _ := strings.Cut(b, "=")
		return strings.Compare(an, bn)
	})
	return strings.Join(params, "&")
}

func collapseSlashes(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && i > 0 && path[i-1] == '/' {
			continue
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// removeIndexFile drops a last segment equal to one of names:
// "/dir/index.html" becomes "/dir/". The match is exact: a path is
// case-sensitive (RFC 3986 §6.2.2.1), and on the usual servers
// "Index.html" is a file of its own (Texinfo names its index node so,
// beside the index.html of its top node).
func removeIndexFile(path string, names []string) string {
	i := strings.LastIndexByte(path, '/')
	last := path[i+1:]
	if last == "" {
		return path
	}
	for _, n := range names {
		if last == n {
			return path[:i+1]
		}
	}
	return path
}

package urlnorm

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
)

type normCase struct {
	name string
	in   string
	want string // "" when an error is expected
	err  error  // ErrMalformed or ErrScheme
}

func runNorm(t *testing.T, cases []normCase, o Options) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Helper()
			got, err := NormalizeString(tc.in, o)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("NormalizeString(%q) = %q, %v; want error %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeString(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("NormalizeString(%q) = %q, want %q", tc.in, got, tc.want)
			}
			checkURLForm(t, got, o)
		})
	}
}

// checkURLForm asserts the invariants FuzzNormalize checks: idempotence,
// Normalize's *url.URL printing the same text, and net/url accepting it.
func checkURLForm(t *testing.T, s string, o Options) {
	t.Helper()
	again, err := NormalizeString(s, o)
	if err != nil || again != s {
		t.Errorf("not idempotent: %q -> %q, %v", s, again, err)
	}
	u, err := Normalize(s, o)
	if err != nil {
		t.Fatalf("Normalize(%q): %v", s, err)
	}
	if u.String() != s {
		t.Errorf("Normalize(%q).String() = %q", s, u.String())
	}
	pu, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	if pu.String() != s {
		t.Errorf("url.Parse(%q).String() = %q", s, pu.String())
	}
}

// TestSeedExamples holds every URL example of the Viuva Negra report (§3.4 rules 1-9 and
// redirects, §4.1, §4.3.1, §5.3, §5.4) and the polite-proxy thesis (§2.2, §4.3, listings
// 3, 4 and 7), normalized with CrawlDefaults. Seed URLs written without a
// scheme get "http://".
func TestSeedExamples(t *testing.T) {
	cases := []normCase{
		// The Viuva Negra report §3.4 rule 1: "%3a" versus "%3A".
		{"001/3.4/rule1 hex case", "http://www.site.com/a%3ab", "http://www.site.com/a%3Ab", nil},
		{"001/3.4/rule1 upper kept", "http://www.site.com/a%3Ab", "http://www.site.com/a%3Ab", nil},
		// Rule 2: unreserved octets decoded.
		{"001/3.4/rule2 unreserved", "http://www.site.com/%7Euser/%41%2d%5F%2E%30", "http://www.site.com/~user/A-_.0", nil},
		// Rule 3: "www.site.com/ and WWW.SITE.COM/".
		{"001/3.4/rule3 lower", "http://www.site.com/", "http://www.site.com/", nil},
		{"001/3.4/rule3 upper", "http://WWW.SITE.COM/", "http://www.site.com/", nil},
		// Rule 4: "www.site.com/dir/./index.html to www.site.com/index.html".
		// The seed's result is a slip: RFC 3986 §5.2.4 removes only the
		// "." segment, giving /dir/index.html; with rule 9 the crawl form
		// is /dir/. Its intent (a ".." step) is the next case.
		{"001/3.4/rule4 dot", "http://www.site.com/dir/./index.html", "http://www.site.com/dir/", nil},
		{"001/3.4/rule4 dotdot", "http://www.site.com/dir/../index.html", "http://www.site.com/", nil},
		// Rule 5: "www.site.com:80/index.html to www.site.com/index.html".
		{"001/3.4/rule5 port", "http://www.site.com:80/index.html", "http://www.site.com/", nil},
		// Rule 6: "www.site.com and www.site.com/".
		{"001/3.4/rule6 empty path", "http://www.site.com", "http://www.site.com/", nil},
		// Rule 7: "www.site.com/file#anchor".
		{"001/3.4/rule7 anchor", "http://www.site.com/file#anchor", "http://www.site.com/file", nil},
		// Rule 9 names.
		{"001/3.4/rule9 index.html", "http://www.site.com/d/index.html", "http://www.site.com/d/", nil},
		{"001/3.4/rule9 index.htm", "http://www.site.com/d/index.htm", "http://www.site.com/d/", nil},
		{"001/3.4/rule9 index.shtml", "http://www.site.com/d/index.shtml", "http://www.site.com/d/", nil},
		// The report's "default.html" and "default.htm" are not in
		// DefaultIndexFiles: only IIS serves them for a directory, and
		// Sphinx names documentation pages so (Django's
		// topics/auth/default.html is not topics/auth/). They can be
		// given in IndexFiles (TestDefaultPageNames).
		{"001/3.4/rule9 default.html kept", "http://www.site.com/d/default.html", "http://www.site.com/d/default.html", nil},
		{"001/3.4/rule9 default.htm kept", "http://www.site.com/d/default.htm", "http://www.site.com/d/default.htm", nil},
		// Redirects: "www.somesite.com/dir" and its target ".../dir/" stay
		// two URLs (the crawler queues the redirect as a link).
		{"001/3.4/redirect source", "http://www.somesite.com/dir", "http://www.somesite.com/dir", nil},
		{"001/3.4/redirect target", "http://www.somesite.com/dir/", "http://www.somesite.com/dir/", nil},
		// §4.1 growing URLs: "www.site.com/spider/spider/..." is left for
		// the traps package (length and repetition limits).
		{"001/4.1/growing", "http://www.site.com/spider/spider/spider/", "http://www.site.com/spider/spider/spider/", nil},
		// §4.1 DNS wildcards: "blogspot.com".
		{"001/4.1/blogspot", "http://blogspot.com", "http://blogspot.com/", nil},
		// §4.3.1: "domain.pt", "subdomain.domain.pt".
		{"001/4.3.1/2nd level", "http://domain.pt", "http://domain.pt/", nil},
		{"001/4.3.1/3rd level", "http://subdomain.domain.pt", "http://subdomain.domain.pt/", nil},
		// §5.3 Figure 5: "www.thersite.com/orphan.html".
		{"001/5.3/deep link", "http://www.thersite.com/orphan.html", "http://www.thersite.com/orphan.html", nil},
		// §5.4: "apache.clix.pt/foundation/press/kit/?N=D" is converted to
		// "apache.clix.pt/foundation/press/kit/".
		{"001/5.4/apache sort", "http://apache.clix.pt/foundation/press/kit/?N=D", "http://apache.clix.pt/foundation/press/kit/", nil},
		// §5.4 session ids "phpsessid, sid, sessionid".
		{"001/5.4/phpsessid", "http://www.site.com/a.php?PHPSESSID=d41d8cd98f00b204&x=1", "http://www.site.com/a.php?x=1", nil},
		{"001/5.4/sid", "http://www.site.com/a.php?x=1&sid=abc", "http://www.site.com/a.php?x=1", nil},
		{"001/5.4/sessionid", "http://www.site.com/a.php?sessionid=abc", "http://www.site.com/a.php", nil},

		// The polite-proxy thesis §2.2: "http://www.google.com/index.html".
		{"000/2.2/typical", "http://www.google.com/index.html", "http://www.google.com/", nil},
		// The polite-proxy thesis §2.2 steps: lower case host, anchor, encoding of " " and
		// German umlauts, default pages, navigation operators, port 80.
		{"000/2.2/steps", "HTTP://WWW.Example.COM:80/a/../b/./Stra%c3%9fe%20x/Ü ö/index.html#top", "http://www.example.com/b/Stra%C3%9Fe%20x/%C3%9C%20%C3%B6/", nil},
		// The polite-proxy thesis §4.3: "www.google.com/robots.txt".
		{"000/4.3/robots", "http://www.google.com/robots.txt", "http://www.google.com/robots.txt", nil},
		// Listing 3: "Sitemap: https://twitter.com/sitemap.xml".
		{"000/listing3/sitemap", "https://twitter.com/sitemap.xml", "https://twitter.com/sitemap.xml", nil},
		// Listing 4: BBC sitemap and news URL.
		{"000/listing4/news", "http://www.bbc.co.uk/news/world-europe-40713813", "http://www.bbc.co.uk/news/world-europe-40713813", nil},
		{"000/listing4/sitemap", "http://www.bbc.co.uk/sitemaps/sitemap-uk-news-1.xml", "http://www.bbc.co.uk/sitemaps/sitemap-uk-news-1.xml", nil},
		// Listing 7 (politeness service request): derstandard.at URLs.
		{"000/listing7/lifestyle", "http://derstandard.at/Lifestyle", "http://derstandard.at/Lifestyle", nil},
		{"000/listing7/karriere", "http://derstandard.at/Karriere", "http://derstandard.at/Karriere", nil},
		{"000/listing7/suche", "http://derstandard.at/suche/12312", "http://derstandard.at/suche/12312", nil},
	}
	runNorm(t, cases, CrawlDefaults())
}

// TestSeedHeuristicsOff checks the seed rules that are off by default:
// The Viuva Negra report rule 8 and the polite-proxy thesis §2.2 steps 1 and 2.
// TestDefaultPageNames: the report's rule 9 names beyond the defaults
// apply when a crawl lists them.
func TestDefaultPageNames(t *testing.T) {
	o := CrawlDefaults()
	o.IndexFiles = append(slices.Clone(DefaultIndexFiles), "default.html", "default.htm")
	runNorm(t, []normCase{
		{"default.html", "http://www.site.com/d/default.html", "http://www.site.com/d/", nil},
		{"Default.HTM is not listed", "http://www.site.com/d/Default.HTM", "http://www.site.com/d/Default.HTM", nil},
		{"index.html", "http://www.site.com/d/index.html", "http://www.site.com/d/", nil},
	}, o)
}

func TestSeedHeuristicsOff(t *testing.T) {
	tests := []struct {
		name string
		in   string
		o    Options
		want string
	}{
		{"001/rule8 add www to domain.pt", "http://domain.pt/x", Options{WWW: WWWAdd}, "http://www.domain.pt/x"},
		{"001/rule8 not 3rd level", "http://subdomain.domain.pt/x", Options{WWW: WWWAdd}, "http://subdomain.domain.pt/x"},
		{"001/rule8 not public suffix", "http://blogspot.com/", Options{WWW: WWWAdd}, "http://blogspot.com/"},
		{"001/rule8 not co.uk", "http://co.uk/", Options{WWW: WWWAdd}, "http://co.uk/"},
		{"001/rule8 not IP", "http://10.0.0.1/", Options{WWW: WWWAdd}, "http://10.0.0.1/"},
		{"001/4.3.1 remove www", "http://www.site.com/", Options{WWW: WWWRemove}, "http://site.com/"},
		{"remove www twice", "http://www.www.site.com/", Options{WWW: WWWRemove}, "http://site.com/"},
		{"remove www keeps suffix", "http://www.co.uk/", Options{WWW: WWWRemove}, "http://www.co.uk/"},
		{"000/step1 lowercase path", "http://www.site.com/A/B%c3%9C?Q=X", Options{LowercasePath: true}, "http://www.site.com/a/b%C3%9C?q=x"},
		{"000/step2 trailing slash", "http://www.site.com/dir/", Options{TrailingSlash: SlashRemove}, "http://www.site.com/dir"},
		{"000/step2 root kept", "http://www.site.com/", Options{TrailingSlash: SlashRemove}, "http://www.site.com/"},
		{"000/step2 index then slash", "http://www.site.com/dir/index.html", Options{TrailingSlash: SlashRemove, RemoveIndexFiles: true}, "http://www.site.com/dir"},
		{"index chain", "http://h.com/index.html/index.html/", Options{TrailingSlash: SlashRemove, RemoveIndexFiles: true}, "http://h.com/"},
		{"000/step3 keep fragment", "http://www.site.com/f#Top%20x y", Options{KeepFragment: true}, "http://www.site.com/f#Top%20x%20y"},
		{"fragment keeps apostrophe", "http://h.com/?it's#it's", Options{KeepFragment: true}, "http://h.com/?it%27s#it's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeString(tc.in, tc.o)
			if err != nil {
				t.Fatalf("NormalizeString(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("NormalizeString(%q) = %q, want %q", tc.in, got, tc.want)
			}
			checkURLForm(t, got, tc.o)
		})
	}
}

// TestRFC3986 covers the always-on rules with zero Options.
func TestRFC3986(t *testing.T) {
	long := "http://h.com/" + strings.Repeat("a", DefaultMaxLength)
	cases := []normCase{
		{"scheme case", "HtTpS://h.com/", "https://h.com/", nil},
		{"https default port", "https://h.com:443/", "https://h.com/", nil},
		{"http port 443 kept", "http://h.com:443/", "http://h.com:443/", nil},
		{"https port 80 kept", "https://h.com:80/", "https://h.com:80/", nil},
		{"leading zero port", "http://h.com:0080/", "http://h.com/", nil},
		{"many leading zeros port", "http://f:00000000000000000000080/c", "http://f/c", nil},
		{"zeros port", "http://f:000/c", "http://f:0/c", nil},
		{"empty password", "https://test:@test", "https://test@test/", nil},
		{"empty userinfo", "http://:@www.example.com", "http://www.example.com/", nil},
		{"password only", "http://:p@h.com/", "http://:p@h.com/", nil},
		{"query apostrophe", "http://host/?q=it's#it's", "http://host/?q=it%27s", nil},
		{"ipv4 many leading zeros", "https://0000000000000000000000000000000000000000177.0.0.1", "https://127.0.0.1/", nil},
		{"ipv4 zeros hex", "http://0x000000000000000000007f.1/", "http://127.0.0.1/", nil},
		{"empty port", "http://h.com:/x", "http://h.com/x", nil},
		{"port 8080", "http://h.com:8080", "http://h.com:8080/", nil},
		{"trailing dot", "http://h.com./", "http://h.com/", nil},
		{"idna", "http://Bücher.example/", "http://xn--bcher-kva.example/", nil},
		{"idna fullwidth dot", "http://bücher。example/", "http://xn--bcher-kva.example/", nil},
		{"punycode upper", "http://XN--BCHER-KVA.example/", "http://xn--bcher-kva.example/", nil},
		{"percent host", "http://%77ww.h.com/", "http://www.h.com/", nil},
		{"underscore host", "http://my_site.h.com/", "http://my_site.h.com/", nil},
		{"ipv4", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/", nil},
		{"ipv4 short", "http://127.1/", "http://127.0.0.1/", nil},
		{"ipv4 hex", "http://0x7f.0.0.1/", "http://127.0.0.1/", nil},
		{"ipv4 integer", "http://2130706433/", "http://127.0.0.1/", nil},
		{"ipv4 octal", "http://0177.0.0.01/", "http://127.0.0.1/", nil},
		{"ipv6", "http://[2001:DB8:0:0::1]:80/", "http://[2001:db8::1]/", nil},
		{"ipv6 mapped", "http://[::FFFF:127.0.0.1]/", "http://[::ffff:127.0.0.1]/", nil},
		{"dot segments", "http://h.com/a/b/c/./../../g", "http://h.com/a/g", nil},
		{"dot past root", "http://h.com/../../a", "http://h.com/a", nil},
		{"trailing dotdot", "http://h.com/a/b/..", "http://h.com/a/", nil},
		{"encoded dots", "http://h.com/a/%2e%2E/b", "http://h.com/b", nil},
		{"encoded slash kept", "http://h.com/a%2fb", "http://h.com/a%2Fb", nil},
		{"space path", "http://h.com/a b", "http://h.com/a%20b", nil},
		{"space query", "http://h.com/?q=a b+c", "http://h.com/?q=a%20b+c", nil},
		{"non-ascii path", "http://h.com/ü", "http://h.com/%C3%BC", nil},
		{"stray percent", "http://h.com/100%?x=%zz&y=%4", "http://h.com/100%25?x=%25zz&y=%254", nil},
		{"reserved kept", "http://h.com/a:b@c;d=e,f!$&'()*+?x=/?:@", "http://h.com/a:b@c;d=e,f!$&'()*+?x=/?:@", nil},
		{"unsafe encoded", "http://h.com/<a>\"{|}^`[]", "http://h.com/%3Ca%3E%22%7B%7C%7D%5E%60%5B%5D", nil},
		{"empty query kept", "http://h.com/a?", "http://h.com/a?", nil},
		{"fragment removed", "http://h.com/a?b#c", "http://h.com/a?b", nil},
		{"index kept", "http://h.com/index.html", "http://h.com/index.html", nil},
		{"slash kept", "http://h.com/dir/", "http://h.com/dir/", nil},
		{"userinfo", "http://User:p%40ss@h.com/", "http://User:p%40ss@h.com/", nil},
		{"empty userinfo", "http://@h.com/", "http://h.com/", nil},
		{"userinfo at in password", "http://u:p@ss@h.com/", "http://u:p%40ss@h.com/", nil},
		{"spaces around", " \t http://h.com/a\n\tb \x00", "http://h.com/ab", nil},
		{"backslashes", `http:\\h.com\a\b?c\d`, "http://h.com/a/b?c%5Cd", nil},
		{"missing slashes", "http:h.com/x", "http://h.com/x", nil},
		{"three slashes", "http:///h.com/x", "http://h.com/x", nil},
		{"control byte", "http://h.com/a\x01b", "http://h.com/a%01b", nil},

		{"mailto", "mailto:a@h.com", "", ErrScheme},
		{"javascript", "javascript:void(0)", "", ErrScheme},
		{"ftp", "ftp://h.com/", "", ErrScheme},
		{"no scheme", "www.site.com/", "", ErrMalformed},
		{"relative", "/a/b", "", ErrMalformed},
		{"empty", "", "", ErrMalformed},
		{"empty host", "http:///", "", ErrMalformed},
		{"only userinfo", "http://u@/", "", ErrMalformed},
		{"space host", "http://a b.com/", "", ErrMalformed},
		{"bad host char", "http://a<b.com/", "", ErrMalformed},
		{"empty label", "http://a..com/", "", ErrMalformed},
		{"leading dot", "http://.a.com/", "", ErrMalformed},
		{"label too long", "http://" + strings.Repeat("a", 64) + ".com/", "", ErrMalformed},
		{"name too long", "http://" + strings.Repeat("a.", 130) + "com/", "", ErrMalformed},
		{"bad port", "http://h.com:8x/", "", ErrMalformed},
		{"port range", "http://h.com:65536/", "", ErrMalformed},
		{"huge port", "http://h.com:99999999999999999999999/", "", ErrMalformed},
		{"ipv4 part range", "http://256.0.0.1/", "", ErrMalformed},
		{"ipv4 five parts", "http://1.2.3.4.5/", "", ErrMalformed},
		{"ends in number", "http://example.123/", "", ErrMalformed},
		{"bad octal", "http://09.0.0.1/", "", ErrMalformed},
		{"ipv6 unclosed", "http://[::1/", "", ErrMalformed},
		{"ipv6 junk", "http://[::1]x/", "", ErrMalformed},
		{"ipv6 zone", "http://[fe80::1%25eth0]/", "", ErrMalformed},
		{"ipv6 invalid", "http://[1:2:3]/", "", ErrMalformed},
		{"ipv4 in brackets", "http://[127.0.0.1]/", "", ErrMalformed},
		{"bad punycode", "http://xn--a-ecp.xn--zz/", "", ErrMalformed},
		{"too long", long, "", ErrMalformed},
	}
	runNorm(t, cases, Options{})
}

func TestHeuristics(t *testing.T) {
	crawl := CrawlDefaults()
	cases := []normCase{
		{"jsessionid path", "http://h.com/a/b.jsp;jsessionid=0A1B2C?x=1", "http://h.com/a/b.jsp?x=1", nil},
		{"jsessionid upper", "http://h.com/b.jsp;JSESSIONID=0A1B2C", "http://h.com/b.jsp", nil},
		{"path param kept", "http://h.com/b;type=a;jsessionid=1", "http://h.com/b;type=a", nil},
		{"jsessionid hides index", "http://h.com/d/index.jsp;jsessionid=1", "http://h.com/d/", nil},
		{"jsessionid hides dotdot", "http://h.com/a/..;jsessionid=1/b", "http://h.com/b", nil},
		{"encoded semicolon kept", "http://h.com/b%3Bjsessionid=1", "http://h.com/b%3Bjsessionid=1", nil},
		{"aspsessionid prefix", "http://h.com/a.asp?ASPSESSIONIDQQGGQGPG=AB&id=3", "http://h.com/a.asp?id=3", nil},
		{"session middle", "http://h.com/?a=1&sid=2&b=3", "http://h.com/?a=1&b=3", nil},
		{"session all", "http://h.com/p?sid=1&PHPSESSID=2", "http://h.com/p", nil},
		{"session encoded name", "http://h.com/p?PHPSESS%49D=2&a", "http://h.com/p?a", nil},
		{"sidebar kept", "http://h.com/p?sidebar=1&asid=2", "http://h.com/p?sidebar=1&asid=2", nil},
		{"apache C O", "http://h.com/pub/?C=N;O=D", "http://h.com/pub/", nil},
		{"apache amp", "http://h.com/pub/?C=M&O=A", "http://h.com/pub/", nil},
		{"apache old", "http://h.com/pub/?S=A", "http://h.com/pub/", nil},
		{"apache F V P", "http://h.com/pub/?C=S;O=A;F=2;V=1;P=*.tar.gz", "http://h.com/pub/", nil},
		{"apache not dir", "http://h.com/pub/list.php?C=N;O=D", "http://h.com/pub/list.php?C=N;O=D", nil},
		{"apache other param", "http://h.com/pub/?C=N;O=D;x=1", "http://h.com/pub/?C=N;O=D;x=1", nil},
		{"apache bad value", "http://h.com/pub/?C=X", "http://h.com/pub/?C=X", nil},
		{"empty query", "http://h.com/a?", "http://h.com/a", nil},
		{"index with query kept", "http://h.com/index.php?id=3", "http://h.com/index.php?id=3", nil},
		// Texinfo writes index.html (its top node) and Index.html (its
		// index node) side by side: a case variant is a page of its own.
		{"index case kept", "http://h.com/Index.html", "http://h.com/Index.html", nil},
		{"index upper kept", "http://h.com/d/INDEX.HTM", "http://h.com/d/INDEX.HTM", nil},
		{"default.asp is no index by default", "http://h.com/Default.ASP", "http://h.com/Default.ASP", nil},
		{"not index", "http://h.com/myindex.html", "http://h.com/myindex.html", nil},
		{"query order kept", "http://h.com/?b=2&a=1", "http://h.com/?b=2&a=1", nil},
		{"slash kept", "http://h.com/dir/", "http://h.com/dir/", nil},
		{"www kept", "http://www.h.com/", "http://www.h.com/", nil},
	}
	runNorm(t, cases, crawl)

	dedup := []normCase{
		{"sorted", "http://www.h.com/dir/?b=2&a=1&a=0", "http://h.com/dir?a=1&a=0&b=2", nil},
		{"userinfo dropped", "http://u:p@www.h.com/x/index.html", "http://h.com/x", nil},
	}
	runNorm(t, dedup, DedupDefaults())

	custom := Options{
		RemoveIndexFiles: true, IndexFiles: []string{"home.htm"},
		StripSessionIDs: true, SessionIDParams: []string{"token", "utm_*"},
		CollapseSlashes: true,
	}
	runNorm(t, []normCase{
		{"custom index", "http://h.com/a//b/home.htm", "http://h.com/a/b/", nil},
		{"custom index default kept", "http://h.com/index.html", "http://h.com/index.html", nil},
		{"custom params", "http://h.com/?utm_source=x&token=1&PHPSESSID=2", "http://h.com/?PHPSESSID=2", nil},
	}, custom)
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"crawl", CrawlDefaults(), true},
		{"dedup", DedupDefaults(), true},
		{"negative length", Options{MaxLength: -1}, false},
		{"bad slash", Options{TrailingSlash: 9}, false},
		{"bad www", Options{WWW: 9}, false},
		{"empty index", Options{IndexFiles: []string{""}}, false},
		{"slash in index", Options{IndexFiles: []string{"a/b"}}, false},
		{"star middle", Options{SessionIDParams: []string{"a*b"}}, false},
		{"star alone", Options{SessionIDParams: []string{"*"}}, false},
		{"too many", Options{SessionIDParams: make([]string, 300)}, false},
		{"prefix ok", Options{SessionIDParams: []string{"utm_*"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if _, err := NormalizeString("http://h.com/", Options{MaxLength: -1}); err == nil {
		t.Error("NormalizeString with MaxLength -1: no error")
	}
	if _, err := NormalizeString("http://h.com/abcdef", Options{MaxLength: 10}); !errors.Is(err, ErrMalformed) {
		t.Errorf("NormalizeString over MaxLength: %v, want ErrMalformed", err)
	}
}

func TestNormalizeURLFields(t *testing.T) {
	u, err := Normalize("http://h.com:8080/a%2Fb%20c/(x)?q=1#f", Options{KeepFragment: true})
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "http" || u.Host != "h.com:8080" || u.Path != "/a/b c/(x)" || u.RawPath != "/a%2Fb%20c/(x)" || u.RawQuery != "q=1" || u.Fragment != "f" {
		t.Errorf("fields: %#v", u)
	}
	if u.Hostname() != "h.com" || u.Port() != "8080" {
		t.Errorf("Hostname/Port = %q %q", u.Hostname(), u.Port())
	}
}

// TestSeedReferences normalizes the URLs cited in the footnotes and
// bibliographies of the polite-proxy thesis and the Viuva Negra report, and the Figure 5 site of the Viuva Negra report
// §5.3, with CrawlDefaults: real-world URLs that must come out unchanged
// but for fragments and index files.
func TestSeedReferences(t *testing.T) {
	same := []string{
		"http://www.google.com/schemas/sitemap-news/0.9",
		"http://www.google.com/schemas/sitemap-video/1.1",
		"http://www.sitemaps.org/schemas/sitemap/0.9",
		"http://www.rfc-editor.org/rfc/rfc1738.txt",
		"http://www.rfc-editor.org/rfc/rfc2616.txt",
		"http://www.rfc-editor.org/rfc/rfc3986.txt",
		"http://www.rfc-editor.org/rfc/rfc7234.txt",
		"http://infinispan.org/",
		"http://www.ehcache.org/",
		"https://docs.spring.io/spring-boot/docs/current/reference/html/boot-features-external-config.html",
		"https://docs.spring.io/spring/docs/current/spring-framework-reference/html/beans.html",
		"https://github.com/Netflix/zuul",
		"https://github.com/PatrickRi/Zuul_proxy",
		"https://github.com/ben-manes/caffeine",
		"https://github.com/ben-manes/caffeine/wiki/Benchmarks",
		"https://github.com/spring-projects/spring-boot/tree/master/spring-boot-actuator",
		"https://northcutt.com/tools/free-seo-tools/google-indexed-pages-checker/",
		"https://projects.spring.io/spring-boot/",
		"https://www.w3.org/XML/Query/",
		"https://www.w3schools.com/tags/ref_urlencode.asp",
		"http://news.netcraft.com/archives/web_server_survey.html",
		"http://sourceforge.net/projects/hsqldb/",
		"http://www.cs.princeton.edu/appel/modern/java/JLex/",
		"http://www.di.fc.ul.pt/tech-reports",
		"http://www.jahns-home.de/rentmei/html/sptraps.html",
		"http://www.robotstxt.org/wc/meta-user.html",
		"http://www.robotstxt.org/wc/norobots.html",
		"http://www.w3.org/TR/WD-session-id.html",
		// An index file with a query is kept: only bare index names go.
		"http://www.oracle.com/ip/index.html?content.html",
	}
	cases := make([]normCase, 0, len(same)+3)
	for _, s := range same {
		cases = append(cases, normCase{s, s, s, nil})
	}
	cases = append(cases,
		normCase{"000/fn15 fragment", "http://docs.spring.io/spring-boot/docs/current/reference/htmlsingle/#production-ready-endpoints", "http://docs.spring.io/spring-boot/docs/current/reference/htmlsingle/", nil},
		normCase{"000/fn16 fragment", "http://infinispan.org/docs/stable/user_guide/user_guide.html#jmx:chapter", "http://infinispan.org/docs/stable/user_guide/user_guide.html", nil},
		normCase{"001/fig5 mysite", "http://www.mysite.com", "http://www.mysite.com/", nil},
	)
	runNorm(t, cases, CrawlDefaults())
}

func TestIRILength(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{"", 0},
		{"http://a.test/", 14},
		{"http://a.test/wiki/%D0%9C", 20},                   // М
		{"http://a.test/%E4%B8%AD%E6%96%87", 16},            // 中文
		{"http://a.test/%F0%9F%98%80", 15},                  // one emoji, four bytes
		{"http://a.test/a%20b", 17},                         // any triplet is one character
		{"http://a.test/%80%80%80%80%80", 19},               // bytes that are not UTF-8: one each
		{"http://a.test/%D0", 15},                           // a sequence cut short
		{"http://a.test/%D0%9C%D0", 16},                     // a full one, then a cut one
		{"http://a.test/%zz%4", len("http://a.test/%zz%4")}, // not triplets
		{"http://a.test/М", 15},                             // raw UTF-8 too
	} {
		if got := IRILength(tc.raw); got != tc.want {
			t.Errorf("IRILength(%q) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}

package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
)

// cacheSuite is the conformance table run by TestCacheSuite. Sections
// follow cache-tests' suites; each case's name is the cache-tests id it
// follows, or our own name. docs/proxy.md ("The cache against RFC 9111")
// lists what is left out and where the proxy deliberately differs.
var cacheSuite = concatCases(
	freshnessCases(),
	parseCases(),
	expiresCases(),
	responseDirectiveCases(),
	heuristicCases(),
	statusCases(),
	requestDirectiveCases(),
	varyCases(),
	conditionalCases(),
	headerCases(),
	update304Cases(),
	invalidationCases(),
	authorizationCases(),
	otherCases(),
	thesisCases(),
)

func concatCases(groups ...[]csCase) (all []csCase) {
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// stored: a case that stores a response with resp, moves the clock by
// pause, then expects next.
func stored(name string, resp []string, pause int, next csStep) csCase {
	return csCase{name: name, steps: []csStep{get(resp...).after(sec(pause)), next}}
}

// Cache-Control freshness (cc-freshness), s-maxage first in a shared cache.
func freshnessCases() []csCase {
	return []csCase{
		stored("freshness-max-age", cc("max-age=3600"), 3, hit().seeing("Age", ">2", "Cache-Status", "courtesy; hit; ttl=3597")),
		stored("freshness-max-age-stale", fields(cc("max-age=2")), 3, fromOrigin().seeing("Cache-Status", "courtesy; fwd=stale; fwd-status=200")),
		stored("freshness-max-age-0", cc("max-age=0"), 0, fromOrigin()),
		stored("freshness-max-age-age", fields(cc("max-age=3600"), []string{"Age", "7200"}), 0, fromOrigin()),
		stored("freshness-max-age-0-expires", fields(cc("max-age=0"), []string{"Expires", "@3600"}), 0, fromOrigin()),
		stored("freshness-max-age-negative", cc("max-age=-3600"), 0, fromOrigin()),
		stored("freshness-max-age-expires", fields(cc("max-age=3600"), []string{"Expires", "@-7200"}), 0, hit()),
		stored("freshness-max-age-expires-invalid", fields(cc("max-age=3600"), []string{"Expires", "0"}), 0, hit()),
		stored("freshness-max-age-extension", cc("foobar, max-age=3600"), 0, hit()),
		stored("freshness-max-age-case-insenstive", cc("MaX-aGe=3600"), 0, hit()),
		stored("freshness-max-age-max-plus", cc("max-age=99999999999"), 0, hit()),
		stored("freshness-max-age-max-minus-1", cc("max-age=2147483647"), 0, hit()),
		stored("freshness-max-age-max", cc("max-age=2147483648"), 0, hit()),
		stored("freshness-max-age-max-plus-1", cc("max-age=2147483649"), 0, hit()),
		stored("freshness-s-maxage-shared", cc("s-maxage=3600"), 0, hit()),
		stored("freshness-max-age-s-maxage-shared-longer", cc("max-age=3600, s-maxage=1"), 2, fromOrigin()),
		stored("freshness-max-age-s-maxage-shared-longer-reversed", cc("s-maxage=1, max-age=3600"), 2, fromOrigin()),
		stored("freshness-max-age-s-maxage-shared-longer-multiple", fields(cc("max-age=3600"), cc("s-maxage=1")), 2, fromOrigin()),
		stored("freshness-max-age-s-maxage-shared-shorter", cc("max-age=1, s-maxage=3600"), 2, hit()),
		stored("freshness-max-age-s-maxage-shared-shorter-expires", fields(cc("max-age=0, s-maxage=3600"), []string{"Expires", "@-10"}), 0, hit()),
		stored("freshness-max-age-date", fields(cc("max-age=3600"), []string{"Date", "@-7200"}), 0, fromOrigin()),
		// Heuristics need Last-Modified: without it (and without explicit
		// freshness) a response is stored but never reused unvalidated.
		stored("freshness-none", nil, 0, fromOrigin()),
	}
}

// Cache-Control and Age parsing (cc-parse, age-parse).
func parseCases() []csCase {
	age := func(name string, fresh bool, ages ...string) csCase {
		resp := cc("max-age=3600")
		for _, a := range ages {
			resp = append(resp, "Age", a)
		}
		next := fromOrigin()
		if fresh {
			next = hit()
		}
		return stored(name, resp, 0, next)
	}
	return []csCase{
		stored("freshness-max-age-ignore-quoted", cc(`extension="max-age=3600", max-age=1`), 2, fromOrigin()),
		stored("freshness-max-age-ignore-quoted-rev", cc(`max-age=1, extension="max-age=3600"`), 2, fromOrigin()),
		stored("freshness-max-age-leading-zero", cc("max-age=003600"), 0, hit()),
		stored("freshness-max-age-single-quoted", cc("max-age='3600'"), 0, fromOrigin()),
		stored("freshness-max-age-two-fresh-stale-sameline", cc("max-age=1800, max-age=1"), 2, hit()),
		stored("freshness-max-age-two-fresh-stale-sepline", fields(cc("max-age=1800"), cc("max-age=1")), 2, hit()),
		// The first occurrence counts (§4.2.1 allows it, or staleness).
		stored("freshness-max-age-two-stale-fresh-sameline", cc("max-age=1, max-age=1800"), 2, fromOrigin()),
		stored("freshness-max-age-two-stale-fresh-sepline", fields(cc("max-age=1"), cc("max-age=1800")), 2, fromOrigin()),
		stored("freshness-max-age-quoted", cc(`max-age="3600"`), 0, hit()),
		// Whitespace around "=" is tolerated (docs/proxy.md).
		stored("freshness-max-age-space-before-equals", cc("max-age =3600"), 0, hit()),
		stored("freshness-max-age-space-after-equals", cc("max-age= 3600"), 0, hit()),
		stored("freshness-max-age-decimal-zero", cc("max-age=3600.0"), 0, fromOrigin()),
		stored("freshness-max-age-a100", cc("max-age=a3600"), 0, fromOrigin()),
		age("age-parse-nonnumeric", true, "abc"),
		age("age-parse-negative", true, "-7200"),
		age("age-parse-float", true, "7200.0"),
		age("age-parse-large-minus-one", false, "2147483647"),
		age("age-parse-large", false, "2147483648"),
		age("age-parse-larger", false, "2147483649"),
		age("age-parse-suffix", false, "7200, 0"),
		age("age-parse-prefix", true, "0, 7200"),
		age("age-parse-suffix-twoline", false, "7200", "0"),
		age("age-parse-prefix-twoline", true, "0", "7200"),
		age("age-parse-dup-0", true, "0, 0"),
		age("age-parse-dup-0-twoline", true, "0", "0"),
		stored("age-parse-dup-old", []string{"Cache-Control", "max-age=10000", "Age", "3600", "Age", "3600"}, 0, hit()),
	}
}

// Expires freshness and parsing (expires, expires-parse): an invalid date
// means already expired (RFC 9111 §5.3).
func expiresCases() []csCase {
	exp := func(name, value string, fresh bool) csCase {
		next := fromOrigin()
		if fresh {
			next = hit()
		}
		return stored(name, []string{"Expires", value}, 0, next)
	}
	return []csCase{
		exp("freshness-expires-future", "@2592000", true),
		exp("freshness-expires-past", "@-2592000", false),
		exp("freshness-expires-present", "@0", false),
		stored("freshness-expires-old-date", []string{"Expires", "@300", "Date", "@400"}, 0, fromOrigin()),
		exp("freshness-expires-invalid", "0", false),
		stored("freshness-expires-invalid-date", []string{"Date", "foo", "Expires", "@10"}, 0, hit()),
		stored("freshness-expires-no-date", []string{"Date", "-", "Expires", "@10"}, 0, hit()),
		stored("freshness-expires-age-slow-date", []string{"Date", "@-10", "Expires", "@10", "Age", "25"}, 0, fromOrigin()),
		stored("freshness-expires-age-fast-date", []string{"Date", "@10", "Expires", "@20", "Age", "15"}, 0, fromOrigin()),
		exp("freshness-expires-32bit", "Tue, 19 Jan 2038 14:14:08 GMT", true),
		exp("freshness-expires-far-future", "Sun, 21 Nov 2286 04:46:39 GMT", true),
		exp("freshness-expires-rfc850", "Thursday, 18-Aug-50 02:01:18 GMT", true),
		exp("freshness-expires-ansi-c", "Thu Aug  8 02:01:18 2050", true),
		exp("freshness-expires-wrong-case-weekday", "THU, 18 Aug 2050 02:01:18 GMT", true),
		exp("freshness-expires-wrong-case-month", "Thu, 18 AUG 2050 02:01:18 GMT", true),
		exp("freshness-expires-invalid-utc", "Thu, 18 Aug 2050 02:01:18 UTC", false),
		exp("freshness-expires-invalid-aest", "Thu, 18 Aug 2050 02:01:18 AEST", false),
		exp("freshness-expires-invalid-2-digit-year", "Thu, 18 Aug 50 02:01:18 GMT", false),
		exp("freshness-expires-invalid-no-comma", "Thu 18 Aug 2050 02:01:18 GMT", false),
		exp("freshness-expires-invalid-multiple-spaces", "Thu, 18  Aug  2050 02:01:18 GMT", false),
		exp("freshness-expires-invalid-date-dashes", "Thu, 18-Aug-2050 02:01:18 GMT", false),
		exp("freshness-expires-invalid-time-periods", "Thu, 18 Aug 2050 02.01.18 GMT", false),
		exp("freshness-expires-invalid-1-digit-hour", "Thu, 18 Aug 2050 2:01:18 GMT", false),
		exp("expires-invalid-rfc850-1-digit-hour", "Thursday, 18-Aug-50 2:01:18 GMT", false),
		exp("expires-invalid-asctime-1-digit-hour", "Thu Aug  8 2:01:18 2050", false),
		exp("expires-invalid-trailing-garbage", "Thu, 18 Aug 2050 02:01:18 GMT x", false),
		stored("freshness-expires-invalid-multiple-lines", []string{"Expires", "Thu, 18 Aug 2050 02:01:18 GMT", "Expires", "Thu, 18 Aug 2050 02:01:19 GMT"}, 0, fromOrigin()),
	}
}

// Response directives (cc-response, stale): private and no-store are
// never stored by a shared cache; no-cache, must-revalidate,
// proxy-revalidate and s-maxage forbid unvalidated reuse once stale.
func responseDirectiveCases() []csCase {
	etag := []string{"ETag", `"abcd"`}
	mustNotServeStale := func(name, directives string) csCase {
		return csCase{name: name, steps: []csStep{
			get(cc(directives)...).after(sec(3)),
			refused(http.StatusBadGateway).hangsUp(),
		}}
	}
	return []csCase{
		stored("cc-resp-private-shared", cc("private, max-age=3600"), 0, fromOrigin()),
		stored("cc-resp-private-qualified", cc(`private="Set-Cookie", max-age=3600`), 0, fromOrigin()),
		stored("cc-resp-private-case-insensitive", cc("PRIVATE, max-age=3600"), 0, fromOrigin()),
		stored("cc-resp-private-second-line", fields(cc("max-age=3600"), cc("private")), 0, fromOrigin()),
		stored("cc-resp-private-s-maxage", cc("s-maxage=3600, public, private"), 0, fromOrigin()),
		// A private past the parser's bound (64 directives) was not read,
		// and the response stored and shared.
		stored("cc-resp-private-past-parse-bound", cc("max-age=3600, "+strings.Repeat("public, ", httpcache.MaxDirectives-1)+"private"), 0, fromOrigin()),
		stored("cc-resp-no-store", cc("no-store"), 0, fromOrigin()),
		stored("cc-resp-no-store-case-insensitive", cc("No-StOrE"), 0, fromOrigin()),
		stored("cc-resp-no-store-fresh", fields(cc("max-age=10000, no-store"), []string{"Expires", "@10000"}), 0, fromOrigin()),
		{name: "cc-resp-no-store-old-new", steps: []csStep{
			get("Cache-Control", "max-age=10000", "A", "1"),
			get("Cache-Control", "no-store", "A", "2").with("Cache-Control", "no-cache").expect(csFromOrigin),
			hit().seeing("A", "1"),
		}},
		{name: "cc-resp-no-store-old-max-age", steps: []csStep{
			get("Cache-Control", "max-age=10000", "A", "1"),
			get("Cache-Control", "no-store, max-age=0", "A", "2").with("Cache-Control", "no-cache").expect(csFromOrigin),
			hit().seeing("A", "1"),
		}},
		stored("cc-resp-no-cache", fields(cc("max-age=10000, no-cache"), []string{"Expires", "@10000"}), 0, fromOrigin()),
		stored("cc-resp-no-cache-case-insensitive", fields(cc("max-age=10000, No-CaChE"), []string{"Expires", "@10000"}), 0, fromOrigin()),
		stored("cc-resp-no-cache-revalidate", fields(cc("no-cache"), etag), 0, revalidated(etag...)),
		stored("cc-resp-no-cache-revalidate-fresh", fields(cc("max-age=10000, no-cache"), etag), 0,
			revalidated(etag...).seeing("Cache-Status", "courtesy; fwd=stale; fwd-status=304; ttl=10000")),
		stored("cc-resp-must-revalidate-fresh", fields(cc("max-age=10000, must-revalidate"), etag), 0, hit()),
		stored("cc-resp-must-revalidate-stale", fields(cc("max-age=2, must-revalidate"), etag), 3, revalidated(etag...)),
		stored("status-200-must-understand", cc("max-age=3600, no-store, must-understand"), 0, hit()),
		{name: "status-599-must-understand", steps: []csStep{
			get(cc("max-age=3600, no-store, must-understand")...).code(599), fromOrigin().code(599),
		}},
		mustNotServeStale("stale-close-must-revalidate", "max-age=2, must-revalidate"),
		mustNotServeStale("stale-close-proxy-revalidate", "max-age=2, proxy-revalidate"),
		mustNotServeStale("stale-close-no-cache", "max-age=2, no-cache"),
		mustNotServeStale("stale-close-s-maxage=2", "max-age=2, s-maxage=2"),
		// The proxy never serves stale on error (no stale-if-error).
		mustNotServeStale("stale-close", "max-age=2"),
		{name: "stale-while-revalidate-window", steps: []csStep{
			get("Cache-Control", "max-age=1, stale-while-revalidate=4", "ETag", `"abc"`).after(sec(3)),
			fromOrigin("Cache-Control", "no-cache", "ETag", `"def"`),
			fromOrigin(),
		}},
	}
}

// Heuristic freshness (heuristic): only heuristically cacheable statuses
// (RFC 9110 §15.1), only from Last-Modified.
func heuristicCases() []csCase {
	var cs []csCase
	lm := []string{"Last-Modified", "@-86400"}
	for _, st := range []int{200, 203, 204, 404, 405, 410, 414, 501} {
		cs = append(cs, csCase{name: "heuristic-" + strconv.Itoa(st) + "-cached", steps: []csStep{
			get(lm...).code(st), hit().answering(st),
		}})
	}
	for _, st := range []int{201, 202, 403, 502, 503, 504, 599} {
		cs = append(cs, csCase{name: "heuristic-" + strconv.Itoa(st) + "-not_cached", steps: []csStep{
			get(lm...).code(st), fromOrigin().code(st),
		}})
	}
	return append(cs,
		stored("heuristic-delta-600", []string{"Last-Modified", "@-600"}, 30, hit()),
		stored("heuristic-delta-86400", []string{"Last-Modified", "@-86400"}, 3, hit()),
		// Statuses the cache does not know are not stored, even public
		// (docs/proxy.md).
		csCase{name: "heuristic-599-cached", steps: []csStep{
			get("Last-Modified", "@-86400", "Cache-Control", "public").code(599), fromOrigin().code(599),
		}},
		stored("heuristic-10-percent", []string{"Last-Modified", "@-600"}, 61, fromOrigin()),
		stored("heuristic-future-last-modified", []string{"Last-Modified", "@600"}, 0, fromOrigin()),
	)
}

// Status codes cacheable by default (status): fresh ones reused, stale
// ones never.
func statusCases() []csCase {
	var cs []csCase
	for _, st := range []int{200, 203, 204, 301, 302, 303, 307, 308, 400, 404, 410, 500, 502, 503, 504} {
		cs = append(cs, csCase{name: "status-" + strconv.Itoa(st) + "-fresh", steps: []csStep{
			get(cc("max-age=100000")...).code(st), hit().answering(st),
		}})
	}
	for _, st := range []int{200, 203, 204, 299, 301, 302, 303, 307, 308, 400, 404, 410, 499, 500, 502, 503, 504, 599} {
		cs = append(cs, csCase{name: "status-" + strconv.Itoa(st) + "-stale", steps: []csStep{
			get("Expires", "@-5000").code(st), fromOrigin().code(st),
		}})
	}
	for _, st := range []int{299, 499, 599} {
		cs = append(cs, csCase{name: "status-" + strconv.Itoa(st) + "-fresh", steps: []csStep{
			get(cc("max-age=100000")...).code(st), fromOrigin().code(st),
		}})
	}
	return cs
}

// th marks a case to run with the thesis override on.
func th(c csCase) csCase { c.name = "thesis-" + c.name; c.thesis = true; return c }

// Request directives (cc-request, pragma).
func requestDirectiveCases() []csCase {
	fresh := cc("max-age=100000")
	return []csCase{
		stored("ccreq-ma0", fresh, 0, fromOrigin().with("Cache-Control", "max-age=0")),
		stored("ccreq-ma0-etag", fields(fresh, []string{"ETag", `"x"`}), 0, revalidated().with("Cache-Control", "max-age=0")),
		stored("ccreq-ma1", fresh, 2, fromOrigin().with("Cache-Control", "max-age=1")),
		stored("ccreq-magreaterage", fields(fresh, []string{"Age", "1800"}), 0, fromOrigin().with("Cache-Control", "max-age=600")),
		stored("ccreq-max-stale", cc("max-age=2"), 3, hit().with("Cache-Control", "max-stale=1000")),
		stored("ccreq-max-stale-age", []string{"Cache-Control", "max-age=1500", "Age", "2000"}, 0, hit().with("Cache-Control", "max-stale=1000")),
		stored("ccreq-min-fresh", cc("max-age=1500"), 0, fromOrigin().with("Cache-Control", "min-fresh=2000")),
		stored("ccreq-min-fresh-age", []string{"Cache-Control", "max-age=1500", "Age", "1000"}, 0, fromOrigin().with("Cache-Control", "min-fresh=1000")),
		// Cache-Status says the request, not staleness, made the cache ask
		// (RFC 9211 §2.2 fwd=request); it said fwd=stale.
		stored("ccreq-no-cache", cc("max-age=3600"), 0,
			fromOrigin().with("Cache-Control", "no-cache").seeing("Cache-Status", "courtesy; fwd=request; fwd-status=200")),
		stored("ccreq-no-cache-lm", fields(cc("max-age=3600"), []string{"Last-Modified", "@-10000"}), 0,
			revalidated().with("Cache-Control", "no-cache").originSees("If-Modified-Since", "@-10000")),
		stored("ccreq-no-cache-etag", fields(cc("max-age=3600"), []string{"ETag", `"aiqy"`}), 0,
			revalidated().with("Cache-Control", "no-cache").originSees("If-None-Match", `"aiqy"`).
				seeing("Cache-Status", "courtesy; fwd=request; fwd-status=304; ttl=3600")),
		// no-store in the request: neither this response is stored...
		{name: "ccreq-no-store-not-stored", steps: []csStep{
			get(fresh...).with("Cache-Control", "no-store"), fromOrigin(),
		}},
		{name: "ccreq-oic", steps: []csStep{refused(http.StatusGatewayTimeout).with("Cache-Control", "only-if-cached")}},
		stored("ccreq-oic-fresh", fresh, 0, hit().with("Cache-Control", "only-if-cached")),
		stored("ccreq-oic-stale", cc("max-age=2"), 3, refused(http.StatusGatewayTimeout).with("Cache-Control", "only-if-cached")),
		// Pragma: no-cache without Cache-Control is honoured (§5.4).
		stored("pragma-request-no-cache", fresh, 0, fromOrigin().with("Pragma", "no-cache")),
		stored("pragma-request-extension", fresh, 0, hit().with("Pragma", "unrecognised-extension")),
		stored("pragma-response-no-cache", fields(cc("max-age=3600"), []string{"Pragma", "no-cache"}), 0, hit()),
		// Go's net/http reads a response's Pragma: no-cache without
		// Cache-Control as Cache-Control: no-cache (and the client sees
		// that field): validated, not heuristically fresh (docs/proxy.md).
		stored("pragma-response-no-cache-heuristic", []string{"Last-Modified", "@-10000", "Pragma", "no-cache"}, 0,
			fromOrigin("Pragma", "no-cache").seeing("Cache-Control", "no-cache", "Cache-Status", "courtesy; fwd=stale; fwd-status=200")),
		th(stored("pragma-response-no-cache-overridden", []string{"Pragma", "no-cache"}, 0, hit())),
		stored("pragma-response-extension", fields(cc("max-age=3600"), []string{"Pragma", "unrecognised-extension"}), 0, hit()),
		// ...nor does it stop a stored response being served (§5.2.1.5
		// forbids storing only).
		stored("ccreq-no-store", fresh, 0, hit().with("Cache-Control", "no-store")),
	}
}

// Vary (vary, vary-parse): the secondary key of RFC 9111 §4.1.
func varyCases() []csCase {
	fresh := func(vary string) []string {
		return []string{"Cache-Control", "max-age=5000", "Last-Modified", "@-3000", "Vary", vary}
	}
	v := func(name, vary string, first []string, next csStep) csCase {
		return csCase{name: name, steps: []csStep{get(fresh(vary)...).with(first...), next}}
	}
	foo1 := []string{"Foo", "1"}
	three := []string{"Foo", "1", "Bar", "abc", "Baz", "789"}
	star := func(name string, vary ...string) csCase {
		resp := []string{"Cache-Control", "max-age=5000"}
		for _, x := range vary {
			resp = append(resp, "Vary", x)
		}
		return csCase{name: name, steps: []csStep{get(resp...).with(foo1...), fromOrigin().with(foo1...)}}
	}
	return []csCase{
		v("vary-match", "Foo", foo1, hit().with(foo1...)),
		v("vary-no-match", "Foo", foo1, fromOrigin().with("Foo", "2")),
		v("vary-omit-stored", "Foo", nil, fromOrigin().with(foo1...)),
		v("vary-omit", "Foo", foo1, fromOrigin()),
		v("vary-cache-key", "Foo", []string{"Foo", "1", "Other", "2"}, hit().with("Foo", "1", "Other", "3")),
		v("vary-2-match", "Foo, Bar", []string{"Foo", "1", "Bar", "abc"}, hit().with("Foo", "1", "Bar", "abc")),
		v("vary-2-no-match", "Foo, Bar", []string{"Foo", "1", "Bar", "abc"}, fromOrigin().with("Foo", "2", "Bar", "abc")),
		v("vary-2-match-omit", "Foo, Bar", []string{"Foo", "1", "Bar", "abc"}, fromOrigin()),
		v("vary-3-match", "Foo, Bar, Baz", three, hit().with(three...)),
		v("vary-3-no-match", "Foo, Bar, Baz", three, fromOrigin().with("Foo", "2", "Bar", "abc", "Baz", "789")),
		v("vary-3-order", "Foo, Bar, Baz", three, fromOrigin().with("Foo", "1", "Baz", "789", "Bar", "abcde")),
		v("vary-3-omit", "Foo, Bar, Baz", []string{"Foo", "1", "Baz", "789"}, hit().with("Foo", "1", "Baz", "789")),
		v("vary-field-name-case", "fOO", foo1, hit().with(foo1...)),
		v("vary-normalise-combine", "Foo", []string{"Foo", "1, 2"}, hit().with("Foo", "1", "Foo", "2")),
		v("vary-normalise-space", "Foo", []string{"Foo", "1,2"}, hit().with("Foo", " 1, 2 ")),
		{name: "vary-invalidate", steps: []csStep{
			get(fresh("Foo")...).with(foo1...),
			fromOrigin(fresh("Foo")...).with("Foo", "2"),
			hit().with(foo1...),
			hit().with("Foo", "2"),
		}},
		star("vary-star", "*"),
		star("vary-syntax-star", "*"),
		star("vary-syntax-star-star", "*, *"),
		star("vary-syntax-star-star-lines", "*", "*"),
		star("vary-syntax-empty-star", ", *"),
		star("vary-syntax-empty-star-lines", "", "*"),
		star("vary-syntax-star-foo", "*, Foo"),
		star("vary-syntax-foo-star", "Foo, *"),
	}
}

// Conditional requests (conditional-lm, conditional-inm): a fresh entry
// answers the client's validators itself; a stale one is validated with
// its own.
func conditionalCases() []csCase {
	fresh := func(extra ...string) []string {
		return append([]string{"Cache-Control", "max-age=100000"}, extra...)
	}
	etag := `"abcdef"`
	return []csCase{
		stored("conditional-lm-fresh", fresh("Last-Modified", "@-3000"), 0, hit().with("If-Modified-Since", "@-3000").answering(304)),
		stored("conditional-lm-fresh-earlier", fresh("Last-Modified", "@-3000"), 0, hit().with("If-Modified-Since", "@-2000").answering(304)),
		stored("conditional-lm-fresh-later", fresh("Last-Modified", "@-3000"), 0, hit().with("If-Modified-Since", "@-4000").answering(200)),
		stored("conditional-etag-strong-respond", fresh("ETag", etag), 0, hit().with("If-None-Match", etag).answering(304)),
		stored("conditional-304-etag", fresh("ETag", etag), 0, hit().with("If-None-Match", etag).answering(304).seeing("ETag", etag)),
		stored("conditional-etag-precedence", fresh("ETag", etag, "Last-Modified", "@-5000"), 0,
			hit().with("If-None-Match", etag, "If-Modified-Since", "@-10000").answering(304)),
		stored("conditional-etag-no-match", fresh("ETag", etag, "Last-Modified", "@-5000"), 0,
			hit().with("If-None-Match", `"other"`, "If-Modified-Since", "@0").answering(200)),
		stored("conditional-etag-weak-respond", fresh("ETag", `W/"abcdef"`), 0, hit().with("If-None-Match", `W/"abcdef"`).answering(304)),
		stored("conditional-etag-strong-respond-multiple-first", fresh("ETag", etag), 0, hit().with("If-None-Match", `"abcdef", "1234", "5678"`).answering(304)),
		stored("conditional-etag-weak-respond-lowercase", fresh("ETag", `w/"abcdef"`), 0, hit().with("If-None-Match", `w/"abcdef"`).answering(304)),
		stored("conditional-lm-fresh-rfc850", fresh("Last-Modified", "Sunday, 22-Nov-26 11:00:00 GMT"), 0,
			hit().with("If-Modified-Since", "Sunday, 22-Nov-26 11:00:00 GMT").answering(304)),
		{name: "conditional-etag-forward", steps: []csStep{fromOrigin().with("If-None-Match", etag).originSees("If-None-Match", etag)}},
		stored("conditional-etag-strong-respond-multiple-second", fresh("ETag", etag), 0, hit().with("If-None-Match", `"1234", "abcdef", "5678"`).answering(304)),
		stored("conditional-etag-strong-respond-multiple-last", fresh("ETag", etag), 0, hit().with("If-None-Match", `"1234", "5678", "abcdef"`).answering(304)),
		{name: "conditional-etag-vary-headers", steps: []csStep{
			get("Expires", "@1", "ETag", etag, "Vary", "Abc").with("Abc", "123").after(sec(3)),
			revalidated().with("Abc", "123").originSees("Abc", "123", "If-None-Match", etag),
		}},
		stored("conditional-etag-strong-generate", fields(cc("max-age=2"), []string{"ETag", etag}), 3, revalidated().originSees("If-None-Match", etag)),
		stored("conditional-etag-weak-generate-weak", fields(cc("max-age=2"), []string{"ETag", `W/"abcdef"`}), 3, revalidated().originSees("If-None-Match", `W/"abcdef"`)),
		stored("conditional-lm-generate", fields(cc("max-age=2"), []string{"Last-Modified", "@-3000"}), 3, revalidated().originSees("If-Modified-Since", "@-3003")),
		stored("conditional-lm-stale", fields(cc("max-age=2"), []string{"Last-Modified", "@-3000"}), 3,
			revalidated().with("If-Modified-Since", "@-3003").answering(304)),
		// A client's validators on a stale entry are answered from the
		// validated entry: the origin sees the cache's own.
		stored("conditional-etag-stale", fields(cc("max-age=2"), []string{"ETag", etag}), 3,
			revalidated().with("If-None-Match", `"mine"`).originSees("If-None-Match", etag).answering(200)),
		stored("conditional-etag-stale-match", fields(cc("max-age=2"), []string{"ETag", etag}), 3,
			revalidated().with("If-None-Match", etag).answering(304)),
		// If-Match and the like are the client's business: sent as they are.
		stored("conditional-if-match-forwarded", fields(cc("max-age=2"), []string{"ETag", etag}), 3,
			fromOrigin().with("If-Match", etag).originSees("If-Match", etag, "If-None-Match", "")),
	}
}

// Storing header fields (headers): every end-to-end field is stored and
// served; connection-specific and proxy-specific fields never are.
func headerCases() []csCase {
	kept := func(name, value string) csCase {
		return stored("headers-store-"+name, fields(cc("max-age=3600"), []string{name, value}), 0, hit().seeing(name, value))
	}
	dropped := func(name, value string) csCase {
		return stored("headers-store-"+name, fields(cc("max-age=3600"), []string{name, value}), 0, hit().hiding(name))
	}
	return []csCase{
		stored("headers-omit-headers-listed-in-Connection", []string{"Cache-Control", "max-age=100000", "Connection", "a, b", "a", "1", "b", "2", "c", "3"}, 0,
			hit().hiding("a", "b").seeing("c", "3")),
		kept("Test-Header", "aywusqomkigecay"),
		kept("X-Test-Header", "abcdefghijklmno"),
		kept("Content-Foo", "auoicwqkeysmgau"),
		kept("X-Content-Foo", "axurolifczwtqnk"),
		kept("Content-Location", "/bar"),
		kept("Content-MD5", "N7UdGUp1E+RbVvZSTy1R8g=="),
		kept("Content-Range", "ananananananana"),
		kept("Content-Security-Policy", "default-src 'self' cdn.example.com"),
		kept("Content-Type", "text/plain;charset=utf-8"),
		kept("Clear-Site-Data", "cookies"),
		kept("ETag", `"ghijkl"`),
		kept("Expires", "Mon, 11 Jan 2038 11:11:11 GMT"),
		kept("Public-Key-Pins", "askcumewogyqias"),
		kept("Set-Cookie2", "a=c"),
		kept("X-Frame-Options", "sameorigin"),
		kept("X-XSS-Protection", "1; mode=block"),
		kept("Content-Encoding", "apetixmbqfujync"),
		stored("headers-store-Cache-Control", cc("max-age=3600"), 0, hit().seeing("Cache-Control", "max-age=3600")),
		{name: "headers-store-Content-Length", steps: []csStep{
			get("Cache-Control", "max-age=3600", "Content-Length", "10").withBody("0123456789"),
			hit().seeing("Content-Length", "10"),
		}},
		dropped("Connection", "askcumewogyqias"),
		dropped("Keep-Alive", "ananananananana"),
		dropped("Proxy-Authenticate", "akueoyiscmwgqak"),
		dropped("Proxy-Authentication-Info", "aaaaaaaaaaaaaaa"),
		dropped("Proxy-Authorization", "aaaaaaaaaaaaaaa"),
		dropped("Proxy-Connection", "alwhsdozkvgrcny"),
		dropped("TE", "apetixmbqfujync"),
		dropped("Upgrade", "acegikmoqsuwyac"),
		// A shared cache does not store Set-Cookie (docs/proxy.md): the
		// response is forwarded every time.
		{name: "headers-store-Set-Cookie", steps: []csStep{
			get("Cache-Control", "max-age=3600", "Set-Cookie", "a=c"),
			fromOrigin("Cache-Control", "max-age=3600", "Set-Cookie", "a=d").seeing("Set-Cookie", "a=d"),
		}},
	}
}

// Updating stored fields from a 304 (update304).
func update304Cases() []csCase {
	update := func(name string) csCase {
		return csCase{name: "304-etag-update-response-" + name, steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `"v"`, name, "old").after(sec(3)),
			revalidated("Cache-Control", "max-age=2", "ETag", `"v"`, name, "new").seeing(name, "new"),
			hit().seeing(name, "new"),
		}}
	}
	return []csCase{
		{name: "304-lm-use-stored-Test-Header", steps: []csStep{
			get("Cache-Control", "max-age=2", "Last-Modified", "Wed, 01 Jan 2020 00:00:00 GMT", "Test-Header", "aaa").after(sec(3)),
			revalidated("Last-Modified", "Wed, 01 Jan 2020 00:00:00 GMT").seeing("Test-Header", "aaa"),
		}},
		update("Test-Header"),
		update("X-Test-Header"),
		update("Content-Foo"),
		update("X-Content-Foo"),
		update("Content-Security-Policy"),
		update("X-Frame-Options"),
		update("X-XSS-Protection"),
		update("Content-Location"),
		update("Content-MD5"),
		update("Clear-Site-Data"),
		update("Public-Key-Pins"),
		{name: "304-etag-update-response-Cache-Control", steps: []csStep{
			get("Cache-Control", "max-age=1", "ETag", `"v"`).after(sec(2)),
			revalidated("Cache-Control", "max-age=3600", "ETag", `"v"`).seeing("Cache-Control", "max-age=3600").after(sec(10)),
			hit().seeing("Cache-Control", "max-age=3600"),
		}},
		{name: "304-etag-update-response-Content-Length", steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `"v"`, "Content-Length", "10").withBody("0123456789").after(sec(3)),
			revalidated("Cache-Control", "max-age=2", "ETag", `"v"`, "Content-Length", "36").seeing("Content-Length", "10"),
		}},
		// A 304 whose validator is not the stored one updates nothing
		// (§4.3.4): the cache asks again, unconditionally, and stores the
		// answer. Before, the old body was served (and kept) with the new
		// ETag.
		{name: "304-etag-mismatch-refetched", steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `"a"`).after(sec(3)),
			{resp: []string{"Cache-Control", "max-age=3600", "ETag", `"b"`}, notModified: true, want: csFromOrigin, asked: 2, wantStatus: 200, wantHeader: []string{"ETag", `"b"`}},
			hit().seeing("ETag", `"b"`),
		}},
		{name: "304-lm-mismatch-refetched", steps: []csStep{
			get("Cache-Control", "max-age=2", "Last-Modified", "@-3000").after(sec(3)),
			{resp: []string{"Cache-Control", "max-age=3600", "Last-Modified", "@-100"}, notModified: true, want: csFromOrigin, asked: 2, wantStatus: 200},
			hit().seeing("Last-Modified", "@-100"),
		}},
		{name: "304-weak-etag-selects", steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `W/"a"`).after(sec(3)),
			revalidated("Cache-Control", "max-age=3600", "ETag", `W/"a"`),
			hit(),
		}},
		{name: "304-update-date-and-age", steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `"v"`).after(sec(3)),
			revalidated("Cache-Control", "max-age=100", "ETag", `"v"`).seeing("Date", "@0", "Age", "0").after(sec(50)),
			hit().seeing("Date", "@-50"),
		}},
	}
}

// Invalidation (invalidation): a successful unsafe request invalidates
// its URL and the same-origin Location and Content-Location (RFC 9111
// §4.4); a failed one does not.
func invalidationCases() []csCase {
	fresh := cc("max-age=100000")
	var cs []csCase
	for _, m := range []string{"POST", "PUT", "DELETE", "M-SEARCH"} {
		cs = append(cs,
			csCase{name: "invalidate-" + m, steps: []csStep{get(fresh...), hit(), send(m).expect(csFromOrigin), fromOrigin()}},
			csCase{name: "invalidate-" + m + "-failed", steps: []csStep{get(fresh...), send(m).code(500).expect(csFromOrigin), hit()}},
			csCase{name: "invalidate-" + m + "-location", steps: []csStep{
				get(fresh...).at("/location_target"),
				send(m, "Location", "~/location_target").code(201).expect(csFromOrigin),
				fromOrigin().at("/location_target"),
			}},
			csCase{name: "invalidate-" + m + "-cl", steps: []csStep{
				get(fresh...).at("/content_location_target"),
				send(m, "Content-Location", "~/content_location_target").expect(csFromOrigin),
				fromOrigin().at("/content_location_target"),
			}},
		)
	}
	return append(cs,
		csCase{name: "invalidate-POST-relative-location", steps: []csStep{
			get(fresh...).at("/target"),
			send("POST", "Location", "/cs/invalidate-POST-relative-location/target").code(303).expect(csFromOrigin),
			fromOrigin().at("/target"),
		}},
		// Another origin's URL named by Location is left alone (§4.4:
		// otherwise a site could empty the cache of another).
		csCase{name: "invalidate-POST-location-other-origin", steps: []csStep{
			get(fresh...).at("/t").onOther(),
			send("POST", "Location", "%/t").code(201).expect(csFromOrigin),
			hit().at("/t").onOther(),
		}},
		csCase{name: "invalidate-POST-location-failed", steps: []csStep{
			get(fresh...).at("/t"),
			send("POST", "Location", "~/t").code(500).expect(csFromOrigin),
			hit().at("/t"),
		}},
	)
}

// Authorization (auth, RFC 9111 §3.5): a response to a request with
// Authorization is not shared; public, must-revalidate and s-maxage let
// the same credentials reuse it (docs/proxy.md: never another user).
func authorizationCases() []csCase {
	auth := []string{"Authorization", "FOO"}
	shared := func(name, directives string) csCase {
		return csCase{name: name, steps: []csStep{
			get(cc(directives)...).with(auth...).originSees(auth...),
			hit().with(auth...),
			fromOrigin(),
			fromOrigin().with("Authorization", "BAR"),
		}}
	}
	return []csCase{
		{name: "other-authorization", steps: []csStep{
			get(cc("max-age=100000")...).with(auth...).originSees(auth...),
			fromOrigin(),
			fromOrigin().with(auth...),
		}},
		shared("other-authorization-public", "max-age=3600, public"),
		shared("other-authorization-must-revalidate", "max-age=3600, must-revalidate"),
		shared("other-authorization-smaxage", "s-maxage=3600"),
		{name: "authorization-not-served-anonymous-entry", steps: []csStep{
			get(cc("max-age=3600")...),
			fromOrigin(cc("max-age=3600")...).with(auth...),
			hit(),
		}},
		{name: "cookie-response-not-shared", steps: []csStep{
			get(cc("max-age=3600")...).with("Cookie", "a=b"),
			hit().with("Cookie", "a=b"),
			fromOrigin(),
			fromOrigin().with("Cookie", "a=c"),
		}},
	}
}

// Other requirements (other, interim).
func otherCases() []csCase {
	fresh := cc("max-age=100000")
	return []csCase{
		stored("other-age-gen", fresh, 3, hit().seeing("Age", ">2")),
		stored("other-age-update-expires", []string{"Expires", "@2592000", "Age", "30"}, 3, hit().seeing("Age", ">32")),
		stored("other-age-update-max-age", fields(fresh, []string{"Age", "30"}), 3, hit().seeing("Age", ">32")),
		stored("other-date-update", fresh, 3, hit().seeing("Date", "@-3")),
		stored("other-date-update-expires", []string{"Expires", "@2592000"}, 3, hit().seeing("Date", "@-3", "Expires", "@2591997")),
		{name: "query-args-different", steps: []csStep{get(fresh...).at("?test=a"), fromOrigin().at("?test=b"), hit().at("?test=a")}},
		stored("other-heuristic-content-disposition-attachment", []string{"Last-Modified", "@-100000", "Content-Disposition", "attachment; filename=example.txt"}, 0, hit()),
		{name: "query-args-same", steps: []csStep{get(fresh...).at("?test=a"), hit().at("?test=a")}},
		// A request with a cookie is answered from a variant stored for
		// the same cookie only (docs/proxy.md), and Set-Cookie is never
		// stored.
		stored("other-cookie", fresh, 0, fromOrigin().with("Cookie", "a=b")),
		stored("other-set-cookie", fields(fresh, []string{"Set-Cookie", "a=b"}), 0, fromOrigin()),
		// Nothing stale is served on an origin's 5xx (docs/proxy.md).
		{name: "stale-503", steps: []csStep{get(cc("max-age=2")...).after(sec(3)), fromOrigin().code(503)}},
		stored("other-fresh-content-disposition-attachment", fields(fresh, []string{"Content-Disposition", "attachment; filename=example.txt"}), 0, hit()),
		{name: "interim-not-cached", steps: []csStep{get(fresh...).earlyHints(), hit().answering(200)}},
		// A 304 that makes the stored response private ends its sharing:
		// the client that validated gets it, the next one the origin.
		{name: "update304-private-not-shared", steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `"v"`).after(sec(3)),
			revalidated("Cache-Control", "private, max-age=3600", "ETag", `"v"`),
			fromOrigin(),
		}},
		{name: "update304-no-store-not-kept", steps: []csStep{
			get("Cache-Control", "max-age=2", "ETag", `"v"`).after(sec(3)),
			revalidated("Cache-Control", "no-store, max-age=3600", "ETag", `"v"`),
			fromOrigin(),
		}},
	}
}

// The thesis override (docs/httpcache.md), the proxy's default: no-store
// and no-cache responses are kept for a day, except those tied to a user.
func thesisCases() []csCase {
	return []csCase{
		th(stored("no-store-kept", cc("no-store"), 0, hit())),
		th(stored("no-cache-kept", cc("no-cache"), 0, hit())),
		th(stored("no-store-request-no-cache", cc("no-store"), 0, fromOrigin().with("Cache-Control", "no-cache"))),
		th(stored("private-not-stored", cc("private, no-store"), 0, fromOrigin())),
		th(stored("set-cookie-not-stored", fields(cc("no-store"), []string{"Set-Cookie", "a=b"}), 0, fromOrigin())),
		th(stored("vary-cookie-not-stored", fields(cc("no-store"), []string{"Vary", "Cookie"}), 0, fromOrigin())),
		th(csCase{steps: []csStep{get(cc("no-store")...).with("Authorization", "FOO"), fromOrigin(), fromOrigin().with("Authorization", "FOO")}, name: "authorization-not-stored"}),
		th(csCase{steps: []csStep{get(cc("no-store")...), fromOrigin().with("Cookie", "a=b")}, name: "cookie-not-served-overridden"}),
		th(stored("private-shared", cc("private, max-age=3600"), 0, fromOrigin())),
		th(stored("max-age-stale", cc("max-age=2"), 3, fromOrigin())),
	}
}

package httpcache

import (
	"net/http"
	"strings"
)

// The thesis override stores no-cache and no-store responses and serves
// them as fresh (Policy.DisableOverride). A shared cache that did so for
// every response would hand one user's private page to the next: an origin
// that says no-store on a page rendered for a session cookie means it. So
// the override is refused, and such a response is not stored at all, when
// the exchange carries anything that ties it to one user or that RFC 9111
// forbids a shared cache to store:
//
//   - the request has Cookie or Authorization (§3.5: a shared cache must
//     not reuse a response to an authenticated request; a cookie is the
//     web's everyday authentication);
//   - the response has Set-Cookie (§7.3), Cache-Control: private
//     (§5.2.2.7), or Vary: * or a Vary naming Cookie or Authorization
//     (§4.1: the origin says the response differs per user);
//   - the request has Cache-Control: no-store (§5.2.1.5), which Storable
//     refuses before the override is considered.
//
// A response refused the override is not stored, even a no-cache one that
// RFC 9111 would let a cache store for revalidation: declining to store is
// always allowed, and it keeps the rule one sentence long. Lookup applies
// the same rule from the other side: a request with Cookie or
// Authorization is never answered from an overridden entry (the entry was
// fetched without credentials and may differ from the page the user is
// logged in to see).

// OverrideRefusal reports why the thesis override must not apply to the
// response with header respHeader and parsed Cache-Control respCC to a
// request with header reqHeader; "" when it may.
func OverrideRefusal(reqHeader, respHeader http.Header, respCC Directives) string {
	switch {
	case len(reqHeader.Values("Authorization")) > 0:
		return "request carries Authorization"
	case len(reqHeader.Values("Cookie")) > 0:
		return "request carries Cookie"
	case len(respHeader.Values("Set-Cookie")) > 0:
		return "response sets a cookie"
	case respCC.Private:
		return "response private"
	}
	for _, v := range respHeader.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(strings.TrimSpace(f)) {
			case "*":
				return "response Vary: *"
			case "cookie", "authorization":
				return "response varies on " + http.CanonicalHeaderKey(strings.TrimSpace(f))
			}
		}
	}
	return ""
}

// credentialed reports whether a request carries user credentials, which
// the override never serves (see OverrideRefusal).
func credentialed(h http.Header) bool {
	return len(h.Values("Authorization")) > 0 || len(h.Values("Cookie")) > 0
}

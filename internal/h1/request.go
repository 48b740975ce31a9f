package h1

import (
	"fmt"
	"net/http"

	"golang.org/x/net/http/httpguts"
)

// wantsClose reports whether the request's Connection field has the
// "close" option (RFC 9112 §9.6): the connection is not kept afterwards.
func wantsClose(req *http.Request) bool {
	return req.Close || httpguts.HeaderValuesContainsToken(req.Header["Connection"], "close")
}

// validHeader refuses header field names and values that are not valid
// (RFC 9110 §5.1, §5.5), as http.Transport does: Request.Write would
// otherwise send a value's CR or LF replaced by a space.
func validHeader(h http.Header) error {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("h1: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("h1: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

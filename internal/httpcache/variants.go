// Variants: the secondary key of RFC 9111 §4.1 (Vary) and the media type.

package httpcache

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
)

// credentialFields are the request fields that tie a response to one
// user: a response to a request with one of them is stored as a variant of
// its value (store), and a request with one is answered only by such a
// variant (selectLocked).
var credentialFields = []string{"Authorization", "Cookie"}

// selectLocked picks the newest variant of pk matching the request's Vary
// values and Accept. A request with cookies or credentials is only
// answered by a variant stored for the same ones (see store): a page
// stored for a request without them is what a logged-out visitor sees,
// not this user.
func (c *Cache) selectLocked(pk string, h http.Header) *variant {
	vs := c.mu.groups[pk]
	var need []string // credential fields the request has
	for _, f := range credentialFields {
		if len(h.Values(f)) > 0 {
			need = append(need, f)
		}
	}
next:
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		if !Acceptable(h, v.mediaType) {
			continue
		}
		for _, f := range need {
			if !slices.Contains(v.varyNames, f) {
				continue next
			}
		}
		ok := true
		for j, name := range v.varyNames {
			if varyValue(h, name) != v.varyValues[j] {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return nil
}

// varyValue is the request's normalized value of a Vary field: its field
// lines joined by commas, with whitespace around the commas removed
// (RFC 9111 §4.1 allows such normalization). The values of Cookie and
// Authorization are credentials, so only their SHA-256 is kept (and
// compared), never the secret itself.
func varyValue(h http.Header, name string) string {
	vs := h.Values(name)
	if len(vs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, v := range vs {
		for j, part := range strings.Split(v, ",") {
			if i > 0 || j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(part))
		}
	}
	if name == "Cookie" || name == "Authorization" {
		sum := sha256.Sum256([]byte(b.String()))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return b.String()
}

// varyNames returns the canonical field names of h's Vary fields, sorted
// and without duplicates, and false when there are too many.
func varyNames(h http.Header) ([]string, bool) {
	var names []string
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			names = append(names, http.CanonicalHeaderKey(f))
			if len(names) > MaxVaryFields {
				return nil, false
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), true
}

func variantKey(pk, mediaType string, names, values []string) [16]byte {
	h := sha256.New()
	h.Write([]byte(pk))
	h.Write([]byte{0})
	h.Write([]byte(mediaType))
	for i := range names {
		h.Write([]byte{0})
		h.Write([]byte(names[i]))
		h.Write([]byte{1})
		h.Write([]byte(values[i]))
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

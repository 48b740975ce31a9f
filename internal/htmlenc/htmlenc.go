// Package htmlenc determines the character encoding of an HTML page.
package htmlenc

import (
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// Determine returns the encoding of page and its canonical name, by the
// HTML sniffing rules as charset.DetermineEncoding applies them: a byte
// order mark, the Content-Type charset, then the <meta charset> prescan of
// the first 1,024 bytes. Where none of them names one, DetermineEncoding
// looks only at those 1,024 bytes and says windows-1252 when they are
// ASCII, so a page whose markup fills its first kilobyte and whose text is
// UTF-8 further on would be misread. When nothing names the encoding, a
// page that is valid UTF-8 as a whole, and not plain ASCII, is UTF-8, as
// browsers' detectors find.
func Determine(page []byte, contentType string) (encoding.Encoding, string) {
	enc, name, certain := charset.DetermineEncoding(page, contentType)
	if certain || name != "windows-1252" || ASCII(page) || !utf8.Valid(page) || declared(page) {
		return enc, name
	}
	return encoding.Nop, "utf-8"
}

// ASCII reports whether page is all ASCII, which UTF-8 and windows-1252
// read alike.
func ASCII(page []byte) bool {
	for _, c := range page {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// sniffed is how much of a page the prescan reads.
const sniffed = 1024

// declared reports whether the prescan of page finds a <meta> charset.
// DetermineEncoding does not say; but it runs the prescan before its UTF-8
// detection, so a probe made of one UTF-8 letter and the page's start is
// called UTF-8 only when the prescan found nothing. (The letter goes
// first: DetermineEncoding drops a last rune as possibly cut.)
func declared(page []byte) bool {
	const letter = "\u00e9"
	n := min(len(page), sniffed-len(letter))
	probe := make([]byte, 0, n+len(letter))
	probe = append(append(probe, letter...), page[:n]...)
	_, name, _ := charset.DetermineEncoding(probe, "")
	return name != "utf-8"
}

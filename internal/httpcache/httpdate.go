package httpcache

import (
	"strings"
	"time"
)

// ParseHTTPDate parses an HTTP-date (RFC 9110 §5.6.7) in any of its three
// forms, strictly: IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the
// obsolete RFC 850 form ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime
// ("Sun Nov  6 08:49:37 1994"). Day and month names and GMT are matched
// without regard to case; everything else must be exactly as the grammar
// says: http.ParseTime (through time.Parse) also took runs of spaces and
// one-digit hours, so "Thu, 18  Aug  2050 02:01:18 GMT" was a valid
// Expires instead of an invalid one, which RFC 9111 §5.3 makes "already
// expired". A two-digit year is read as time.Parse reads it (69-99: 19xx,
// 00-68: 20xx).
func ParseHTTPDate(s string) (time.Time, bool) {
	if t, ok := parseIMFFixdate(s); ok {
		return t, true // the common case, exact
	}
	switch {
	case len(s) == 29 && s[3] == ',':
		// IMF-fixdate, names in another case.
		if s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || !strings.EqualFold(s[25:], " GMT") || shortDay(s[:3]) < 0 {
			return time.Time{}, false
		}
		return makeDate(s[12:16], s[8:11], s[5:7], s[17:25])
	case len(s) == 24 && s[3] == ' ':
		// asctime: day of the month as "06" or " 6".
		if s[7] != ' ' || s[10] != ' ' || s[19] != ' ' || shortDay(s[:3]) < 0 {
			return time.Time{}, false
		}
		day := s[8:10]
		if day[0] == ' ' {
			day = "0" + day[1:]
		}
		return makeDate(s[20:24], s[4:7], day, s[11:19])
	}
	// RFC 850: a whole day name, then "06-Nov-94 08:49:37 GMT".
	name, rest, ok := strings.Cut(s, ", ")
	if !ok || longDay(name) < 0 || len(rest) != 22 || rest[2] != '-' || rest[6] != '-' || rest[9] != ' ' || !strings.EqualFold(rest[18:], " GMT") {
		return time.Time{}, false
	}
	yy, ok := digits(rest[7:9])
	if !ok {
		return time.Time{}, false
	}
	century := "20"
	if yy >= 69 {
		century = "19"
	}
	return makeDate(century+rest[7:9], rest[3:6], rest[:2], rest[10:18])
}

// makeDate builds a date from a 4-digit year, a month name, a 2-digit day
// and "hh:mm:ss", refusing anything out of range (31 April, hour 24).
func makeDate(year, month, day, clock string) (time.Time, bool) {
	m := monthIndex(month)
	y, ok1 := digits(year)
	d, ok2 := digits(day)
	if m < 0 || !ok1 || !ok2 || len(clock) != 8 || clock[2] != ':' || clock[5] != ':' {
		return time.Time{}, false
	}
	hh, ok3 := digits(clock[:2])
	mm, ok4 := digits(clock[3:5])
	ss, ok5 := digits(clock[6:])
	if !ok3 || !ok4 || !ok5 || d < 1 || hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m+1), d, hh, mm, ss, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

var (
	shortDays = [...]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	longDays  = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	months    = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

func shortDay(s string) int { return foldIndex(shortDays[:], s) }
func longDay(s string) int  { return foldIndex(longDays[:], s) }
func monthIndex(s string) int {
	return foldIndex(months[:], s)
}

func foldIndex(names []string, s string) int {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return i
		}
	}
	return -1
}

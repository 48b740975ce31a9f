package robots

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Window is a period of time named by Visit-time, Time-forbidden or the
// window of a Request-rate.
//
// A daily window (the usual form, `0600-0845` or `01:00 +0800-06:00 +0800`)
// repeats every day; it is held in UTC as seconds after midnight and is
// half-open, [Start, End). When End is before Start the window wraps
// midnight; when they are equal it covers the whole day. An absolute
// window (`30 Oct 2014 00:00:00 UT-2 Nov 2014 23:59:59 UT`, REGP §3.2.8)
// covers [From, To), where To is one unit of the precision given after the
// written end time (so that `23:59:59` includes its last second).
type Window struct {
	Daily      bool
	Start, End time.Duration // daily: offsets after 00:00 UTC, in [0, 24h)
	From, To   time.Time     // absolute
}

// Contains reports whether t falls inside the window.
func (w Window) Contains(t time.Time) bool {
	if !w.Daily {
		return !t.Before(w.From) && t.Before(w.To)
	}
	d := sinceMidnight(t)
	switch {
	case w.Start == w.End:
		return true
	case w.Start < w.End:
		return w.Start <= d && d < w.End
	default:
		return d >= w.Start || d < w.End
	}
}

// String renders the window in the daily `HHMM-HHMM` UTC form or as two
// RFC 3339 times.
func (w Window) String() string {
	if !w.Daily {
		return w.From.UTC().Format(time.RFC3339) + "/" + w.To.UTC().Format(time.RFC3339)
	}
	f := func(d time.Duration) string {
		return fmt.Sprintf("%02d%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return f(w.Start) + "-" + f(w.End) + " UTC"
}

func sinceMidnight(t time.Time) time.Duration {
	u := t.UTC()
	return time.Duration(u.Hour())*time.Hour + time.Duration(u.Minute())*time.Minute +
		time.Duration(u.Second())*time.Second + time.Duration(u.Nanosecond())
}

func midnight(t time.Time) time.Time {
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
}

// nextStart returns the earliest time >= t inside the window, or the zero
// time if there is none.
func (w Window) nextStart(t time.Time) time.Time {
	if w.Contains(t) {
		return t
	}
	if !w.Daily {
		if t.Before(w.From) {
			return w.From
		}
		return time.Time{}
	}
	s := midnight(t).Add(w.Start)
	if !s.After(t) {
		s = s.Add(24 * time.Hour)
	}
	return s
}

// endAfter returns the first instant after t that is outside the window,
// for a t inside it; the zero time if the window never ends.
func (w Window) endAfter(t time.Time) time.Time {
	if !w.Daily {
		return w.To
	}
	if w.Start == w.End {
		return time.Time{}
	}
	e := midnight(t).Add(w.End)
	if !e.After(t) {
		e = e.Add(24 * time.Hour)
	}
	return e
}

// timeExpr is one side of a time range: an RFC 822-like date-time of which
// only the time of day is required.
type timeExpr struct {
	hasDate   bool
	year, day int
	month     time.Month
	clock     time.Duration // since midnight, local to the zone
	precision time.Duration // unit of the last field written
	hasZone   bool
	offset    int // seconds east of UTC
}

var monthNames = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

// zoneOffsets are the zone names of RFC 822 §5.1 (plus UTC and Z).
var zoneOffsets = map[string]int{
	"ut": 0, "utc": 0, "gmt": 0, "z": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
}

var errTime = errors.New("robots: bad time")

// parseTimeExpr parses `[Day,] [D Mon YY[YY]] H[H][:MM[:SS]]|HHMM [zone]`.
func parseTimeExpr(s string) (timeExpr, error) {
	var te timeExpr
	fields := strings.Fields(strings.ReplaceAll(s, ",", " "))
	if len(fields) == 0 || len(fields) > 6 {
		return te, errTime
	}
	i := 0
	// Optional day name.
	if len(fields[i]) >= 3 && isAlpha(fields[i]) && !isZoneName(fields[i]) {
		i++
	}
	// Optional date: D Mon YY[YY].
	if len(fields)-i >= 4 && len(fields[i]) <= 2 {
		if d, err := strconv.Atoi(fields[i]); err == nil {
			m, ok := monthNames[strings.ToLower(truncate(fields[i+1], 3))]
			y, yerr := strconv.Atoi(fields[i+2])
			if !ok || yerr != nil || d < 1 || d > 31 || y < 0 || y > 9999 {
				return te, errTime
			}
			if len(fields[i+2]) <= 2 {
				y += 2000 // REGP §3.2.2: "15" and "2015" both mean 2015.
			}
			te.hasDate, te.day, te.month, te.year = true, d, m, y
			i += 3
		}
	}
	if i >= len(fields) {
		return te, errTime
	}
	clock, prec, err := parseClock(fields[i])
	if err != nil {
		return te, err
	}
	te.clock, te.precision = clock, prec
	i++
	if i < len(fields) {
		off, err := parseZone(fields[i])
		if err != nil {
			return te, err
		}
		te.hasZone, te.offset = true, off
		i++
	}
	if i != len(fields) {
		return te, errTime
	}
	return te, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if !('a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z') {
			return false
		}
	}
	return true
}

func isZoneName(s string) bool {
	_, ok := zoneOffsets[strings.ToLower(s)]
	return ok
}

// parseClock parses H:MM, HH:MM:SS or HHMM.
func parseClock(s string) (time.Duration, time.Duration, error) {
	var h, m, sec int
	prec := time.Minute
	parts := strings.Split(s, ":")
	num := func(p string, max int) (int, bool) {
		if p == "" || len(p) > 2 {
			return 0, false
		}
		n, err := strconv.Atoi(p)
		return n, err == nil && n >= 0 && n <= max
	}
	var ok1, ok2, ok3 bool
	switch len(parts) {
	case 1:
		if len(s) != 4 {
			return 0, 0, errTime
		}
		h, ok1 = num(s[:2], 24)
		m, ok2 = num(s[2:], 59)
		ok3 = true
	case 2:
		h, ok1 = num(parts[0], 24)
		m, ok2 = num(parts[1], 59)
		ok3 = len(parts[1]) == 2
	case 3:
		h, ok1 = num(parts[0], 24)
		m, ok2 = num(parts[1], 59)
		sec, ok3 = num(parts[2], 60)
		prec = time.Second
	default:
		return 0, 0, errTime
	}
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, errTime
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	if d > 24*time.Hour {
		return 0, 0, errTime
	}
	return d, prec, nil
}

// parseZone parses a zone name or a numeric offset (+0800, -05:00).
func parseZone(s string) (int, error) {
	if off, ok := zoneOffsets[strings.ToLower(s)]; ok {
		return off, nil
	}
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, errTime
	}
	digits := strings.ReplaceAll(s[1:], ":", "")
	if len(digits) != 4 && len(digits) != 2 {
		return 0, errTime
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, errTime
	}
	h, m := n, 0
	if len(digits) == 4 {
		h, m = n/100, n%100
	}
	if h > 14 || m > 59 {
		return 0, errTime
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, nil
}

func (te timeExpr) absolute() time.Time {
	zone := time.FixedZone("", te.offset)
	return time.Date(te.year, te.month, te.day, 0, 0, 0, 0, zone).Add(te.clock).UTC()
}

// parseWindow parses a time range `A-B` (REGP §3.2.8 and the `HHMM-HHMM`
// form of the 1996 extended standard). Zones may themselves contain '-', so
// every '-' is tried as the separator.
func parseWindow(s string) (Window, error) {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return Window{}, fmt.Errorf("robots: time range too long")
	}
	for i := 1; i < len(s)-1; i++ {
		if s[i] != '-' {
			continue
		}
		a, err1 := parseTimeExpr(s[:i])
		b, err2 := parseTimeExpr(s[i+1:])
		if err1 != nil || err2 != nil {
			continue
		}
		return makeWindow(a, b)
	}
	return Window{}, fmt.Errorf("robots: bad time range %q", s)
}

func makeWindow(a, b timeExpr) (Window, error) {
	// REGP §3.2.8: a zone given on one side only holds for both.
	switch {
	case a.hasZone && !b.hasZone:
		b.hasZone, b.offset = true, a.offset
	case b.hasZone && !a.hasZone:
		a.hasZone, a.offset = true, b.offset
	}
	if !a.hasDate && b.hasDate {
		return Window{}, fmt.Errorf("robots: time range has a date on its end only")
	}
	if a.hasDate {
		from := a.absolute()
		sameDay := !b.hasDate
		if sameDay {
			b.hasDate, b.year, b.month, b.day = true, a.year, a.month, a.day
		}
		to := b.absolute().Add(b.precision)
		if !to.After(from) {
			if sameDay {
				to = to.Add(24 * time.Hour)
			} else {
				return Window{}, fmt.Errorf("robots: time range ends before it starts")
			}
		}
		return Window{From: from, To: to}, nil
	}
	day := 24 * time.Hour
	norm := func(d time.Duration, off int) time.Duration {
		d -= time.Duration(off) * time.Second
		d %= day
		if d < 0 {
			d += day
		}
		return d
	}
	return Window{Daily: true, Start: norm(a.clock, a.offset), End: norm(b.clock, b.offset)}, nil
}

// Rate is a Request-rate: Requests per Per.
type Rate struct {
	Requests int
	Per      time.Duration
}

// Interval returns the minimum spacing of requests the rate implies.
func (r Rate) Interval() time.Duration {
	if r.Requests <= 0 {
		return 0
	}
	return r.Per / time.Duration(r.Requests)
}

// WindowedRate is a Request-rate or Ip-rate with the time window it holds
// in, if any (`Request-rate: 1/10m 0600-0845`).
type WindowedRate struct {
	Rate
	Window    Window
	HasWindow bool
}

// parseRate parses `n/[T][s|m|h] [window]`: n requests (integer or
// decimal) per T units (default 1; unit default seconds).
func parseRate(s string) (WindowedRate, error) {
	var wr WindowedRate
	s = strings.TrimSpace(s)
	rate, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	if rest == "" {
		if t := strings.IndexByte(s, '\t'); t >= 0 {
			rate, rest = s[:t], strings.TrimSpace(s[t:])
		}
	}
	num, per, ok := strings.Cut(rate, "/")
	if !ok {
		return wr, fmt.Errorf("robots: request rate %q lacks '/'", s)
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || n > 1e9 {
		return wr, fmt.Errorf("robots: bad request count in %q", s)
	}
	unit := time.Second
	if per != "" {
		switch per[len(per)-1] {
		case 's', 'S':
			per = per[:len(per)-1]
		case 'm', 'M':
			unit, per = time.Minute, per[:len(per)-1]
		case 'h', 'H':
			unit, per = time.Hour, per[:len(per)-1]
		case 'd', 'D':
			unit, per = 24*time.Hour, per[:len(per)-1]
		}
	}
	t := 1.0
	if per != "" {
		t, err = strconv.ParseFloat(per, 64)
		if err != nil || t <= 0 || t > 1e6 || math.IsInf(t, 0) {
			return wr, fmt.Errorf("robots: bad period in request rate %q", s)
		}
	}
	total := time.Duration(t * float64(unit))
	if n == math.Trunc(n) {
		wr.Rate = Rate{Requests: int(n), Per: total}
	} else {
		wr.Rate = Rate{Requests: 1, Per: time.Duration(float64(total) / n)}
	}
	if rest != "" {
		w, err := parseWindow(rest)
		if err != nil {
			return wr, err
		}
		wr.Window, wr.HasWindow = w, true
	}
	return wr, nil
}

// parseSeconds parses a decimal number of seconds (Crawl-delay, Ip-delay).
// Trailing junk after the number (`10<BR>`) is tolerated and reported by
// the returned flag.
func parseSeconds(s string) (d time.Duration, junk bool, err error) {
	s = strings.TrimSpace(s)
	end := 0
	dot := false
	for end < len(s) && ('0' <= s[end] && s[end] <= '9' || s[end] == '.' && !dot) {
		if s[end] == '.' {
			dot = true
		}
		end++
	}
	if end == 0 {
		return 0, false, fmt.Errorf("robots: %q is not a number of seconds", s)
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, false, fmt.Errorf("robots: %q is not a number of seconds", s)
	}
	// Saturate rather than overflow: 1e9 s is some 31 years.
	if f > 1e9 {
		f = 1e9
	}
	return time.Duration(f * float64(time.Second)), end < len(s), nil
}

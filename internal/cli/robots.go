package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// maxCheckLine bounds one JSON Lines input of `courtesy robots check`: a
// robots.txt is parsed up to 500 KiB, and base64 plus JSON escaping can
// triple that.
const maxCheckLine = 2 << 20

// runRobots dispatches `courtesy robots check|lint`.
func runRobots(ctx context.Context, env *Env, args []string) error {
	const desc = `Check URLs against robots.txt files and lint robots.txt files.

Subcommands:
  check   answer JSON Lines queries on stdin, or check URLs given as arguments
  lint    list the problems of a robots.txt file

Run 'courtesy robots SUBCOMMAND -h' for the flags of a subcommand.`
	if len(args) > 0 {
		switch args[0] {
		case "check":
			return runRobotsCheck(ctx, env, args[1:])
		case "lint":
			return runRobotsLint(ctx, env, args[1:])
		}
	}
	fs := newFlagSet(env, "robots", "check|lint [args]", desc)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("missing subcommand: check or lint")
	}
	return usagef("unknown subcommand %q: want check or lint", fs.Arg(0))
}

// checkInput is one JSON Lines query.
type checkInput struct {
	Robots       *string `json:"robots"`
	RobotsBase64 *string `json:"robots_base64"`
	RobotsURL    string  `json:"robots_url"`
	Agent        string  `json:"agent"`
	URL          *string `json:"url"`
}

type rateOut struct {
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
}

type ruleOut struct {
	Line int    `json:"line"`
	Rule string `json:"rule"`
}

// checkOutput is one JSON Lines answer. Pointers are null when absent.
type checkOutput struct {
	Allowed           *bool    `json:"allowed,omitempty"`
	CrawlDelaySeconds *float64 `json:"crawl_delay_seconds"`
	RequestRate       *rateOut `json:"request_rate"`
	Sitemaps          []string `json:"sitemaps"`
	Host              *string  `json:"host"`
	Dialect           string   `json:"dialect,omitempty"`
	MatchedRule       *ruleOut `json:"matched_rule"`
}

// errorOutput is the answer to a malformed input line.
type errorOutput struct {
	Error string `json:"error"`
}

func runRobotsCheck(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "robots check", "[--robots FILE --agent TOKEN URL...]",
		`Without arguments, read JSON Lines on stdin, one query per line:
  {"robots": "User-agent: *\nDisallow: /x", "agent": "mybot", "url": "https://example.com/x"}
("robots_base64" instead of "robots" for files that are not UTF-8; optional
"robots_url" to resolve relative Sitemap URLs) and write one JSON object per
line, in order: allowed, crawl_delay_seconds, request_rate, sitemaps, host,
dialect, matched_rule; or "error" for a malformed line.

With --robots FILE and URLs, print one line per URL for people.`)
	robotsFile := fs.String("robots", "", "robots.txt `FILE` to check URLs against")
	agent := fs.String("agent", "", "crawler product `TOKEN` that selects the group (empty: only * groups)")
	at := fs.String("at", "", "evaluate time-dependent rules (Request-rate windows) at this RFC 3339 `TIME` (default now)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	now := time.Now()
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return usagef("--at %q: want an RFC 3339 time", *at)
		}
		now = t
	}
	if *robotsFile != "" || fs.NArg() > 0 {
		if *robotsFile == "" || fs.NArg() == 0 {
			return usagef("--robots FILE and at least one URL go together")
		}
		return checkHuman(env, *robotsFile, *agent, fs.Args())
	}
	return checkStream(ctx, env, now)
}

// checkHuman prints `allowed    URL` or `disallowed URL (line N: rule)`.
func checkHuman(env *Env, file, agent string, urls []string) error {
	body, err := readRobots(file)
	if err != nil {
		return err
	}
	g := robots.Parse(body).Group(agent)
	w := bufio.NewWriter(env.Stdout)
	for _, u := range urls {
		d := g.Explain(robots.RequestPath(u))
		verdict := "allowed   "
		if !d.Allowed {
			verdict = "disallowed"
		}
		why := d.Reason
		if d.Line > 0 {
			why = fmt.Sprintf("line %d: %s", d.Line, d.Rule)
		}
		fmt.Fprintf(w, "%s %s (%s)\n", verdict, u, why)
	}
	return w.Flush()
}

// readRobots reads at most robots.MaxSize bytes of a file.
func readRobots(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, robots.MaxSize))
}

// checkStream answers JSON Lines on stdin, flushing after every line so
// that a caller can keep a pipe open and interleave queries and answers.
func checkStream(ctx context.Context, env *Env, now time.Time) error {
	r := bufio.NewReaderSize(env.Stdin, 64<<10)
	w := bufio.NewWriter(env.Stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, err := readLine(r, maxCheckLine)
		if err == io.EOF && len(line) == 0 && !tooLong {
			return w.Flush()
		}
		if err != nil && err != io.EOF {
			w.Flush()
			return fmt.Errorf("robots check: reading stdin: %w", err)
		}
		var out any
		if tooLong {
			out = errorOutput{Error: fmt.Sprintf("line %d: longer than %d bytes", n, maxCheckLine)}
		} else {
			out = answer(line, n, now)
		}
		if encErr := enc.Encode(out); encErr != nil {
			return fmt.Errorf("robots check: writing: %w", encErr)
		}
		if flushErr := w.Flush(); flushErr != nil {
			return fmt.Errorf("robots check: writing: %w", flushErr)
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line without its end, keeping at most limit bytes;
// tooLong reports that more were skipped.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		frag, isPrefix, err := r.ReadLine()
		if !tooLong {
			if len(line)+len(frag) > limit {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err != nil || !isPrefix {
			return line, tooLong, err
		}
	}
}

func answer(line []byte, n int, now time.Time) any {
	var in checkInput
	if err := json.Unmarshal(line, &in); err != nil {
		return errorOutput{Error: fmt.Sprintf("line %d: %v", n, err)}
	}
	var body []byte
	switch {
	case in.Robots != nil && in.RobotsBase64 != nil:
		return errorOutput{Error: fmt.Sprintf("line %d: give robots or robots_base64, not both", n)}
	case in.Robots != nil:
		body = []byte(*in.Robots)
	case in.RobotsBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*in.RobotsBase64)
		if err != nil {
			return errorOutput{Error: fmt.Sprintf("line %d: robots_base64: %v", n, err)}
		}
		body = b
	default:
		return errorOutput{Error: fmt.Sprintf("line %d: missing robots or robots_base64", n)}
	}
	if in.URL == nil {
		return errorOutput{Error: fmt.Sprintf("line %d: missing url", n)}
	}
	f := robots.ParseOptions(body, robots.Options{URL: in.RobotsURL})
	g := f.Group(in.Agent)
	path := robots.RequestPath(*in.URL)
	d := g.Explain(path)
	out := checkOutput{Allowed: &d.Allowed, Sitemaps: f.Sitemaps(), Dialect: string(f.Dialect())}
	if out.Sitemaps == nil {
		out.Sitemaps = []string{}
	}
	if delay, ok := g.CrawlDelayFor(path); ok {
		s := delay.Seconds()
		out.CrawlDelaySeconds = &s
	}
	if rate, ok := g.RequestRateFor(path, now); ok {
		out.RequestRate = &rateOut{Requests: rate.Requests, Seconds: rate.Per.Seconds()}
	}
	if h := f.Host(); h != "" {
		out.Host = &h
	}
	if d.Line > 0 {
		out.MatchedRule = &ruleOut{Line: d.Line, Rule: d.Rule}
	}
	return out
}

func runRobotsLint(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "robots lint", "FILE",
		`Print the problems of a robots.txt file as FILE:LINE: message (line 0:
the file as a whole). Exit status 1 if there is any problem, 0 if clean.`)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one FILE")
	}
	name := fs.Arg(0)
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	// Read one byte past the limit so that the parser reports truncation.
	body, err := io.ReadAll(io.LimitReader(f, robots.MaxSize+1))
	if err != nil {
		return fmt.Errorf("robots lint: %w", err)
	}
	problems := robots.Parse(body).Problems()
	w := bufio.NewWriter(env.Stdout)
	for _, p := range problems {
		fmt.Fprintf(w, "%s:%d: %s\n", name, p.Line, p.Message)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errLintProblems{n: len(problems)}
	}
	return nil
}

// errLintProblems makes lint exit 1 after listing problems.
type errLintProblems struct{ n int }

func (e errLintProblems) Error() string {
	if e.n == 1 {
		return "lint: 1 problem"
	}
	return fmt.Sprintf("lint: %d problems", e.n)
}

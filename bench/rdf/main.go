// Command rdf measures structured-data extraction throughput, in MB/s of
// HTML, per syntax (RDFa, microdata, JSON-LD), for Courtesy's internal/rdf
// and for the independent npm extractors of tools/rdfcheck
// (rdfa-streaming-parser, microdata-rdf-streaming-parser, jsonld.js) on
// the same pages in the same run, and prints the ratio.
//
//	go run ./bench/rdf [-seconds 3] [-pad 20000] [-json]
//
// The pages are testweb's structured pages of each syntax (hostile ones
// left out), each taken twice: as served (data only, about 1 KB) and
// padded with -pad bytes of ordinary HTML paragraphs before the data, as
// on a real page. Courtesy runs single-threaded, like node. Run it from
// the repository root after scripts/install-test-deps.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/rdf"
	"github.com/courtesy-crawler/courtesy/internal/testweb"
)

type corpusPage struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Syntax string `json:"syntax"`
	File   string `json:"file"`
	body   []byte
}

// Row is one line of the result table.
type Row struct {
	Syntax      string  `json:"syntax"`
	Pages       int     `json:"pages"`
	Bytes       int     `json:"bytes"`
	CourtesyMBs float64 `json:"courtesy_mb_s"`
	NPMMBs      float64 `json:"npm_mb_s"`
	Ratio       float64 `json:"ratio"`
}

func main() {
	seconds := flag.Float64("seconds", 3, "time spent per syntax and extractor")
	pad := flag.Int("pad", 20000, "bytes of ordinary HTML added before the data of the padded copies")
	asJSON := flag.Bool("json", false, "print JSON rows instead of a table")
	tools := flag.String("tools", "tools/rdfcheck", "directory of the npm extractors")
	flag.Parse()
	rows, err := run(context.Background(), *seconds, *pad, *tools)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/rdf:", err)
		os.Exit(1)
	}
	if *asJSON {
		for _, r := range rows {
			b, _ := json.Marshal(r)
			fmt.Println(string(b))
		}
		return
	}
	fmt.Print(table(rows))
}

func table(rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %6s %10s %14s %10s %7s\n", "syntax", "pages", "bytes", "courtesy MB/s", "npm MB/s", "ratio")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-10s %6d %10d %14.1f %10.2f %6.1fx\n", r.Syntax, r.Pages, r.Bytes, r.CourtesyMBs, r.NPMMBs, r.Ratio)
	}
	return b.String()
}

var syntaxes = map[string]rdf.Syntax{"rdfa": rdf.RDFa, "microdata": rdf.Microdata, "jsonld": rdf.JSONLD}

// filler is ordinary page text without any structured data.
func filler(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "<p class=\"text\">Paragraph %d of an ordinary page, with a <a href=\"/page-%d.html\">link</a> and some <em>emphasis</em>, as found on any site.</p>\n", i, i)
	}
	return b.String()
}

func corpus(dir string, pad int) (map[string][]corpusPage, error) {
	out := map[string][]corpusPage{}
	fill := filler(pad)
	for _, p := range testweb.StructuredPages() {
		if p.Hostile || syntaxes[p.Syntax] == 0 {
			continue
		}
		padded := strings.Replace(string(p.Body), "<body>\n", "<body>\n"+fill, 1)
		for i, body := range [][]byte{p.Body, []byte(padded)} {
			file := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.html", p.Syntax, len(out[p.Syntax]), i))
			if err := os.WriteFile(file, body, 0o644); err != nil {
				return nil, err
			}
			out[p.Syntax] = append(out[p.Syntax], corpusPage{ID: file, URL: p.URL, Syntax: p.Syntax, File: file, body: body})
		}
	}
	return out, nil
}

func run(ctx context.Context, seconds float64, pad int, tools string) ([]Row, error) {
	dir, err := os.MkdirTemp("", "bench-rdf")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	pages, err := corpus(dir, pad)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, syn := range []string{"rdfa", "microdata", "jsonld"} {
		ps := pages[syn]
		size := 0
		for _, p := range ps {
			size += len(p.body)
		}
		// Courtesy: whole passes over the pages until the time is spent.
		var done int
		start := time.Now()
		for time.Since(start).Seconds() < seconds {
			for _, p := range ps {
				if _, _, err := rdf.Extract(ctx, p.URL, p.body, rdf.Options{Syntaxes: syntaxes[syn]}); err != nil {
					return nil, fmt.Errorf("%s: %w", p.URL, err)
				}
			}
			done += size
		}
		ours := float64(done) / time.Since(start).Seconds() / 1e6

		// npm: a short calibration pass, then enough passes for the time.
		theirs, err := npmRate(ctx, tools, dir, syn, ps, 1)
		if err != nil {
			return nil, err
		}
		passes := int(seconds*theirs*1e6/float64(size)) + 1
		if theirs, err = npmRate(ctx, tools, dir, syn, ps, passes); err != nil {
			return nil, err
		}
		rows = append(rows, Row{Syntax: syn, Pages: len(ps), Bytes: size, CourtesyMBs: ours, NPMMBs: theirs, Ratio: ours / theirs})
	}
	return rows, nil
}

// npmRate runs the npm extractors' bench mode: passes over the pages in
// one node process, timed inside node (start-up excluded).
func npmRate(ctx context.Context, tools, dir, syn string, ps []corpusPage, passes int) (float64, error) {
	manifest := filepath.Join(dir, syn+".json")
	b, _ := json.Marshal(ps)
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		return 0, err
	}
	abs, err := filepath.Abs(tools)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(abs, "extract.mjs"), "bench", syn, fmt.Sprint(passes), manifest)
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "CONTEXT="+filepath.Join(filepath.Dir(filepath.Dir(abs)), "internal", "rdf", "contexts", "schemaorg.jsonld"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("npm extractors: %w", err)
	}
	var r struct {
		Bytes   float64 `json:"bytes"`
		Seconds float64 `json:"seconds"`
	}
	if err := json.Unmarshal(out, &r); err != nil || r.Seconds <= 0 {
		return 0, fmt.Errorf("npm extractors: bad output %q", out)
	}
	return r.Bytes / r.Seconds / 1e6, nil
}

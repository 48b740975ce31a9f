package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/courtesy-crawler/courtesy/"

// leaves import nothing of the project but other leaves: the parsers and
// formats that everything else builds on (robots.txt, URL normalization,
// the store, the HTTP/1 reader, the crawl log, the RDF model, a page's
// character encoding, ...).
var leaves = []string{
	"internal/robots", "internal/urlnorm", "internal/kv", "internal/h1", "internal/crawllog",
	"internal/gzmember", "internal/warc/cdxj", "internal/config", "internal/resolve",
	"internal/rdf", "internal/cpuclock", "internal/redistest", "internal/fakeclock", "internal/poll",
	"internal/browsertest", "internal/htmlenc",
}

// wiring packages put components together into a program or a service;
// only they may import two or more components, and only they (and the
// command) may import each other.
var wiring = []string{
	"cmd/courtesy", "internal/cli", "internal/crawl", "internal/proxy", "internal/service",
	"internal/urlfrontier", "internal/cluster", "internal/console",
	// The indexer follows a crawl's WARC and quad files into the triple
	// store and the text index, and search serves them: both are services
	// that assemble components, as the proxy does.
	"internal/index", "internal/search",
}

// components are the parts the wiring packages assemble. A package that
// is not a wiring package may import at most one of them (a backend of
// the politeness gate imports the gate; dedup writes WARC revisit
// targets), never two: two components meet only in a wiring package.
var components = []string{
	"internal/politeness", "internal/frontier", "internal/fetch", "internal/warc", "internal/httpcache",
	"internal/extract", "internal/dedup", "internal/traps", "internal/sitemap", "internal/hostmap",
	"internal/triplestore", "internal/mitm",
}

// projectImports maps every package directory of the repository (test
// files left out) to the project packages it imports. Programs (package
// main: the command, benchmarks, tools) are wiring by nature; their
// directories are listed in mains.
func projectImports(t *testing.T) (out map[string][]string, mains map[string]bool) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	out, mains = map[string][]string{}, map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		if f.Name.Name == "main" {
			mains[pkg] = true
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil || !strings.HasPrefix(p, module) {
				continue
			}
			p = strings.TrimPrefix(p, module)
			if !slices.Contains(out[pkg], p) {
				out[pkg] = append(out[pkg], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, mains
}

// under reports whether pkg is one of list or below one of them
// (politeness/redisbackend is part of politeness).
func under(pkg string, list []string) (string, bool) {
	for _, l := range list {
		if pkg == l || strings.HasPrefix(pkg, l+"/") {
			return l, true
		}
	}
	return "", false
}

func TestImportRules(t *testing.T) {
	imports, mains := projectImports(t)
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		deps := imports[pkg]
		if slices.Contains(leaves, pkg) {
			for _, d := range deps {
				if !slices.Contains(leaves, d) {
					t.Errorf("%s must import nothing of the project but leaves; it imports %s", pkg, d)
				}
			}
		}
		_, isWiring := under(pkg, wiring)
		isWiring = isWiring || mains[pkg]
		own, _ := under(pkg, components)
		var comps []string
		for _, d := range deps {
			if w, ok := under(d, wiring); ok && !isWiring {
				t.Errorf("%s imports %s, a wiring package: only wiring packages may", pkg, w)
			}
			if c, ok := under(d, components); ok && c != own && !slices.Contains(comps, c) {
				comps = append(comps, c)
			}
		}
		if !isWiring && len(comps) > 1 {
			t.Errorf("%s imports the components %v: only %v wire components together", pkg, comps, wiring)
		}
	}
}

// TestImportScan: the scan TestImportRules judges finds the imports that
// are known to be there, so a scan that silently finds nothing cannot
// pass.
func TestImportScan(t *testing.T) {
	imports, mains := projectImports(t)
	if !mains["cmd/courtesy"] || mains["internal/crawl"] {
		t.Errorf("scan: programs %v", mains)
	}
	for _, want := range []struct{ pkg, dep string }{
		{"internal/crawl", "internal/politeness"},
		{"internal/crawl", "internal/frontier"},
		{"internal/cli", "internal/crawl"},
		{"internal/politeness/redisbackend", "internal/politeness"},
	} {
		if !slices.Contains(imports[want.pkg], want.dep) {
			t.Errorf("scan: %s should import %s; found %v", want.pkg, want.dep, imports[want.pkg])
		}
	}
	if _, ok := under("internal/politeness/redisbackend", components); !ok {
		t.Error("under: a sub-package does not belong to its component")
	}
	if _, ok := under("internal/politenessx", components); ok {
		t.Error("under: a name prefix counts as a sub-package")
	}
}

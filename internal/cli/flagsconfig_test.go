package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseFlagsConfig: a command's flags from its section of the file and
// from the environment; the command line wins over the environment, which
// wins over the file; lists fill repeatable flags; a key that names no
// flag, a list for a flag of one value and a bad value are usage errors.
func TestParseFlagsConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `
listen: 127.0.0.1:1          # the proxy's, not this command's
crawl: {max-pages: 3}        # another command's section
serve:
  listen: 127.0.0.1:7000
  poll: 250ms
  follow: false
  resolve: ["a.test=127.0.0.1:1", "b.test=127.0.0.1:2"]
`)
	type got struct {
		listen  string
		poll    time.Duration
		follow  bool
		resolve []string
	}
	run := func(t *testing.T, args []string, environ map[string]string) (got, error) {
		for k, v := range environ {
			t.Setenv(k, v)
		}
		var g got
		var rl stringList
		fs := flag.NewFlagSet("courtesy serve", flag.ContinueOnError)
		fs.SetOutput(new(bytes.Buffer))
		fs.StringVar(&g.listen, "listen", "127.0.0.1:7071", "")
		fs.DurationVar(&g.poll, "poll", time.Second, "")
		fs.BoolVar(&g.follow, "follow", true, "")
		fs.Var(&rl, "resolve", "")
		err := parseFlagsConfig(&Env{Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}, fs, args, "serve")
		g.resolve = rl
		return g, err
	}
	t.Setenv("COURTESY_CONFIG", "")
	for _, tc := range []struct {
		name    string
		args    []string
		environ map[string]string
		want    got
	}{
		{"defaults without a file", nil, nil, got{"127.0.0.1:7071", time.Second, true, nil}},
		{"the file", []string{"--config", good}, nil, got{"127.0.0.1:7000", 250 * time.Millisecond, false, []string{"a.test=127.0.0.1:1", "b.test=127.0.0.1:2"}}},
		{"flags win", []string{"--config", good, "--listen", ":9", "--resolve", "c.test=127.0.0.1:3"}, nil,
			got{":9", 250 * time.Millisecond, false, []string{"c.test=127.0.0.1:3"}}},
		{"environment over the file", []string{"--config", good}, map[string]string{"COURTESY_SERVE__POLL": "5s"},
			got{"127.0.0.1:7000", 5 * time.Second, false, []string{"a.test=127.0.0.1:1", "b.test=127.0.0.1:2"}}},
		{"$COURTESY_CONFIG names the file", nil, map[string]string{"COURTESY_CONFIG": good},
			got{"127.0.0.1:7000", 250 * time.Millisecond, false, []string{"a.test=127.0.0.1:1", "b.test=127.0.0.1:2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := run(t, tc.args, tc.environ)
			if err != nil {
				t.Fatal(err)
			}
			if g.listen != tc.want.listen || g.poll != tc.want.poll || g.follow != tc.want.follow || !slices.Equal(g.resolve, tc.want.resolve) {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "serve: {lisen: x}", "serve.lisen: no such setting"},
		{"list for one value", "serve: {listen: [a, b]}", "serve.listen: one value"},
		{"bad value", "serve: {poll: soon}", "serve.poll"},
		{"not a section", "serve: 3", "not a section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, []string{"--config", write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.body)}, nil)
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a usage error with %q", err, tc.want)
			}
		})
	}
}

// TestProxyFileOtherSections: the proxy reads a file shared with the other
// commands, whose sections it passes over, while a key of its own that it
// does not know is still an error.
func TestProxyFileOtherSections(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared.yaml")
	os.WriteFile(shared, []byte("listen: 127.0.0.1:18080\ncrawl: {max-pages: 3}\nserve: {listen: 127.0.0.1:7000}\nindex: {poll: 1s}\nsearch: {listen: x}\ntestweb: {sites: 3}\n"), 0o644)
	fc, err := loadProxyFile(shared, &proxyFlags{}, map[string]bool{})
	if err != nil || fc.Listen != "127.0.0.1:18080" {
		t.Fatalf("shared file: listen %q, %v", fc.Listen, err)
	}
	typo := filepath.Join(dir, "typo.yaml")
	os.WriteFile(typo, []byte("lisen: 127.0.0.1:18080\n"), 0o644)
	if _, err := loadProxyFile(typo, &proxyFlags{}, map[string]bool{}); err == nil {
		t.Error("an unknown key of the proxy's was accepted")
	}
}

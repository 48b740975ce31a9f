package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
)

// commonFlags are the flags every long-running subcommand takes.
type commonFlags struct {
	config    string
	resolve   stringList
	logFormat string
	logLevel  string
	// level is the logger's level once logger built it; the console's
	// log-level action changes it.
	level *slog.LevelVar
}

// register adds the common flags to fs. The config file defaults to
// $COURTESY_CONFIG.
func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", os.Getenv("COURTESY_CONFIG"), "YAML configuration `FILE` (default $COURTESY_CONFIG)")
	fs.Var(&c.resolve, "resolve", "send connections for hosts matching `PATTERN=ADDR:PORT` to ADDR:PORT (repeatable; PATTERN is host, *.suffix or *)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log line `format`: text (logfmt) or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "minimum log `level`: debug, info, warn, error")
}

// resolver builds the --resolve rules.
func (c *commonFlags) resolver() (*resolve.Resolver, error) {
	r, err := resolve.New(c.resolve)
	if err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	return r, nil
}

// logger builds the structured logger the flags ask for, writing to w.
func (c *commonFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", c.logLevel)
	}
	c.level = new(slog.LevelVar)
	c.level.Set(level)
	opts := &slog.HandlerOptions{Level: c.level}
	switch strings.ToLower(c.logFormat) {
	case "text", "logfmt":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, usagef("--log-format %q: want text or json", c.logFormat)
	}
}

// flagsSet returns the names of the flags given on the command line, so
// that they can override the config file.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// noArgs returns a usage error if fs has positional arguments.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}

// politenessFile gathers the `politeness:` section as the proxy's file
// type holds it into the one reading that the proxy and the crawler share
// (politeness.FileConfig.GateConfig).
func politenessFile(c politeness.Config, domains []listing9Domain, dd *listing9Domain) politeness.FileConfig {
	f := politeness.FileConfig{Config: c}
	for _, d := range domains {
		f.Domains = append(f.Domains, politeness.DomainDelay{Domain: d.Domain, Delay: politeness.Millis(d.Delay), Override: d.Override})
	}
	if dd != nil {
		f.DefaultDomain = &politeness.DomainDelay{Domain: dd.Domain, Delay: politeness.Millis(dd.Delay), Override: dd.Override}
	}
	return f
}

// parseFlagsConfig parses args with fs, as parseFlags does, for a command
// whose settings are its flags: it adds --config (default
// $COURTESY_CONFIG), and then every flag not given on the command line
// takes its value from the file's section named section (a key per flag,
// as spelt on the command line; a list for a repeatable flag) or from the
// environment (COURTESY_SERVE__LISTEN). Flags win over the environment,
// which wins over the file. A key that names no flag is a usage error, so
// that a typo never leaves a default in force.
func parseFlagsConfig(env *Env, fs *flag.FlagSet, args []string, section string) error {
	path := fs.String("config", os.Getenv("COURTESY_CONFIG"), "YAML configuration `FILE` (default $COURTESY_CONFIG): its '"+section+":' section sets these flags, a key per flag")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	keys, err := config.Section(*path, section)
	if err != nil {
		return usagef("%v", err)
	}
	set := flagsSet(fs)
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		f := fs.Lookup(key)
		if f == nil || key == "config" {
			return usagef("config: %s.%s: no such setting (the keys are the flags of %s)", section, key, fs.Name())
		}
		if set[key] {
			continue
		}
		values, list := keys[key].([]any)
		if !list {
			values = []any{keys[key]}
		} else if len(values) > 1 && !repeatable(f) {
			return usagef("config: %s.%s: one value, not a list", section, key)
		}
		for _, v := range values {
			if err := f.Value.Set(fmt.Sprint(v)); err != nil {
				return usagef("config: %s.%s: %v", section, key, err)
			}
		}
	}
	return nil
}

// repeatable reports whether f takes a value each time it is given, as
// --resolve does, rather than the last one.
func repeatable(f *flag.Flag) bool {
	_, ok := f.Value.(*stringList)
	return ok
}

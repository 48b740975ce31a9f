// Package config loads Courtesy's YAML configuration into plain structs.
//
// A subcommand fills its config struct with defaults, then calls Load, which
// overlays the YAML file (if any) and then environment variables; flags given
// on the command line are applied last by the subcommand. Keys are kebab-case
// as in the polite-proxy thesis' configuration format (`default-domain`). An environment variable
// COURTESY_A__B_C sets key a.b-c: "__" separates levels, "_" stands for "-".
// Durations are written as Go durations ("1500ms", "24h"); fields that the
// seeds give in milliseconds say so in their doc comments.
package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// EnvPrefix starts every environment variable that sets a config key.
const EnvPrefix = "COURTESY_"

// Load overlays the YAML file at path (skipped when path is "") and the
// COURTESY_ environment onto dst, a pointer to a struct whose fields carry
// `yaml` tags and already hold the defaults. Unknown keys in the file are an
// error, so a typo never silently leaves a default in force.
func Load(path string, dst any) error {
	return load(path, os.Environ(), dst)
}

// Section returns the keys of one top-level section of the YAML file at
// path (skipped when path is "") and of the COURTESY_ environment
// (COURTESY_SERVE__LISTEN is serve.listen), the environment winning, as
// read: a YAML list stays a []any, an environment value is a string. It is
// how a command whose settings are its flags reads them from the file
// (key = flag name); the other sections are not looked at.
func Section(path, name string) (map[string]any, error) {
	k, err := read(path, os.Environ())
	if err != nil {
		return nil, err
	}
	raw, ok := k.Raw()[name]
	if !ok {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("config: %s: %q is not a section of keys", path, name)
	}
	return m, nil
}

// read loads the YAML file at path (skipped when "") and the environment.
func read(path string, environ []string) (*koanf.Koanf, error) {
	k := koanf.New(".")
	if path != "" {
		if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
	}
	envKeys := map[string]string{}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if key, ok := envKey(name); ok {
			envKeys[key] = val
		}
	}
	if len(envKeys) > 0 {
		if err := k.Load(env.Provider(".", env.Opt{
			Prefix:        EnvPrefix,
			TransformFunc: func(k, v string) (string, any) { key, _ := envKey(k); return key, v },
			EnvironFunc:   func() []string { return environ },
		}), nil); err != nil {
			return nil, fmt.Errorf("config: environment: %w", err)
		}
	}
	return k, nil
}

func load(path string, environ []string, dst any) error {
	k, err := read(path, environ)
	if err != nil {
		return err
	}
	err = k.UnmarshalWithConf("", dst, koanf.UnmarshalConf{
		Tag: "yaml",
		DecoderConfig: &mapstructure.DecoderConfig{
			DecodeHook: mapstructure.ComposeDecodeHookFunc(
				mapstructure.StringToTimeDurationHookFunc(),
				mapstructure.StringToSliceHookFunc(","),
				mapstructure.TextUnmarshallerHookFunc(),
			),
			ErrorUnused:      true,
			WeaklyTypedInput: true,
			Result:           dst,
			TagName:          "yaml",
		},
	})
	if err != nil {
		if path == "" {
			return fmt.Errorf("config: environment: %w", err)
		}
		return fmt.Errorf("config: %s: %w", path, err)
	}
	return nil
}

// envKey maps COURTESY_A__B_C to "a.b-c"; ok is false for other variables
// and for the two that are not keys: COURTESY_CONFIG, which names the
// file, and COURTESY_ADMIN_TOKEN, the admin token of the proxy and of
// serve's politeness services (the file's admin.token is
// COURTESY_ADMIN__TOKEN).
func envKey(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, EnvPrefix)
	if !ok || rest == "" || rest == "CONFIG" || rest == "ADMIN_TOKEN" {
		return "", false
	}
	rest = strings.ToLower(rest)
	parts := strings.Split(rest, "__")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, "_", "-")
	}
	return strings.Join(parts, "."), true
}

// Watcher reports writes to one file (NewWatcher, Run).
type Watcher struct {
	w   *fsnotify.Watcher
	abs string
}

// NewWatcher starts watching the file at path: every write, creation or
// replacement from its return on is reported by Run. It watches the
// directory, so editors that save by renaming a new file over the old one
// are seen. Run closes it.
func NewWatcher(path string) (*Watcher, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config: watch %s: %w", path, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("config: watch %s: %w", path, err)
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return nil, fmt.Errorf("config: watch %s: %w", path, err)
	}
	return &Watcher{w: w, abs: abs}, nil
}

// Run calls onChange (from Run's goroutine) whenever the file is written,
// created or replaced, until ctx is done, and closes the watcher. Events
// within 100 ms are coalesced into one call.
func (cw *Watcher) Run(ctx context.Context, onChange func()) error {
	w, abs := cw.w, cw.abs
	defer w.Close()
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) != abs || ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename) == 0 {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(100 * time.Millisecond)
			} else {
				timer.Reset(100 * time.Millisecond)
			}
			fire = timer.C
		case <-fire:
			fire = nil
			onChange()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			return fmt.Errorf("config: watch %s: %w", abs, err)
		}
	}
}

package urlfrontier

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// LevelTrace is the slog level URLFrontier's TRACE maps onto (below Debug).
const LevelTrace = slog.LevelDebug - 4

// PackageAttr is the attribute naming a logger's package in every record.
const PackageAttr = "pkg"

// LogLevels holds a log level per package, so that SetLogLevel can turn one
// package's logging up or down while the process runs. Loggers made by
// Logger check the level of their package (or the default) on every record;
// the handler underneath must let every level through.
type LogLevels struct {
	base slog.Handler
	def  slog.LevelVar
	mu   sync.Mutex
	pkgs map[string]*slog.LevelVar // guarded by mu; entries never removed
}

// NewLogLevels wraps base (which must not filter by level) with per-package
// levels, every package at def until Set.
func NewLogLevels(base slog.Handler, def slog.Level) *LogLevels {
	l := &LogLevels{base: base, pkgs: map[string]*slog.LevelVar{}}
	l.def.Set(def)
	return l
}

// maxPackages bounds the packages SetLogLevel may name.
const maxPackages = 256

// Logger returns the logger of package pkg ("urlfrontier", "frontier", …).
func (l *LogLevels) Logger(pkg string) *slog.Logger {
	return slog.New(&levelHandler{l: l, pkg: pkg, h: l.base.WithAttrs([]slog.Attr{slog.String(PackageAttr, pkg)})})
}

// Set sets the level of package pkg; "", "root" and "ROOT" set the default
// of every package without its own. Names are matched without case, and a
// name may be a Java-style dotted path whose last element is the package
// ("crawlercommons.urlfrontier.service" sets "service"). It reports false
// when too many packages were named.
func (l *LogLevels) Set(pkg string, level slog.Level) bool {
	pkg = normPackage(pkg)
	if pkg == "" {
		l.def.Set(level)
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.pkgs[pkg]
	if v == nil {
		if len(l.pkgs) >= maxPackages {
			return false
		}
		v = new(slog.LevelVar)
		l.pkgs[pkg] = v
	}
	v.Set(level)
	return true
}

// Level returns the level in force for pkg.
func (l *LogLevels) Level(pkg string) slog.Level {
	pkg = normPackage(pkg)
	l.mu.Lock()
	v := l.pkgs[pkg]
	l.mu.Unlock()
	if v != nil {
		return v.Level()
	}
	return l.def.Level()
}

func normPackage(pkg string) string {
	pkg = strings.ToLower(strings.TrimSpace(pkg))
	if i := strings.LastIndexByte(pkg, '.'); i >= 0 {
		pkg = pkg[i+1:]
	}
	if pkg == "root" {
		return ""
	}
	return pkg
}

type levelHandler struct {
	l   *LogLevels
	pkg string
	h   slog.Handler
}

func (h *levelHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= h.l.Level(h.pkg) && h.h.Enabled(ctx, level)
}

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error { return h.h.Handle(ctx, r) }

func (h *levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &levelHandler{l: h.l, pkg: h.pkg, h: h.h.WithAttrs(as)}
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	return &levelHandler{l: h.l, pkg: h.pkg, h: h.h.WithGroup(name)}
}

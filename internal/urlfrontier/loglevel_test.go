package urlfrontier

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestLogLevelsPerPackage(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogLevels(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: LevelTrace}), slog.LevelInfo)
	a, b := l.Logger("alpha"), l.Logger("beta")
	steps := []struct {
		set   func()
		log   func()
		shown bool
	}{
		{func() {}, func() { a.Debug("a-debug-1") }, false},
		{func() {}, func() { a.Info("a-info-1") }, true},
		{func() { l.Set("com.example.Alpha", slog.LevelDebug) }, func() { a.Debug("a-debug-2") }, true},
		{func() {}, func() { b.Debug("b-debug-1") }, false},
		{func() { l.Set("ROOT", slog.LevelError) }, func() { b.Warn("b-warn-1") }, false},
		{func() {}, func() { a.Debug("a-debug-3") }, true},
		{func() { l.Set("beta", LevelTrace) }, func() { b.Log(nil, LevelTrace, "b-trace-1") }, true},
	}
	for i, s := range steps {
		s.set()
		buf.Reset()
		s.log()
		if got := buf.Len() > 0; got != s.shown {
			t.Errorf("step %d: shown = %v, want %v (%q)", i, got, s.shown, buf.String())
		}
		if s.shown && !strings.Contains(buf.String(), "pkg=") {
			t.Errorf("step %d: no pkg attribute: %q", i, buf.String())
		}
	}
	for i := range maxPackages + 10 {
		l.Set("p"+string(rune('a'+i%26))+strings.Repeat("x", i), slog.LevelDebug)
	}
	if l.Set("one-too-many", slog.LevelDebug) {
		t.Error("Set accepted more than maxPackages packages")
	}
}

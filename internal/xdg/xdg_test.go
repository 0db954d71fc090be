package xdg

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv("HOME", "/home/me")
	for value, want := range map[string]string{
		"/data":    "/data/tltune",
		"relative": "/home/me/.cache/tltune", // ignored, as the rule says
		"":         "/home/me/.cache/tltune",
	} {
		t.Setenv("XDG_CACHE_HOME", value)
		if got, err := Dir("XDG_CACHE_HOME", ".cache"); err != nil || got != filepath.FromSlash(want) {
			t.Errorf("XDG_CACHE_HOME=%q: %q, %v; want %q", value, got, err, want)
		}
	}
}

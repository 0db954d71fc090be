// Package xdg finds tltune's folders by the XDG base-directory rule.
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir is $variable/tltune, or ~/fallback/tltune when variable is unset or
// not an absolute path (the rule: a relative one is to be ignored).
func Dir(variable, fallback string) (string, error) {
	base := os.Getenv(variable)
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%v; set %s", err, variable)
		}
		base = filepath.Join(home, fallback)
	}
	return filepath.Join(base, "tltune"), nil
}

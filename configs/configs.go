// Package configs embeds the project's data files: device profiles
// (devices/*.toml), search spaces (spaces/*.toml), sweep suites
// (suites/*.toml) and default tuning tables (tuning/*.json).
//
// go:embed cannot reach parent folders, so the files are embedded here, next
// to them, and the packages that interpret them read this FS.
package configs

import "embed"

// FS holds every embedded data file, by path relative to configs/.
//
//go:embed all:*
var FS embed.FS

//go:build tools

// This file pins the modules of DESIGN.md §8 before every package that uses
// them exists, so that go.sum holds them and `go mod tidy` keeps them.
package main

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/mattn/go-sqlite3"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/schollz/progressbar/v3"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
)

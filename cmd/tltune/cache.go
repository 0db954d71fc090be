package main

import (
	"fmt"

	"tltune/internal/speak"
	"tltune/tuner/bincache"
)

func init() {
	register(&command{
		name:    "cache",
		summary: "the binary cache of built device programs in $XDG_CACHE_HOME/tltune: stats, or clear it",
		usage:   "stats|clear [--json]",
		run:     cacheCmd,
	})
}

func cacheCmd(c *context, args []string) int {
	fs := c.flags()
	asJSON := fs.Bool("json", false, "print the statistics as JSON")
	pos, status, ok := parseInterleaved(c, fs, args)
	if !ok {
		return status
	}
	if len(pos) != 1 || (pos[0] != "stats" && pos[0] != "clear") {
		return c.usageError("say stats or clear")
	}
	dir, err := bincache.DefaultDir()
	if err != nil {
		return c.fail(err)
	}
	cache, err := bincache.Open(dir, 0)
	if err != nil {
		return c.fail(err)
	}
	if pos[0] == "clear" {
		if err := cache.Clear(); err != nil {
			return c.fail(err)
		}
	}
	st, err := cache.Stats()
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		if err := speak.WriteJSON(c.stdout, cacheJSON{st.Dir, st.Binaries, st.Bytes, st.Kernels, st.Notes, st.Paths, st.Limit}); err != nil {
			return c.fail(err)
		}
		return exitOK
	}
	fmt.Fprintf(c.stdout, "binary cache %s: %d program(s), %s of %s, %d kernel(s) indexed, configurations noted for %d shape(s), %d search path(s)\n",
		st.Dir, st.Binaries, speak.Bytes(uint64(st.Bytes)), speak.Bytes(uint64(st.Limit)), st.Kernels, st.Notes, st.Paths)
	return exitOK
}

// cacheJSON is the cache's statistics as --json prints them.
type cacheJSON struct {
	Dir      string `json:"dir"`
	Programs int    `json:"programs"`
	Bytes    int64  `json:"bytes"`
	Kernels  int    `json:"kernels"`
	Notes    int    `json:"noted_shapes"`
	Paths    int    `json:"search_paths"`
	Limit    int64  `json:"limit_bytes"`
}

// gospin — a Go program whose time is in main.leaf, called by main.middle
// from main.main, for SECONDS (default 0: one short pass); main.leaf's loop
// calls main.mix, which calls main.square: both small enough that the
// compiler inlines them (main.square into main.mix into main.leaf), so an
// address in the loop is in up to three functions at once.  Tests build it
// with `go build` twice, unstripped and stripped (-ldflags="-s -w"), and
// compare the names, lines and inline chains the stripped build's
// .gopclntab gives with the unstripped build's symbols and DWARF.  Each
// function the loop runs in is one line (not gofmt's layout): a capture
// describes a frame at the first address it saw of it, so two captures
// agree on every line only where a function has one.
// Usage: gospin [SECONDS]
package main

import (
	"os"
	"strconv"
	"time"
)

var sink int

func square(i int) int { return i*i ^ i>>3 ^ i<<2 }

func mix(i int) int { return square(i) % 7 }

//go:noinline
func leaf(n int) int { s := 0; for i := 0; i < n; i++ { s += mix(i) }; return s }

//go:noinline
func middle(n int) int {
	return leaf(n) + 1
}

func main() {
	seconds := 0.0
	if len(os.Args) > 1 {
		seconds, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for {
		sink += middle(1000000)
		if !time.Now().Before(end) {
			break
		}
	}
}

// gospin — a Go program whose time is in main.leaf, called by main.middle
// from main.main, for SECONDS (default 0: one short pass).  Tests build it
// with `go build` twice, unstripped and stripped (-ldflags="-s -w"), and
// compare the names the stripped build's .gopclntab gives with the
// unstripped build's symbol table.
// Usage: gospin [SECONDS]
package main

import (
	"os"
	"strconv"
	"time"
)

var sink int

//go:noinline
func leaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

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

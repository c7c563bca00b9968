// golines — a Go program whose time is in main.spin, on two lines of its
// own: a loop on one line runs n rounds, the same loop on the next line 2n,
// so a profile by line puts main.spin's samples about 1:2 on the two.  Tests
// build it stripped (-ldflags="-s -w"): the lines come from .gopclntab.
// Usage: golines [SECONDS]
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint32

//go:noinline
func spin(x uint32, n int) uint32 {
	for r := 0; r < n; r++ { x = (x * 2654435761) ^ (x >> 13) }   // one share
	for r := 0; r < 2*n; r++ { x = (x * 2246822519) ^ (x >> 11) } // two
	return x
}

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		seconds, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(end) {
		sink = spin(sink, 400000)
	}
}

package etcdview

import (
	"math/big"
	"strings"
)

// A range request with a limit makes etcd count every key from the start of
// the range to its end, to answer with the count beside the first keys: a
// walk that asked for "the next page of keys under the prefix" would make
// etcd count to the end of the prefix for every page, a cost that grows
// with the square of the keys. A walk asks instead for bounded windows,
// [from, to), each sized from what the windows before it held to hold a
// few pages (windowPages), so that etcd counts about that many keys for
// each. Only the first request reads to the end of the prefix, and counts
// every key once.
//
// A window is sized in positions: the bytes of a key after the prefix, read
// as a number of windowDigits digits in base 256. A window's width is a
// difference of positions, and its end the key at its start's position
// plus its width.

// windowDigits is how many bytes after the prefix a position reads. Keys
// are at most a namespace and a name long (63 and 253 bytes); keys that
// share a longer start fall in one window, which is then larger than a
// page, and still correct.
const windowDigits = 320

// windowGrowth bounds how much larger a window is than the last one, which
// held too few keys to say where the next ones are: a window after an empty
// one reaches windowGrowth times further, so that a gap between keys is
// crossed in a few requests, and overshoots by at most that much.
const windowGrowth = 8

// windowPages is how many pages a window is cut to hold: keys are not
// spread evenly over their positions (names of decimal digits use ten of
// a byte's 256 values), and a window that holds fewer keys than a page
// costs a request for less than a page.
const windowPages = 2

// windowJump bounds how much larger than an empty window the next one is
// when it reaches to the end of the keys that start as the empty one's
// ends do.
const windowJump = 1 << 16

func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

// windows sizes the windows of one walk under a prefix.
type windows struct {
	prefix string
	// end is the end of the prefix's range, where the walk stops.
	end string
	// width is the next window's, nil before the first answer.
	width *big.Int
}

func newWindows(prefix string) *windows {
	return &windows{prefix: prefix, end: PrefixEnd(prefix)}
}

// position is key's position: its bytes after the prefix, padded or cut to
// windowDigits.
func (w *windows) position(key string) *big.Int {
	var digits [windowDigits]byte
	copy(digits[:], strings.TrimPrefix(key, w.prefix))
	return new(big.Int).SetBytes(digits[:])
}

// keyAt is the key at position p, or the end of the prefix when p is past
// its last position. Trailing zero bytes are dropped: the key is only ever
// a window's end, which needs to be greater than its start, not a key that
// exists.
func (w *windows) keyAt(p *big.Int) string {
	if p.BitLen() > 8*windowDigits {
		return w.end
	}
	var digits [windowDigits]byte
	p.FillBytes(digits[:])
	return w.prefix + strings.TrimRight(string(digits[:]), "\x00")
}

// to is where the window that starts at from ends: the end of the prefix for
// the first window (nothing is known yet), or from's position plus the
// width.
func (w *windows) to(from string) string {
	if w.width == nil {
		return w.end
	}
	// The end is rounded up to the window's leading digits, a sixteenth of
	// it at most, so that it is a key as short as the keys around it.
	unit := new(big.Int).Lsh(big.NewInt(1), uint(max(0, (w.width.BitLen()-5)/8*8)))
	to := new(big.Int).Add(w.position(from), w.width)
	to.Add(to, unit).Sub(to, big.NewInt(1))
	to.Quo(to, unit).Mul(to, unit)
	return min(w.keyAt(to), w.end)
}

// answered sizes the next window, to hold about target keys, from the window
// [from, to) read: count is etcd's count of its keys, of which it returned
// the first returned, first to last; more tells that it held more.
func (w *windows) answered(from, to string, count, returned int64, first, last string, more bool, target int64) {
	var span *big.Int
	var held int64
	switch {
	case more && returned > 1:
		// The window held more than the page: the next window is cut
		// to the density of the keys returned, from first to last
		// (from may be far before the first).
		span = new(big.Int).Sub(w.position(last), w.position(first))
		span.Mul(span, big.NewInt(returned)).Quo(span, big.NewInt(returned-1))
		span.Add(span, big.NewInt(1))
		held = returned
	case more && returned == 1:
		span = new(big.Int).Sub(w.position(last), w.position(from))
		span.Add(span, big.NewInt(1))
		held = returned
	case to == w.end:
		// Nothing is left after this window.
		return
	default:
		span = new(big.Int).Sub(w.position(to), w.position(from))
		held = count
	}
	// As many keys as target at the density the window had, growing by
	// at most windowGrowth where it held too few to say.
	next := new(big.Int).Mul(span, big.NewInt(windowGrowth))
	if held > 0 && target < windowGrowth*held {
		next.Mul(span, big.NewInt(max(target, 1)))
		next.Quo(next, big.NewInt(held))
	}
	if held == 0 {
		// An empty window ends the keys that start as both its ends
		// do, up to the byte where they differ: the next keys start
		// otherwise (the next namespace, the next hundred of a
		// numbered name). The next window reaches to the end of the
		// keys that start as its start does up to that byte, one more
		// than its ends share (the next namespace, not the next ten),
		// within windowJump of this one's width.
		common := len(w.prefix)
		for common < min(len(from), len(to)) && from[common] == to[common] {
			common++
		}
		level := common + 1
		if level <= len(to) {
			if end := PrefixEnd(to[:level]); end < w.end {
				jump := new(big.Int).Sub(w.position(end), w.position(to))
				jump = bigMin(jump, new(big.Int).Mul(span, big.NewInt(windowJump)))
				if jump.Cmp(next) > 0 {
					next = jump
				}
			}
		}
	}
	if next.Sign() <= 0 {
		next.SetInt64(1)
	}
	w.width = next
}

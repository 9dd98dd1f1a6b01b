package render

import (
	"math"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1048550, "1.0 MiB"}, // 1023.97 KiB rounds up a unit, not to "1024.0 KiB"
		{2 << 20, "2.0 MiB"},
		{8 << 30, "8.0 GiB"},
		{-2048, "-2.0 KiB"},
		{math.MaxInt64, "8.0 EiB"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		part, whole int64
		want        string
	}{
		{0, 0, "-"},
		{1, 2, "50%"},
		{2, 2, "100%"},
		{3, 2, "150%"},
		{1, 3, "33%"},
	} {
		if got := Percent(c.part, c.whole); got != c.want {
			t.Errorf("Percent(%d, %d) = %q, want %q", c.part, c.whole, got, c.want)
		}
	}
}

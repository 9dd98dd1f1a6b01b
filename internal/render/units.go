package render

import (
	"fmt"
	"strconv"
)

// Bytes is n bytes in binary units, as an operator reads a size at a
// glance: "512 B", "1.5 KiB", "23.4 MiB", "8.0 GiB". Data formats (yaml,
// json) keep bytes, for a script to add up.
func Bytes(n int64) string {
	if n < 0 {
		return "-" + Bytes(-n)
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	value, suffix := float64(n)/unit, 0
	for value >= unit && suffix < len(binaryUnits)-1 {
		value /= unit
		suffix++
	}
	// 1023.96 KiB would print as "1024.0 KiB": the next unit reads better.
	if value >= unit-0.05 && suffix < len(binaryUnits)-1 {
		value /= unit
		suffix++
	}
	return fmt.Sprintf("%.1f %s", value, binaryUnits[suffix])
}

var binaryUnits = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// Percent is part of whole as a whole percentage, "-" when whole is 0
// (nothing to measure against).
func Percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return strconv.FormatInt(part*100/whole, 10) + "%"
}

package gocode

import (
	"runtime"
	"unsafe"
)

// declared is the line of f's func keyword. The line of a function's
// entry is its declaration's unless the compiler gave it no prologue (a
// one-line body, `return false`), where it is the body's; the runtime's
// own record of each function (its _func, which FuncForPC hands out for a
// function that is not inlined) keeps the declaration's line as startLine
// since Go 1.20. TestDeclaredLines holds the layout to the toolchain.
func declared(f *runtime.Func, entryLine int) int {
	p := unsafe.Pointer(f)
	// An inlined frame's Func begins with ^uint32(0); entries are never.
	if *(*uint32)(p) == ^uint32(0) {
		return entryLine
	}
	// entryOff, nameOff, args, deferreturn, pcsp, pcfile, pcln, npcdata,
	// cuOffset: nine 32-bit words before startLine.
	start := int(*(*int32)(unsafe.Add(p, 9*4)))
	if start <= 0 || start > entryLine {
		return entryLine
	}
	return start
}

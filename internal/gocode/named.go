package gocode

import (
	"debug/elf"
	"debug/gosym"
	"debug/macho"
	"errors"
	"os"
	"reflect"
	"runtime"
	"sync"
)

// Named is where the function of the given Go name is defined, as the
// running binary's line table says; the name alone when the binary's
// table cannot be read (a format other than ELF or Mach-O). The function
// of a closure is found this way: no function value of it is at hand.
func Named(name string) Location {
	t, err := lineTable()
	if err != nil {
		return Location{Name: name}
	}
	f := t.LookupFunc(name)
	if f == nil {
		return Location{Name: name}
	}
	file, line, _ := t.PCToLine(f.Entry)
	if rf := runtime.FuncForPC(uintptr(int64(f.Entry) + slide(t))); rf != nil && rf.Name() == name {
		line = declared(rf, line)
	}
	return located(name, file, line)
}

// slide is how far the running code is from the addresses in the binary
// file (a position-independent executable is loaded anywhere): this
// function's own two addresses.
func slide(t *gosym.Table) int64 {
	self := runtime.FuncForPC(reflect.ValueOf(Named).Pointer())
	f := t.LookupFunc(self.Name())
	if f == nil {
		return 0
	}
	return int64(self.Entry()) - int64(f.Entry)
}

// lineTable reads the running binary's pclntab once: the runtime keeps it
// in every binary, stripped or not, and it maps names to code.
var lineTable = sync.OnceValues(func() (*gosym.Table, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	data, text, err := pclntab(exe)
	if err != nil {
		return nil, err
	}
	return gosym.NewTable(nil, gosym.NewLineTable(data, text))
})

func pclntab(exe string) ([]byte, uint64, error) {
	if f, err := elf.Open(exe); err == nil {
		defer f.Close()
		tab, text := f.Section(".gopclntab"), f.Section(".text")
		if tab == nil || text == nil {
			return nil, 0, errors.New("no .gopclntab")
		}
		data, err := tab.Data()
		return data, text.Addr, err
	}
	f, err := macho.Open(exe)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	tab, text := f.Section("__gopclntab"), f.Section("__text")
	if tab == nil || text == nil {
		return nil, 0, errors.New("no __gopclntab")
	}
	data, err := tab.Data()
	return data, text.Addr, err
}

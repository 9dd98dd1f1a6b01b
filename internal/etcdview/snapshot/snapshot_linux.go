package snapshot

import "syscall"

// releasePages drops the snapshot's mapped pages from this process's
// resident memory. They are the file's, read-only and clean: the kernel
// reads them again from its page cache when asked. Without this, reading
// a whole snapshot would keep all of it resident, and memory would grow
// with the file's size.
func (s *Snapshot) releasePages() {
	// The address is bbolt's mapping, passed on as a number; it maps at
	// least the database's size.
	syscall.Syscall(syscall.SYS_MADVISE, s.db.Info().Data, uintptr(s.size), syscall.MADV_DONTNEED)
}

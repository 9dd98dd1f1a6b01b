package etcdview

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// releasePages drops the snapshot's mapped pages from this process's
// resident memory. They are the file's, read-only and clean: the kernel
// reads them again from its page cache when asked. Without this, reading
// a whole snapshot would keep all of it resident, and memory would grow
// with the file's size.
func releasePages(db *bolt.DB) {
	var size int64
	if err := db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil || size == 0 {
		return
	}
	// The mapping is at least the database's size; the address is bbolt's
	// own, passed on as a number.
	syscall.Syscall(syscall.SYS_MADVISE, db.Info().Data, uintptr(size), syscall.MADV_DONTNEED)
}

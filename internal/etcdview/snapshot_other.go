//go:build !linux

package etcdview

// releasePages leaves the mapped pages to the kernel where madvise is not
// at hand.
func (s *Snapshot) releasePages() {}

//go:build !linux

package snapshot

// releasePages leaves the mapped pages to the kernel where madvise is not
// at hand.
func (s *Snapshot) releasePages() {}

//go:build !linux

package etcdview

import bolt "go.etcd.io/bbolt"

// releasePages leaves the mapped pages to the kernel where madvise is not
// at hand.
func releasePages(*bolt.DB) {}

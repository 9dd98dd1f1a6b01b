package snapshot

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Status is what a snapshot file holds, in the figures a member's
// status gives of its database: a member restored from the file starts
// with this database, its revision, its compaction and its free pages.
type Status struct {
	Path string `json:"path"`
	// FileSize is the file's size; DBSize the database's pages in it (a
	// member's db file may be longer than its pages).
	FileSize int64 `json:"fileSize"`
	DBSize   int64 `json:"dbSize"`
	// DBSizeInUse is the part of DBSize that holds data, as etcd counts
	// it: the rest is free pages, which a defragmentation of a member
	// restored from the file gives back.
	DBSizeInUse int64 `json:"dbSizeInUse"`
	// Revision is the file's revision; Compacted its last compaction's.
	Revision  int64 `json:"revision"`
	Compacted int64 `json:"compacted"`
}

// Status is the snapshot's own figures. Its keys are indexed first, if
// they are not yet.
func (s *Snapshot) Status() (Status, error) {
	idx, err := s.indexed()
	if err != nil {
		return Status{}, err
	}
	info, err := s.file.Stat()
	if err != nil {
		return Status{}, fmt.Errorf("reading the snapshot %s: %w", s.path, err)
	}
	st := Status{Path: s.path, FileSize: info.Size(), DBSize: s.size, Revision: idx.current, Compacted: idx.compacted}
	// The pages were walked when the keys were indexed; reading them is
	// guarded all the same.
	err = guarded("its pages", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			st.DBSizeInUse = inUse(tx)
			return nil
		})
	})
	if err != nil {
		return Status{}, fmt.Errorf("reading the snapshot %s: %w", s.path, err)
	}
	return st, nil
}

// inUse is the bytes of tx's database that hold data, as etcd's backend
// counts them (its size less the free pages): etcd keeps no freelist in
// the file (bbolt's NoFreelistSync), so bbolt finds the free pages as
// those no bucket reaches, which leaves in use the two meta pages and
// every page of every bucket. The buckets' pages are counted here, in the
// reading goroutine, where a damaged page is a recoverable panic; bbolt's
// own count walks them in a goroutine of its own, where it is not.
func inUse(tx *bolt.Tx) int64 {
	pageSize := int64(tx.DB().Info().PageSize)
	// The root bucket holds every other: its stats add up theirs.
	stats := tx.Cursor().Bucket().Stats()
	return 2*pageSize + int64(stats.BranchAlloc) + int64(stats.LeafAlloc)
}

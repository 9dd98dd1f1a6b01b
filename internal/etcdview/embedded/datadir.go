package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/coreos/go-semver/semver"
	bolt "go.etcd.io/bbolt"
	etcdversion "go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"go.uber.org/zap"
)

// StartOn starts an embedded etcd on the data directory dir for as long as
// this process needs it: unlike Start the data stays, written with
// fsync, for the next process to open. A missing dir is created when create
// is set (Etcd.Created then says so), and refused otherwise: a command
// that only reads would read a new, empty sandbox where the path was
// mistyped. dir may also be an etcd data directory written elsewhere (a
// copy of a member's /var/lib/etcd): it opens as a one-member cluster. The
// directory is held for this process until Close; another process waits
// for it up to wait (0 for as long as it takes), then fails. logger may be
// nil to keep etcd silent.
func StartOn(dir string, wait time.Duration, logger *zap.Logger, create bool) (*Etcd, error) {
	created, err := prepareDataDir(dir, create)
	if err != nil {
		return nil, err
	}
	e, err := startOn(dir, wait, logger)
	if err != nil {
		if created {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	e.Created = created
	return e, nil
}

func startOn(dir string, wait time.Duration, logger *zap.Logger) (*Etcd, error) {
	lock, err := lockDataDir(dir, wait)
	if err != nil {
		return nil, err
	}
	if err := checkDatabase(dir); err != nil {
		lock.Close()
		return nil, err
	}
	e, err := startLocked(dir, lock, logger)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("starting etcd on %s: %w", dir, err)
	}
	return e, nil
}

// prepareDataDir checks that dir is a directory etcd may make its own, an
// empty one or an etcd data directory, and creates it when missing and
// create is set. A directory of other files is refused: etcd would add its
// own to them, and a mistyped path would become a data directory
// unnoticed.
func prepareDataDir(dir string, create bool) (created bool, err error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) && !create:
		return false, fmt.Errorf("the data directory %s does not exist: regctl makes a new sandbox only for a command that writes (not for a read or a dry run)", dir)
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("creating the data directory %s: %w", dir, unwrapPath(err))
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("opening the data directory %s: %w", dir, unwrapPath(err))
	case !info.IsDir():
		return false, fmt.Errorf("the data directory %s is a file, not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("opening the data directory %s: %w", dir, unwrapPath(err))
	}
	if len(entries) > 0 && !hasMember(dir) {
		return false, fmt.Errorf("%s holds files but no etcd data (no member directory): name a new or empty directory, or an etcd data directory", dir)
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return false, fmt.Errorf("the data directory %s is not writable: %w", dir, err)
	}
	return false, nil
}

func hasMember(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, "member"))
	return err == nil && info.IsDir()
}

// unwrapPath drops the path a *PathError repeats: the message names the
// directory already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lockPoll is how often a process waiting for a data directory tries again.
const lockPoll = 50 * time.Millisecond

// lockDataDir takes an exclusive flock on dir itself, so that two regctl
// processes never run etcd on it at once, and nothing is added to a copied
// data directory for it. The lock goes with the process, however it ends.
func lockDataDir(dir string, wait time.Duration) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the data directory %s: %w", dir, unwrapPath(err))
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking the data directory %s: %w", dir, err)
		}
		if wait > 0 && time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("the data directory %s is in use by another regctl (waited %s)", dir, wait)
		}
		time.Sleep(lockPoll)
	}
}

// dbLockWait is how long to try for a shared lock on the etcd database.
const dbLockWait = 100 * time.Millisecond

// checkDatabase opens the etcd database of dir, if any, read-only with
// bbolt as etcd does, to refuse what etcd cannot start on with a line
// rather than a panic: a database an etcd server holds (a live member's
// /var/lib/etcd rather than a copy; etcd here would wait for its lock
// without end), or a file that is not a database.
func checkDatabase(dir string) error {
	path := filepath.Join(dir, "member", "snap", "db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: dbLockWait})
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return fmt.Errorf("the data directory %s is in use by another process, an etcd server running on it: stop it, or copy the directory", dir)
	case err != nil:
		return fmt.Errorf("%s is not an etcd database: %w", path, unwrapPath(err))
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error { return checkStorageVersion(dir, tx) })
}

// checkStorageVersion refuses a database a newer etcd wrote: etcd does not
// go back a version, and says only that the version "is not supported".
// A newer etcd means a newer Kubernetes release, whose regctl carries it.
func checkStorageVersion(dir string, tx *bolt.Tx) error {
	if tx.Bucket(schema.Meta.Name()) == nil {
		return nil
	}
	stored := schema.ReadStorageVersionFromSnapshot(tx)
	if stored == nil {
		return nil
	}
	own := semver.Must(semver.NewVersion(etcdversion.Version))
	if stored.Major > own.Major || stored.Major == own.Major && stored.Minor > own.Minor {
		return fmt.Errorf("the data directory %s was written by etcd %d.%d, and this regctl carries etcd %s, which cannot open it: use the regctl of the cluster's Kubernetes release (`regctl version` names the etcd it carries)",
			dir, stored.Major, stored.Minor, etcdversion.Version)
	}
	return nil
}

// startLocked starts etcd on the locked dir. A data directory written by
// another member (copied from a cluster) names that member's peers, which
// are not here to make a quorum, so etcd is started as `etcd
// --force-new-cluster` is: as the only member of its cluster, keeping the
// data. On a directory regctl wrote there is no other member to drop.
func startLocked(dir string, lock *os.File, logger *zap.Logger) (*Etcd, error) {
	return startRecording(dir, lock, logger, func(cfg *embed.Config) {
		cfg.ForceNewCluster = hasMember(dir)
		cfg.SnapshotCount = 100
		cfg.SnapshotCatchUpEntries = 100
	})
}

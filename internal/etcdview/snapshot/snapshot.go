// Package snapshot serves an etcd snapshot file read-only as an etcd,
// through etcd's own gRPC API, so that every reader reads it as a live one.
package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/server/v3/lease/leasepb"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/regctl/regctl/internal/gctune"
)

// Snapshot serves an etcd snapshot file (`etcdctl snapshot save`, or a
// member's member/snap/db) read-only, through etcd's own gRPC KV API on a
// loopback port, so that every reader (the apiserver's stores, regctl's
// key listings) reads it as it reads a live etcd.
//
// The file is opened read-only and mapped, never copied or written: opening
// reads its header pages alone. The first read indexes the keys (the
// revisions of each and where its value is in the file, not the values), as
// etcd does when it starts. Values are then read from the file, not the
// mapping, as they are asked for: the pages they are on stay in the
// kernel's cache, out of this process's memory, however much is read.
type Snapshot struct {
	// ClientURL is where the snapshot is served.
	ClientURL string

	db *bolt.DB
	// path is the snapshot's, for errors.
	path string
	// file is the snapshot, read at the values' offsets.
	file *os.File
	// size is the database's size in the file, all of it mapped.
	size     int64
	server   *grpc.Server
	listener net.Listener

	// read counts the bytes of the mapping read since its pages were last
	// handed back.
	read atomic.Int64
	// largest is the most bytes of values one response has held: the
	// server keeps about twice that at a time (a response built, the last
	// one marshalled), which it reserves beside a list's heap bound.
	largest atomic.Int64
	// reserved is what the snapshot has reserved in all.
	reserved atomic.Int64

	indexOnce sync.Once
	index     *snapshotIndex
	indexErr  error
}

// ErrReadOnly is what a write to a snapshot gets.
var ErrReadOnly = errors.New("an etcd snapshot is read-only")

// Open opens the snapshot at path and starts serving it.
func Open(path string) (*Snapshot, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening the snapshot: %w", err)
	}
	if info.IsDir() {
		return nil, fmt.Errorf("opening the snapshot %s: it is a directory, not a snapshot file (a member's is member/snap/db in its data dir)", path)
	}
	// bbolt takes an empty file for a new database and writes one into it:
	// a read-only open fails at that write, saying nothing of the file.
	if info.Size() == 0 {
		return nil, fmt.Errorf("opening the snapshot %s: the file is empty, not an etcd snapshot: save the snapshot again (`etcdctl snapshot save`)", path)
	}
	// A member's db is locked by its etcd while it runs; bbolt's shared lock
	// waits for it, briefly.
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("opening the snapshot %s: a running etcd holds it; read a copy made with `etcdctl snapshot save`", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the snapshot %s: not an etcd snapshot: %w", path, err)
	}
	size, err := checkSnapshot(db, info.Size())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the snapshot %s: %w", path, err)
	}
	if size > info.Size() {
		db.Close()
		return nil, fmt.Errorf("opening the snapshot %s: it is truncated: %d bytes of %d: save the snapshot again (`etcdctl snapshot save`)", path, info.Size(), size)
	}
	file, err := os.Open(path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the snapshot: %w", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		file.Close()
		return nil, fmt.Errorf("serving the snapshot: %w", err)
	}
	s := &Snapshot{ClientURL: "http://" + lis.Addr().String(), db: db, path: path, file: file, size: size, listener: lis, server: grpc.NewServer()}
	etcdserverpb.RegisterKVServer(s.server, snapshotKV{s: s})
	etcdserverpb.RegisterLeaseServer(s.server, &snapshotLeases{s: s})
	etcdserverpb.RegisterWatchServer(s.server, snapshotWatches{s: s})
	go s.server.Serve(lis)
	return s, nil
}

// checkSnapshot refuses a file that is not an etcd backend, and returns the
// database's size, to be checked against the file's: its pages past the
// end would be read from a mapping they are not in.
func checkSnapshot(db *bolt.DB, fileSize int64) (size int64, err error) {
	// Only the meta pages are checked by bbolt when it opens the file: the
	// root bucket's page may be damaged.
	err = guarded("its root bucket", func() error {
		return db.View(func(tx *bolt.Tx) error {
			size = tx.Size()
			if size > fileSize {
				return nil // its pages are not all there to look up
			}
			for _, b := range []interface{ Name() []byte }{schema.Key, schema.Meta} {
				if tx.Bucket(b.Name()) == nil {
					return fmt.Errorf("not an etcd snapshot: it has no %q bucket", b.Name())
				}
			}
			return nil
		})
	})
	return size, err
}

// damagedError is a snapshot's pages found damaged: bbolt panicked reading
// them, or they say what cannot be.
type damagedError struct {
	// Where is the bucket, and the page when known.
	Where string
	// Cause is what bbolt or the check said.
	Cause string
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("it is damaged (%s: %s): save the snapshot again (`etcdctl snapshot save`), or read another copy", e.Where, e.Cause)
}

// guarded runs fn, which reads db's pages through bbolt, in this goroutine,
// and turns a panic into a damagedError. bbolt trusts its pages: on a
// damaged one it panics (a page that is not the one its parent points to,
// of no known type), or follows garbage offsets out of its mapping, which
// is a fault the runtime turns into a panic only when asked, goroutine by
// goroutine. Every read of the file's pages through bbolt goes through
// here, in the goroutine that reads.
func guarded(where string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		damaged := &damagedError{Where: where, Cause: fmt.Sprint(r)}
		if _, ok := r.(interface{ Addr() uintptr }); ok {
			// The address is where a damaged offset led, not the page
			// that holds it.
			damaged.Cause = "bbolt followed an offset out of the file"
		} else if s, ok := r.(string); ok {
			damaged.Cause = "bbolt: " + s
		} else if re, ok := r.(runtime.Error); ok {
			// A damaged count or offset, used as an index.
			damaged.Cause = "bbolt read out of bounds: " + strings.TrimPrefix(re.Error(), "runtime error: ")
		}
		err = damaged
	}()
	return fn()
}

// Close stops serving and closes the file.
func (s *Snapshot) Close() error {
	s.server.Stop()
	gctune.Reserve(-s.reserved.Swap(0))
	return errors.Join(s.db.Close(), s.file.Close())
}

// snapshotIndex is etcd's key index of a snapshot: every key, sorted, with
// the revisions it was written (and deleted) at. It holds no pointers but
// its arrays, so that the collector, which runs often while a list is
// decoded, has next to nothing to scan in it. A key costs it 16 bytes, and
// its name and 56 bytes a revision: the index of a million keys of one
// revision each is about 120 MiB.
type snapshotIndex struct {
	names []byte           // every revision's key, one after the other
	keys  []indexedKey     // sorted by name
	revs  []storedRevision // each key's revisions, oldest first, key after key
	// copies are values bbolt did not hand out of the mapping: those of a
	// bucket small enough to be stored inline in its parent, which bbolt
	// copies when they are not aligned. They are a page's worth at most.
	copies []byte
	// current is the snapshot's revision, compacted the oldest one readable.
	current, compacted int64
}

// indexedKey is where a key's name is in names, and its revisions in revs.
type indexedKey struct {
	name, revs span
}

// span is a part of one of the index's arrays, which hold fewer than 2³²
// bytes or revisions.
type span struct{ from, to uint32 }

// storedRevision is one revision of a key, whether it deleted the key, and
// where its value (a stored mvccpb.KeyValue) is: at offset in the file, or,
// when offset is negative, at -offset-1 in the index's copies; and where
// its key's name is in names.
type storedRevision struct {
	main, offset int64
	name         span
	// size is the stored value's length; a tombstone's (a revision that
	// deleted the key) is kept as -size-1 (see deleted).
	size int32
	// sub is the revision's place in its transaction (etcd allows far
	// fewer operations in one than 2³¹).
	sub int32
	// create, version and lease are the stored value's, so that a
	// keys-only range is answered from the index, without reading the
	// values.
	create, version, lease int64
}

// deleted tells whether the revision deleted its key.
func (r storedRevision) deleted() bool { return r.size < 0 }

// valueSize is the length of the revision's stored value.
func (r storedRevision) valueSize() int32 {
	if r.size < 0 {
		return -r.size - 1
	}
	return r.size
}

func (idx *snapshotIndex) name(k indexedKey) []byte { return idx.names[k.name.from:k.name.to] }

func (idx *snapshotIndex) nameOf(r storedRevision) []byte { return idx.names[r.name.from:r.name.to] }

func (idx *snapshotIndex) revisions(k indexedKey) []storedRevision {
	return idx.revs[k.revs.from:k.revs.to]
}

// Check reads the whole snapshot's structure (and indexes its keys, which
// the first read does anyway): a damaged file is told by an error, here,
// rather than by the reads that follow.
func (s *Snapshot) Check() error {
	_, err := s.indexed()
	return err
}

func (s *Snapshot) indexed() (*snapshotIndex, error) {
	s.indexOnce.Do(func() { s.index, s.indexErr = s.buildIndex() })
	return s.index, s.indexErr
}

// releaseEvery is how many bytes of the mapping are read, while indexing,
// between handing its pages back: it bounds the memory a snapshot's pages
// take. The kernel maps the pages around each one read too (up to 64 KiB),
// so the pages held are several times this.
const releaseEvery = 8 << 20

// mapped counts bytes of the mapping read, and hands the pages back every
// releaseEvery bytes.
func (s *Snapshot) mapped(size int) {
	if s.read.Add(int64(size)) > releaseEvery {
		s.read.Store(0)
		s.releasePages()
	}
}

// reserve reserves n bytes beside a list's heap bound until the snapshot
// closes.
func (s *Snapshot) reserve(n int64) {
	s.reserved.Add(n)
	gctune.Reserve(n)
}

// responded reserves memory for responses of size bytes of keys and values
// when they are the largest yet.
func (s *Snapshot) responded(size int64) {
	for {
		largest := s.largest.Load()
		if size <= largest {
			return
		}
		if s.largest.CompareAndSwap(largest, size) {
			s.reserve(2 * (size - largest))
			return
		}
	}
}

// value reads a revision's stored KeyValue from the file into buf (grown
// when short), and decodes it. The decoded key and value are copies: buf
// is the caller's to reuse.
func (s *Snapshot) value(r storedRevision, buf *[]byte) (*mvccpb.KeyValue, error) {
	var b []byte
	if r.offset < 0 {
		from := -r.offset - 1
		b = s.index.copies[from : from+int64(r.valueSize())]
	} else {
		if cap(*buf) < int(r.valueSize()) {
			*buf = make([]byte, r.valueSize())
		}
		b = (*buf)[:r.valueSize()]
		if _, err := s.file.ReadAt(b, r.offset); err != nil {
			return nil, fmt.Errorf("reading revision %d at byte %d: %w", r.main, r.offset, err)
		}
	}
	var kv mvccpb.KeyValue
	if err := unmarshalKeyValue(b, &kv); err != nil {
		return nil, fmt.Errorf("reading revision %d: %w", r.main, err)
	}
	return &kv, nil
}

// buildIndex indexes the key bucket, and checks the rest of the file on the
// way: every bucket's pages are walked, and what bbolt reads of them is
// checked to be in the file, before anything of it is served. bbolt's own
// check (Tx.Check) is no use here: it reads the pages in a goroutine of its
// own, where a panic on a damaged page cannot be recovered, and ends the
// process (`etcdutl snapshot status`, which runs it first, does).
func (s *Snapshot) buildIndex() (*snapshotIndex, error) {
	idx := &snapshotIndex{}
	// The key bucket is ordered by revision: each revision is read with its
	// key's name, then they are sorted by name, and by revision for a key.
	var scan []storedRevision
	info := s.db.Info()
	base := info.Data // where the file is mapped
	// inFile is whether b, a key or value of a bucket stored in pages of
	// its own, is in the file's pages. A damaged length or offset leads
	// out of them, to memory that is not the file's.
	inFile := func(b []byte) bool {
		at := int64(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - base)
		return at >= 0 && at+int64(len(b)) <= s.size
	}
	indexKeys := func(b *bolt.Bucket) error {
		inline := b.Root() == 0
		// Each array is made once, at its size: grown by copies, as
		// append grows it, a million revisions made copies that cost
		// collections and, at their peak, memory.
		revisions, names := s.count(b, inFile)
		scan = make([]storedRevision, 0, revisions)
		idx.names = make([]byte, 0, names)
		var last mvcc.Revision
		return b.ForEach(func(k, v []byte) error {
			if inline && len(k)+len(v) > info.PageSize || !inline && (!inFile(k) || !inFile(v)) {
				return fmt.Errorf("a revision of %d bytes with a value of %d is not in the file", len(k), len(v))
			}
			if len(k) < 17 {
				return fmt.Errorf("a revision key of %d bytes", len(k))
			}
			rev := mvcc.BytesToRev(k)
			if len(scan) > 0 && !rev.GreaterThan(last) {
				return fmt.Errorf("revision %d_%d comes after %d_%d", rev.Main, rev.Sub, last.Main, last.Sub)
			}
			last = rev
			header, err := headerOf(v)
			if err != nil {
				return fmt.Errorf("reading revision %d: %w", rev.Main, err)
			}
			key := header.key
			if len(idx.names)+len(key) > math.MaxUint32 {
				return fmt.Errorf("more than %d bytes of keys", uint32(math.MaxUint32))
			}
			name := span{uint32(len(idx.names)), uint32(len(idx.names) + len(key))}
			idx.names = append(idx.names, key...)
			// A read-only transaction's values are slices of the
			// mapping, so their place in it is their place in the file;
			// those bbolt copied out of it (an inline bucket's) are kept.
			offset := int64(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - base)
			if !inFile(v) {
				offset = -int64(len(idx.copies)) - 1
				idx.copies = append(idx.copies, v...)
			}
			r := storedRevision{main: rev.Main, sub: int32(rev.Sub), offset: offset, size: int32(len(v)), name: name,
				create: header.create, version: header.version, lease: header.lease}
			if mvcc.IsTombstone(k) {
				r.size = -r.size - 1
			}
			if rev.Sub > math.MaxInt32 {
				return fmt.Errorf("revision %d_%d: more operations in one transaction than etcd allows", rev.Main, rev.Sub)
			}
			scan = append(scan, r)
			idx.current = rev.Main
			s.mapped(len(v))
			return nil
		})
	}
	// The other buckets are read only for the compaction's revision and
	// leases: their pages are walked, as `etcdutl snapshot status` walks
	// them, so that a damaged one is told now rather than when read.
	walk := func(b *bolt.Bucket) error {
		inline := b.Root() == 0
		return b.ForEach(func(k, v []byte) error {
			if inline && len(k)+len(v) > info.PageSize || !inline && (!inFile(k) || !inFile(v)) {
				return fmt.Errorf("a key of %d bytes with a value of %d is not in the file", len(k), len(v))
			}
			return nil
		})
	}
	err := guarded("its root bucket", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				where := fmt.Sprintf("its %q bucket", name)
				if b == nil {
					return &damagedError{Where: where, Cause: "it is not a bucket"}
				}
				return guarded(where, func() error {
					var err error
					switch string(name) {
					case string(schema.Key.Name()):
						err = indexKeys(b)
					case string(schema.Meta.Name()):
						// A compaction scheduled but not finished when
						// the snapshot was saved is one etcd finishes
						// when it restores the snapshot (mvcc's restore
						// resumes it): its revisions are gone as well.
						for _, key := range [][]byte{schema.FinishedCompactKeyName, schema.ScheduledCompactKeyName} {
							v := b.Get(key)
							if len(v) > 0 && len(v) < 17 {
								return &damagedError{Where: where, Cause: fmt.Sprintf("a compaction revision of %d bytes", len(v))}
							}
							if len(v) > 0 {
								idx.compacted = max(idx.compacted, mvcc.BytesToRev(v).Main)
							}
						}
						err = walk(b)
					default:
						err = walk(b)
					}
					if err != nil && !errors.As(err, new(*damagedError)) {
						err = &damagedError{Where: where, Cause: err.Error()}
					}
					return err
				})
			})
		})
	})
	s.releasePages()
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot %s: %w", s.path, err)
	}
	idx.current = max(idx.current, idx.compacted)
	if len(scan) > math.MaxUint32 {
		return nil, fmt.Errorf("reading the snapshot %s: more than %d revisions", s.path, uint32(math.MaxUint32))
	}
	groupByKey(idx.names, scan)
	idx.revs = scan
	keys := 0
	for i := range scan {
		if i == 0 || !bytes.Equal(idx.nameOf(scan[i]), idx.nameOf(scan[i-1])) {
			keys++
		}
	}
	idx.keys = make([]indexedKey, 0, keys)
	for i := 0; i < len(scan); {
		j := i + 1
		for j < len(scan) && bytes.Equal(idx.nameOf(scan[j]), idx.nameOf(scan[i])) {
			j++
		}
		idx.keys = append(idx.keys, indexedKey{name: scan[i].name, revs: span{uint32(i), uint32(j)}})
		i = j
	}
	// The index is live from here on: a heap bound, which follows what
	// each collection leaves live, counts it already.
	return idx, nil
}

// count walks the key bucket b for how many revisions it holds and how
// many bytes their names take, handing the pages read back as indexing
// does: bbolt's own count (Bucket.Stats) keeps every page it reads, the
// whole file. What is damaged is left to the indexing walk to tell.
func (s *Snapshot) count(b *bolt.Bucket, inFile func([]byte) bool) (revisions, names int) {
	inline := b.Root() == 0
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		revisions++
		if !inline && !inFile(v) {
			continue
		}
		if h, err := headerOf(v); err == nil {
			names += len(h.key)
		}
		s.mapped(len(v))
	}
	return revisions, names
}

// groupByKey orders the revisions, read in revision order, by key, each
// key's oldest first, in place. It sorts their places rather than the
// revisions themselves (4 bytes to move where a revision is 56), then moves
// each revision once; the key bucket's order is the revisions' own, so a
// place breaks a tie of names as (main, sub) would.
func groupByKey(names []byte, scan []storedRevision) {
	order := make([]uint32, len(scan))
	spans := make([]span, len(scan))
	for i, r := range scan {
		order[i], spans[i] = uint32(i), r.name
	}
	slices.SortFunc(order, func(a, b uint32) int {
		x, y := spans[a], spans[b]
		return cmp.Or(bytes.Compare(names[x.from:x.to], names[y.from:y.to]), cmp.Compare(a, b))
	})
	// Position i takes the revision at order[i]: follow each cycle of
	// that permutation, marking the places filled.
	const filled = math.MaxUint32
	for i := range order {
		if order[i] == filled {
			continue
		}
		first := scan[i]
		j := i
		for {
			from := order[j]
			order[j] = filled
			if int(from) == i {
				scan[j] = first
				break
			}
			scan[j] = scan[from]
			j = int(from)
		}
	}
}

// bytes is the memory the index keeps: what its arrays hold (what append
// left spare past that was never written, and takes no memory).
func (idx *snapshotIndex) bytes() int64 {
	return int64(len(idx.names)) + int64(len(idx.keys))*int64(unsafe.Sizeof(indexedKey{})) +
		int64(len(idx.revs))*int64(unsafe.Sizeof(storedRevision{})) + int64(len(idx.copies))
}

// headerOf reads what a stored mvccpb.KeyValue says beside its value: its
// key, create revision, version and lease (fields 1, 2, 4 and 6), without
// unmarshalling the value.
func headerOf(kv []byte) (h storedHeader, err error) {
	for len(kv) > 0 {
		num, typ, n := protowire.ConsumeTag(kv)
		if n < 0 {
			return h, protowire.ParseError(n)
		}
		kv = kv[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			key, n := protowire.ConsumeBytes(kv)
			if n < 0 {
				return h, protowire.ParseError(n)
			}
			h.key, kv = key, kv[n:]
			continue
		case (num == 2 || num == 4 || num == 6) && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(kv)
			if n < 0 {
				return h, protowire.ParseError(n)
			}
			switch num {
			case 2:
				h.create = int64(v)
			case 4:
				h.version = int64(v)
			case 6:
				h.lease = int64(v)
			}
			kv = kv[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, kv)
		if n < 0 {
			return h, protowire.ParseError(n)
		}
		kv = kv[n:]
	}
	if h.key == nil {
		return h, errors.New("a stored value has no key")
	}
	return h, nil
}

// storedHeader is what a stored value says of itself beside its value.
type storedHeader struct {
	key                    []byte
	create, version, lease int64
}

// at is the revision of k live at rev, false when the key did not exist
// then or was deleted.
func (idx *snapshotIndex) at(k indexedKey, rev int64) (storedRevision, bool) {
	// From the newest: most keys have a revision or two, and most reads
	// are at the snapshot's revision.
	revs := idx.revisions(k)
	i := len(revs) - 1
	for i >= 0 && revs[i].main > rev {
		i--
	}
	if i < 0 || revs[i].deleted() {
		return storedRevision{}, false
	}
	return revs[i], true
}

// between are the indexed keys in [key, end), as etcd reads a range: end
// empty is key alone, "\x00" every key from key on.
func (idx *snapshotIndex) between(key, end []byte) []indexedKey {
	search := func(k []byte) int {
		return sort.Search(len(idx.keys), func(i int) bool { return bytes.Compare(idx.name(idx.keys[i]), k) >= 0 })
	}
	from := search(key)
	switch {
	case len(end) == 0:
		if from < len(idx.keys) && bytes.Equal(idx.name(idx.keys[from]), key) {
			return idx.keys[from : from+1]
		}
		return nil
	case bytes.Equal(end, []byte{0}):
		return idx.keys[from:]
	}
	to := search(end)
	if to < from {
		return nil
	}
	return idx.keys[from:to]
}

// snapshotKV serves ranges; what else the KV service has (writes, streamed
// ranges of newer etcds) is unimplemented.
type snapshotKV struct {
	etcdserverpb.UnimplementedKVServer
	s *Snapshot
}

func (kv snapshotKV) Range(_ context.Context, r *etcdserverpb.RangeRequest) (*etcdserverpb.RangeResponse, error) {
	idx, err := kv.s.indexed()
	if err != nil {
		return nil, status.Error(codes.DataLoss, err.Error())
	}
	rev := r.Revision
	switch {
	case rev <= 0:
		rev = idx.current
	case rev > idx.current:
		return nil, rpctypes.ErrGRPCFutureRev
	case rev < idx.compacted:
		return nil, rpctypes.ErrGRPCCompacted
	}
	if r.SortOrder != etcdserverpb.RangeRequest_NONE && !(r.SortOrder == etcdserverpb.RangeRequest_ASCEND && r.SortTarget == etcdserverpb.RangeRequest_KEY) {
		return nil, status.Error(codes.Unimplemented, "a snapshot is read in key order only")
	}
	resp := &etcdserverpb.RangeResponse{Header: &etcdserverpb.ResponseHeader{Revision: idx.current}}
	// As etcd answers: the count is of every key in the range, the
	// revision filters apply to the values, then the limit, one more value
	// read telling whether there are more. Values are read only until then.
	collecting := !r.CountOnly
	var buf []byte
	var size int64
	for _, k := range idx.between(r.Key, r.RangeEnd) {
		at, ok := idx.at(k, rev)
		if !ok {
			continue
		}
		resp.Count++
		if !collecting {
			continue
		}
		var item *mvccpb.KeyValue
		if r.KeysOnly {
			item = &mvccpb.KeyValue{Key: idx.name(k), CreateRevision: at.create, ModRevision: at.main, Version: at.version}
			if keysOnlyLease {
				item.Lease = at.lease
			}
		} else if item, err = kv.s.value(at, &buf); err != nil {
			return nil, status.Error(codes.DataLoss, err.Error())
		}
		if !inModRange(r, item) {
			continue
		}
		if r.Limit > 0 && int64(len(resp.Kvs)) == r.Limit {
			resp.More, collecting = true, false
			continue
		}
		if r.KeysOnly {
			item.Value = nil
		}
		size += int64(len(item.Key) + len(item.Value))
		resp.Kvs = append(resp.Kvs, item)
	}
	kv.s.responded(size)
	return resp, nil
}

// inModRange applies a range request's revision filters.
func inModRange(r *etcdserverpb.RangeRequest, kv *mvccpb.KeyValue) bool {
	return (r.MinModRevision == 0 || kv.ModRevision >= r.MinModRevision) &&
		(r.MaxModRevision == 0 || kv.ModRevision <= r.MaxModRevision) &&
		(r.MinCreateRevision == 0 || kv.CreateRevision >= r.MinCreateRevision) &&
		(r.MaxCreateRevision == 0 || kv.CreateRevision <= r.MaxCreateRevision)
}

func (snapshotKV) Put(context.Context, *etcdserverpb.PutRequest) (*etcdserverpb.PutResponse, error) {
	return nil, status.Error(codes.PermissionDenied, ErrReadOnly.Error())
}

func (snapshotKV) DeleteRange(context.Context, *etcdserverpb.DeleteRangeRequest) (*etcdserverpb.DeleteRangeResponse, error) {
	return nil, status.Error(codes.PermissionDenied, ErrReadOnly.Error())
}

func (snapshotKV) Txn(context.Context, *etcdserverpb.TxnRequest) (*etcdserverpb.TxnResponse, error) {
	return nil, status.Error(codes.PermissionDenied, ErrReadOnly.Error())
}

func (snapshotKV) Compact(context.Context, *etcdserverpb.CompactionRequest) (*etcdserverpb.CompactionResponse, error) {
	return nil, status.Error(codes.PermissionDenied, ErrReadOnly.Error())
}

// snapshotLeases answers what a lease was granted for. No lease runs in a
// snapshot: each has expired as far as a reader can tell.
type snapshotLeases struct {
	etcdserverpb.UnimplementedLeaseServer
	s *Snapshot
}

func (l *snapshotLeases) LeaseTimeToLive(_ context.Context, r *etcdserverpb.LeaseTimeToLiveRequest) (*etcdserverpb.LeaseTimeToLiveResponse, error) {
	idx, err := l.s.indexed()
	if err != nil {
		return nil, status.Error(codes.DataLoss, err.Error())
	}
	resp := &etcdserverpb.LeaseTimeToLiveResponse{Header: &etcdserverpb.ResponseHeader{Revision: idx.current}, ID: r.ID, TTL: -1}
	// The bucket was walked when indexed; reading it is guarded all the same.
	err = guarded(fmt.Sprintf("its %q bucket", schema.Lease.Name()), func() error {
		return l.s.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(schema.Lease.Name())
			if b == nil {
				return nil
			}
			var lease leasepb.Lease
			if stored := b.Get(leaseKey(r.ID)); stored != nil {
				if err := unmarshalLease(stored, &lease); err != nil {
					return err
				}
				resp.GrantedTTL = lease.TTL
			}
			return nil
		})
	})
	if err != nil {
		return nil, status.Error(codes.DataLoss, err.Error())
	}
	return resp, nil
}

func (*snapshotLeases) LeaseGrant(context.Context, *etcdserverpb.LeaseGrantRequest) (*etcdserverpb.LeaseGrantResponse, error) {
	return nil, status.Error(codes.PermissionDenied, ErrReadOnly.Error())
}

// leaseKey is the lease bucket's key of a lease ID: big-endian, as etcd's
// lessor writes it (schema's leaseIDToBytes, unexported).
func leaseKey(id int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(id))
}

// snapshotWatches replays a snapshot's history to etcd's watch API: the
// events from a watch's start revision to the snapshot's, and a progress
// notification at the snapshot's revision when asked. Nothing happens
// after: the snapshot does not change.
type snapshotWatches struct {
	etcdserverpb.UnimplementedWatchServer
	s *Snapshot
}

// watchBatch is how many events one watch response carries at most.
const watchBatch = 1000

func (w snapshotWatches) Watch(stream etcdserverpb.Watch_WatchServer) error {
	idx, err := w.s.indexed()
	if err != nil {
		return status.Error(codes.DataLoss, err.Error())
	}
	header := func() *etcdserverpb.ResponseHeader { return &etcdserverpb.ResponseHeader{Revision: idx.current} }
	var next int64
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil // the client is gone
		}
		switch {
		case req.GetCreateRequest() != nil:
			create := req.GetCreateRequest()
			id := next
			next++
			if err := stream.Send(&etcdserverpb.WatchResponse{Header: header(), WatchId: id, Created: true}); err != nil {
				return err
			}
			if create.StartRevision > 0 && create.StartRevision < idx.compacted {
				err = stream.Send(&etcdserverpb.WatchResponse{Header: header(), WatchId: id, CompactRevision: idx.compacted, Canceled: true})
			} else {
				err = w.replay(stream, idx, id, create)
			}
			if err != nil {
				return err
			}
		case req.GetProgressRequest() != nil:
			if err := stream.Send(&etcdserverpb.WatchResponse{Header: header(), WatchId: -1}); err != nil {
				return err
			}
		case req.GetCancelRequest() != nil:
			if err := stream.Send(&etcdserverpb.WatchResponse{Header: header(), WatchId: req.GetCancelRequest().WatchId, Canceled: true}); err != nil {
				return err
			}
		}
	}
}

// replay sends the events of the keys a watch asks for, from its start
// revision on, in revision order.
func (w snapshotWatches) replay(stream etcdserverpb.Watch_WatchServer, idx *snapshotIndex, id int64, create *etcdserverpb.WatchCreateRequest) error {
	start := create.StartRevision
	if start <= 0 {
		// A watch from now on sees nothing in a snapshot.
		return nil
	}
	type change struct {
		key  string
		revs []storedRevision // the key's revisions, this one last
	}
	var changes []change
	for _, k := range idx.between(create.Key, create.RangeEnd) {
		revs := idx.revisions(k)
		for i, r := range revs {
			if r.main >= start {
				changes = append(changes, change{string(idx.name(k)), revs[:i+1]})
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool {
		a, b := changes[i].revs[len(changes[i].revs)-1], changes[j].revs[len(changes[j].revs)-1]
		return a.main < b.main || a.main == b.main && a.sub < b.sub
	})
	header := &etcdserverpb.ResponseHeader{Revision: idx.current}
	var buf []byte
	for len(changes) > 0 {
		batch := changes[:min(len(changes), watchBatch)]
		changes = changes[len(batch):]
		resp := &etcdserverpb.WatchResponse{Header: header, WatchId: id}
		for _, c := range batch {
			ev, err := w.s.event(c.key, c.revs, create.PrevKv, &buf)
			if err != nil {
				return status.Error(codes.DataLoss, err.Error())
			}
			resp.Events = append(resp.Events, ev)
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
	return nil
}

// event is the watch event of the last of a key's revisions, as etcd
// sends it: a put with the value, or a delete with the key and revision;
// with the value before it when asked.
func (s *Snapshot) event(key string, revs []storedRevision, withPrev bool, buf *[]byte) (*mvccpb.Event, error) {
	read := func(r storedRevision) (*mvccpb.KeyValue, error) { return s.value(r, buf) }
	last := revs[len(revs)-1]
	ev := &mvccpb.Event{Type: mvccpb.PUT}
	if last.deleted() {
		ev.Type = mvccpb.DELETE
		ev.Kv = &mvccpb.KeyValue{Key: []byte(key), ModRevision: last.main}
	} else {
		kv, err := read(last)
		if err != nil {
			return nil, err
		}
		ev.Kv = kv
	}
	if withPrev && len(revs) > 1 && !revs[len(revs)-2].deleted() {
		prev, err := read(revs[len(revs)-2])
		if err != nil {
			return nil, err
		}
		ev.PrevKv = prev
	}
	return ev, nil
}

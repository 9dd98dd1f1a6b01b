package space

import (
	"bytes"
	"testing"

	"github.com/regctl/regctl/internal/etcdview/snapshot"
	"github.com/regctl/regctl/internal/render"
)

// TestASnapshotsTable: a report of a snapshot says its figures are the
// file's, in binary units, and what a member restored from it would hold;
// sections with nothing to show are left out.
func TestASnapshotsTable(t *testing.T) {
	r := &Report{
		EtcdPrefix: "/registry",
		Snapshot:   &snapshot.Status{Path: "backup.db", FileSize: 3<<20 + 32, DBSize: 3 << 20, DBSizeInUse: 1 << 20, Revision: 900, Compacted: 800},
		History:    []History{{Revision: 900, Compacted: 800, Read: true, OldRevisions: 70, OldBytes: 1536, OutsideRevisions: 10, OutsideBytes: 512}},
		Revision:   900,
		Keys:       2,
		Bytes:      3000,
		Resources:  []Resource{{Resource: "configmaps", KeyPrefix: "/registry/configmaps/", Keys: 2, Bytes: 3000, OldRevisions: 60, OldBytes: 1024}},
		Largest:    []Object{{Key: "/registry/configmaps/a/big", Resource: "configmaps", Bytes: 2000}, {Key: "/registry/configmaps/a/small", Resource: "configmaps", Bytes: 1000}},
		HotKeys:    []HotKey{{Key: "/registry/configmaps/a/big", Resource: "configmaps", Revisions: 61, OldBytes: 1024}},
	}
	var out bytes.Buffer
	if err := render.Print(&out, render.Table, r); err != nil {
		t.Fatal(err)
	}
	want := `Snapshot (the file's own figures: a member restored from it starts with this database):
FILE        FILE SIZE   DB SIZE   IN USE    FREE      REVISION   COMPACTED
backup.db   3.0 MiB     3.0 MiB   1.0 MiB   2.0 MiB   900        800

History (compacting to the current revision removes the old revisions):
REVISION   COMPACTED   REVISIONS SINCE   OLD REVISIONS   OLD BYTES
900        800         100               70              1.5 KiB

Resources:
RESOURCE     KEY PREFIX              KEYS   BYTES     OLD REVISIONS   OLD BYTES
configmaps   /registry/configmaps/   2      2.9 KiB   60              1.0 KiB

Largest objects:
KEY                            RESOURCE     BYTES
/registry/configmaps/a/big     configmaps   2.0 KiB
/registry/configmaps/a/small   configmaps   1000 B

Keys with the most revisions held:
KEY                          RESOURCE     REVISIONS   OLD BYTES
/registry/configmaps/a/big   configmaps   61          1.0 KiB

2 keys under /registry/ hold 2.9 KiB of values at revision 900.
Compacting to revision 900 removes 70 old revisions holding 1.5 KiB of values (10 of them, 512 B, of keys outside /registry/); defragmenting each member then gives their pages back to the filesystem.
A member restored from the snapshot holds 2.0 MiB of free pages until it is defragmented.
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}

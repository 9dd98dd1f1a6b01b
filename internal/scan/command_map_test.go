package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
)

func TestMain(m *testing.M) {
	logs.Setup(0, io.Discard)
	os.Exit(m.Run())
}

// TestScanOnAMap scans the etcd of a default server's map, with a key no
// path stores: it is an orphan, which fails the scan with --fail-on
// orphans once the report is printed, and passes it without.
func TestScanOnAMap(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	if _, err := main.Put(ctx, "/registry/widgets.example.com/shop/w", "{}"); err != nil {
		t.Fatal(err)
	}
	r := Request{Output: render.JSON, Only: []string{Orphans}, FailOn: []string{Orphans}, ChunkSize: DefaultPageSize}
	var out bytes.Buffer
	err := Scan(ctx, &out, io.Discard, main, s.Map.Table.EtcdPrefix, s.Map.Ordered(), r)
	if err == nil || err.Error() != "the scan found 1 orphans finding" {
		t.Errorf("--fail-on orphans: %v", err)
	}
	var report Report
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("the report is printed before the scan fails: %v\n%s", err, out.String())
	}
	if len(report.Orphans) != 1 || report.Orphans[0].Keys != 1 {
		t.Errorf("orphans %+v", report.Orphans)
	}
	r.FailOn = nil
	if err := Scan(ctx, io.Discard, io.Discard, main, s.Map.Table.EtcdPrefix, s.Map.Ordered(), r); err != nil {
		t.Errorf("without --fail-on: %v", err)
	}
	r.Revision = -1
	if err := Scan(ctx, io.Discard, io.Discard, main, s.Map.Table.EtcdPrefix, s.Map.Ordered(), r); err == nil || err.Error() != "invalid `--revision` -1: etcd revisions start at 1" {
		t.Errorf("a negative revision: %v", err)
	}
}

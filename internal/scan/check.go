package scan

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/regctl/regctl/internal/handle"
)

// Check looks at one value of h's, read at key, as a scan of sections
// looks at it, and returns what the scan would find, with the values it
// cannot read (corrupt) whatever the sections: what a migration reads
// again when a value changed after the scan chose it.
func Check(ctx context.Context, h *handle.Handle, key string, value []byte, sections ...string) ([]Finding, error) {
	prefix, err := h.KeyPrefix("")
	if err != nil {
		return nil, err
	}
	s := &scanner{sections: map[string]bool{}}
	for _, sec := range sections {
		s.sections[sec] = true
	}
	s.decrypt = true
	s.decode = s.sections[Versions] || s.sections[Corrupt]
	s.served.keep = 1
	t := newTarget(h, prefix)
	tl := newTally()
	var found []Finding
	tl.onFinding = func(f Finding) { found = append(found, f) }
	s.look(ctx, tl, t, &mvccpb.KeyValue{Key: []byte(key), Value: value})
	return found, nil
}

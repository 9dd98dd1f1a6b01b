// Package inspect is `regctl inspect`: how one object is stored (its key,
// revisions, lease, encoding, storage version and encryption, read from
// etcd by etcdview), or every revision of it etcd still holds and what
// changed in each (stores.ObjectHistory). The command hands it the
// resolved target.
package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/warning"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/stores/history"
	"github.com/regctl/regctl/internal/target"
)

// Formats are the output formats inspect prints.
var Formats = []render.Format{render.Table, render.YAML, render.JSON}

// Options are what inspect shows, and how.
type Options struct {
	Output render.Format
	// History lists every revision of the object etcd still holds.
	History bool
	// Revision is the etcd revision to read at; 0 is now.
	Revision int64
	// Clocks, with History, is the handle of the Leases that tell when
	// each revision was written (clock.Read); nil when the map has none.
	Clocks *handle.Handle
}

// Parse reads inspect's arguments, which name exactly one object, and
// checks the flags; it needs no etcd.
func Parse(args []string, o Options) (target.Ref, error) {
	ref, err := target.ParseRef(args, "", false)
	if err != nil {
		return target.Ref{}, err
	}
	if len(ref.Names) != 1 || ref.Subresource != "" {
		return target.Ref{}, errors.New("name exactly one object, e.g. `pods/web`")
	}
	if o.History && o.Revision != 0 {
		return target.Ref{}, errors.New("`--history` lists every revision held: drop `--revision`")
	}
	return ref, nil
}

// Object prints how the object name of t is stored, or with History every
// revision of it etcd holds. An object with no key is NotFound, as the
// server says it, with the key looked at.
func Object(ctx context.Context, out io.Writer, t handle.Target, name string, o Options) error {
	if o.History {
		return revisions(ctx, out, t, name, o)
	}
	if err := stores.CheckRevision(ctx, t, o.Revision); err != nil {
		return err
	}
	// What the server warns of on every request to the path (a
	// deprecated version, a CRD that is gone) is said here too.
	for _, w := range t.Warnings {
		warning.AddWarning(ctx, "", w)
	}
	key, info, err := etcdview.InspectObject(ctx, t.Handle, t.Namespace, name, o.Revision)
	if err != nil {
		return err
	}
	if info == nil {
		return fmt.Errorf("%s (no key %s)", notFound(t, name), key)
	}
	return render.Print(out, o.Output, info)
}

// revisions lists the revisions of one object. An object that etcd holds no
// revision of, not even its deletion, is NotFound.
func revisions(ctx context.Context, out io.Writer, t handle.Target, name string, o Options) error {
	h, err := history.Of(ctx, t, name)
	if err != nil {
		return err
	}
	if len(h.Revisions) == 0 {
		return fmt.Errorf("%s (etcd holds no revision of key %s since its last compaction)", notFound(t, name), h.Key)
	}
	if err := tellTimes(ctx, h, o.Clocks); err != nil {
		return err
	}
	if o.Output == render.Table {
		return render.Print(out, o.Output, historyTable(h.Revisions))
	}
	return render.Print(out, o.Output, h)
}

// tellTimes tells when each revision was written, by the object's own
// times and the Leases' clocks. Leases kept on another etcd keep other
// revisions: the object's own times are then all there is.
func tellTimes(ctx context.Context, h *history.Object, leases *handle.Handle) error {
	clocks := &clock.Clocks{}
	if leases != nil && len(leases.Route.EtcdServers) == 0 {
		var err error
		if clocks, err = clock.Read(ctx, leases); err != nil {
			return err
		}
	}
	clocks.Annotate(h)
	return nil
}

// notFound is the server's NotFound line for the object.
func notFound(t handle.Target, name string) string {
	return apierrors.NewNotFound(schema.GroupResource{Resource: t.Path}, name).Error()
}

// historyTable shows an object's revisions, one row each.
type historyTable []history.Entry

func (historyTable) Header(bool) []string {
	return []string{"ORDER", "REVISION", "EVENT", "TIME", "VALUE SIZE", "CHANGED"}
}

func (t historyTable) Rows(bool) [][]string {
	rows := make([][]string, 0, len(t))
	for _, e := range t {
		changed := strings.Join(e.Changed, ", ")
		switch {
		case e.Problem != "":
			changed = "<unreadable: " + e.Problem + ">"
		case e.Event == history.EventCompacted:
			changed = fmt.Sprintf("<as held at the compaction revision; written at revision %d>", e.WrittenAt)
		case e.Event == history.EventUpdated && changed == "":
			changed = "<only metadata.resourceVersion or managedFields>"
		case changed == "":
			changed = "<none>"
		}
		rows = append(rows, []string{strconv.Itoa(e.Order), strconv.FormatInt(e.Revision, 10), e.Event, clock.When(e.Time), strconv.Itoa(e.ValueSize), changed})
	}
	return rows
}

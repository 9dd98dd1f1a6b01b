package changes

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storedvalue"
	"github.com/regctl/regctl/internal/stores"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// configMaps creates config maps in default through the map's store, and
// returns the request that compares them between the revision after and
// now, and the etcd they are in.
func configMaps(t *testing.T, names ...string) (Request, *clientv3.Client) {
	t.Helper()
	target, create := maptest.ConfigMaps(t, "default")
	for _, name := range names {
		create(name)
	}
	c, err := target.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rev, err := etcdview.Revision(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	targets := []handle.Target{target}
	return Request{
		From:      Side{Name: "rev:before", Revision: rev},
		To:        Side{Name: "live", Now: true},
		Pairs:     PairTargets(targets, targets, nil),
		ChunkSize: 2,
	}, c
}

func put(t *testing.T, c *clientv3.Client, key, value string) {
	t.Helper()
	if _, err := c.Put(context.Background(), key, value); err != nil {
		t.Fatal(err)
	}
}

// An object one side cannot read is listed with its key and why, and the
// rest is compared; the comparison then fails, so the exit code says that
// not everything could be read.
func TestAComparisonGoesOnPastAnObjectItCannotRead(t *testing.T) {
	ctx := context.Background()
	req, c := configMaps(t, "a", "b", "c")
	put(t, c, "/registry/configmaps/default/b", "\x00garbage")
	// c changes through its store.
	h := req.Pairs[0].To
	nsCtx := stores.RequestContext(ctx, handle.Target{Handle: h.Handle, Namespace: "default"})
	obj, err := h.Storage.(rest.Getter).Get(nsCtx, "c", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := obj.(*api.ConfigMap)
	cm.Data = map[string]string{"colour": "blue"}
	if _, _, err := h.Storage.(rest.Updater).Update(nsCtx, "c", rest.DefaultUpdatedObjectInfo(cm), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	report, err := Compare(ctx, req)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	if len(report.Unreadable) != 1 || report.Unreadable[0].Key != "/registry/configmaps/default/b" || report.Unreadable[0].Side != "live" ||
		!strings.Contains(report.Unreadable[0].Error, "cannot decode") {
		t.Errorf("unreadable %+v, want b on the live side, undecodable", report.Unreadable)
	}
	if len(report.Resources) != 1 || report.Resources[0].Unreadable != 1 || report.Resources[0].Unchanged != 1 || report.Resources[0].Changed != 1 || len(report.Objects) != 1 || report.Objects[0].Name != "c" {
		t.Errorf("resources %+v, want a unchanged, b unreadable, c compared", report.Resources)
	}

	var out bytes.Buffer
	err = Print(ctx, &out, req, render.Table, nil)
	if err == nil || errors.Is(err, ErrDiffer) || err.Error() != "1 object could not be read on one side: /registry/configmaps/default/b" {
		t.Errorf("print: %v, want it to fail naming the key", err)
	}
	for _, want := range []string{"/registry/configmaps/default/b", "cannot decode", "1 could not be read"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, out.String())
		}
	}
}

// A value encrypted with a key no config is given for is the flags'
// doing: the comparison stops at once, with one error that says which key.
func TestAComparisonStopsAtAKeyTheFlagsLack(t *testing.T) {
	ctx := context.Background()
	req, c := configMaps(t, "a", "b")
	for _, name := range []string{"a", "b"} {
		put(t, c, "/registry/configmaps/default/"+name, "k8s:enc:aescbc:v1:key1:\x00\x01secret")
	}
	_, err := Compare(ctx, req)
	var missing *storedvalue.KeyError
	if !errors.As(err, &missing) || err.Error() != "configmaps are encrypted with aescbc:v1:key1 and no encryption config is given: pass the server's `--encryption-provider-config`" {
		t.Errorf("compare: %v, want one error naming the key", err)
	}
}

// An object written again under its key with the same uid (restored) is
// the same object, compared field by field; another uid is recreated.
func TestTheSameUIDUnderANewKeyIsTheSameObject(t *testing.T) {
	ctx := context.Background()
	req, c := configMaps(t, "same", "other")
	for _, name := range []string{"same", "other"} {
		kv, err := etcdview.ValueAt(ctx, c, "/registry/configmaps/default/"+name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Delete(ctx, string(kv.Key)); err != nil {
			t.Fatal(err)
		}
		if name == "same" {
			put(t, c, string(kv.Key), string(kv.Value))
		}
	}
	h := req.Pairs[0].To
	nsCtx := stores.RequestContext(ctx, handle.Target{Handle: h.Handle, Namespace: "default"})
	if _, err := h.Storage.(rest.Creater).Create(nsCtx, &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "default"}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	report, err := Compare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Objects) != 1 || report.Objects[0].Name != "other" || report.Objects[0].Change != Recreated || report.Resources[0].Unchanged != 1 {
		t.Errorf("objects %+v, resources %+v: want same unchanged, other recreated", report.Objects, report.Resources)
	}
}

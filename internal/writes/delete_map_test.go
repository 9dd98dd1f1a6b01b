package writes

import (
	"bytes"
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// TestDeleteOnAMap deletes config maps through the store of a default
// server's map on an ephemeral etcd: by name, by selector, and names that
// are not there.
func TestDeleteOnAMap(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	for _, name := range []string{"a", "b", "c"} {
		value := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"shop","labels":{"tier":"cache"},"uid":"u-` + name + `"}}`
		if _, err := main.Put(ctx, "/registry/configmaps/shop/"+name, value); err != nil {
			t.Fatal(err)
		}
	}
	shop := target.Scope{Namespace: "shop", NamespaceSet: true}
	del := func(args []string, o DeleteOptions) (string, string, error) {
		t.Helper()
		refs, err := target.ParseRefs(args, "", false)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Check(refs); err != nil {
			t.Fatal(err)
		}
		targets, err := target.Types(s.Map, refs, shop)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		o.Out, o.ErrOut, o.GracePeriod = &out, &errOut, -1
		err = Delete(ctx, refs, targets, o)
		return out.String(), errOut.String(), err
	}

	stdout, stderr, err := del([]string{"configmaps/a"}, DeleteOptions{})
	if err != nil || stdout != "configmap \"a\" deleted from shop namespace\n" || stderr != stores.BypassWarning+"\n" {
		t.Errorf("by name: %q, %q, %v", stdout, stderr, err)
	}
	stdout, stderr, err = del([]string{"configmaps", "a"}, DeleteOptions{IgnoreNotFound: true})
	if err != nil || stdout != "" || stderr != stores.BypassWarning+"\n" {
		t.Errorf("gone, with IgnoreNotFound: %q, %q, %v", stdout, stderr, err)
	}
	stdout, stderr, err = del([]string{"configmaps", "a"}, DeleteOptions{})
	if err == nil || err.Error() != "1 of 1 objects were not deleted" || stdout != "" || !strings.Contains(stderr, `error: configmaps "a" not found`) {
		t.Errorf("gone: %q, %q, %v", stdout, stderr, err)
	}
	stdout, stderr, err = del([]string{"configmaps"}, DeleteOptions{LabelSelector: "tier=cache", DryRun: true})
	if want := "configmap \"b\" deleted from shop namespace (dry run)\nconfigmap \"c\" deleted from shop namespace (dry run)\n"; err != nil || stdout != want || stderr != "" {
		t.Errorf("by selector, dry run: %q, %q, %v; want %q and no warning about writing", stdout, stderr, err, want)
	}
	stdout, stderr, err = del([]string{"configmaps"}, DeleteOptions{LabelSelector: "tier=web"})
	if err != nil || stdout != "" || stderr != "No resources found in shop namespace.\n" {
		t.Errorf("a selector that matches nothing: %q, %q, %v", stdout, stderr, err)
	}
	if resp, err := main.Get(ctx, "/registry/configmaps/shop/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 2 {
		t.Errorf("config maps left: %v, %v; want b and c", resp, err)
	}
}

package changes

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// update sets a config map's data through the store of req's pair, with
// the managedFields entry of manager's update of it, as the server's
// field manager would record it.
func update(t *testing.T, req Request, name, manager string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	h := req.Pairs[0].To
	nsCtx := stores.RequestContext(ctx, handle.Target{Handle: h.Handle, Namespace: "default"})
	obj, err := h.Storage.(rest.Getter).Get(nsCtx, name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := obj.(*api.ConfigMap)
	cm.Data = data
	fields := `{"f:data":{`
	for k := range data {
		fields += `"f:` + k + `":{},`
	}
	fields = strings.TrimSuffix(fields, ",") + `}}`
	now := metav1.Now()
	cm.ManagedFields = append(cm.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}})
	if _, _, err := h.Storage.(rest.Updater).Update(nsCtx, name, rest.DefaultUpdatedObjectInfo(cm), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

// TestEachChangeIsToldWithItsFieldsAndWriter compares a namespace of
// config maps between a revision and now, where one is unchanged, one
// updated by a manager, one deleted and one created: each is reported as
// such, a changed one with its fields and who wrote them, in key order,
// and handed to the Visit and Changed hooks.
func TestEachChangeIsToldWithItsFieldsAndWriter(t *testing.T) {
	ctx := context.Background()
	req, c := configMaps(t, "a", "b", "c")
	update(t, req, "b", "deployer", map[string]string{"colour": "blue"})
	if _, err := c.Delete(ctx, "/registry/configmaps/default/c"); err != nil {
		t.Fatal(err)
	}
	h := req.Pairs[0].To
	nsCtx := stores.RequestContext(ctx, handle.Target{Handle: h.Handle, Namespace: "default"})
	if _, err := h.Storage.(rest.Creater).Create(nsCtx, &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var visited []string
	req.Visit = func(v Visit) error {
		visited = append(visited, v.Name+" "+v.Change)
		return nil
	}
	// Changed is given every object that differs, named as kubectl diff
	// names its files.
	var changed []string
	req.Changed = func(name string, from, to runtime.Object) error {
		changed = append(changed, name)
		return nil
	}

	report, err := Compare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !report.Differ() {
		t.Error("the report says nothing differs")
	}
	if len(report.Resources) != 1 {
		t.Fatalf("resources %+v", report.Resources)
	}
	if r := report.Resources[0]; r.Added != 1 || r.Removed != 1 || r.Changed != 1 || r.Unchanged != 1 || r.Recreated != 0 {
		t.Errorf("counts %+v, want one of each but recreated", r)
	}
	var got []string
	for _, o := range report.Objects {
		got = append(got, o.Name+" "+o.Change)
	}
	if want := []string{"b changed", "c removed", "d added"}; !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	b := report.Objects[0]
	i := slices.IndexFunc(b.Fields, func(f Field) bool { return f.Path == "data" || f.Path == "data.colour" })
	if i < 0 {
		t.Fatalf("b's fields %+v name no data", b.Fields)
	}
	if f := b.Fields[i]; f.Manager != "deployer" || f.Operation != "Update" {
		t.Errorf("b's %s was written by %q (%s), want deployer's update", f.Path, f.Manager, f.Operation)
	}
	if !slices.Contains(visited, "a "+Unchanged) || !slices.Contains(visited, "b "+Changed) {
		t.Errorf("visited %v, want a unchanged and b changed among them", visited)
	}
	if want := []string{"v1.ConfigMap.default.b", "v1.ConfigMap.default.c", "v1.ConfigMap.default.d"}; !slices.Equal(changed, want) {
		t.Errorf("Changed was given %v, want %v", changed, want)
	}
	if got, want := report.summary(), "3 objects differ and 1 is the same between rev:before"; !strings.HasPrefix(got, want) {
		t.Errorf("summary %q, want it to start %q", got, want)
	}
}

// TestNothingDiffersBetweenARevisionAndItself compares a revision with
// itself: every object is unchanged and the report says nothing differs.
func TestNothingDiffersBetweenARevisionAndItself(t *testing.T) {
	req, _ := configMaps(t, "a", "b", "c")
	req.To = req.From
	report, err := Compare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if report.Differ() || len(report.Objects) != 0 {
		t.Errorf("a revision against itself differs: %+v", report.Objects)
	}
	if len(report.Resources) != 1 || report.Resources[0].Unchanged != 3 {
		t.Errorf("resources %+v, want 3 unchanged", report.Resources)
	}
	if got, want := report.summary(), "0 objects differ and 3 are the same between rev:before"; !strings.HasPrefix(got, want) {
		t.Errorf("summary %q, want it to start %q", got, want)
	}
}

// TestSources reads --from and --to as the command line gives them.
func TestSources(t *testing.T) {
	for in, want := range map[string]Source{
		"live":      {Name: "live"},
		"rev:42":    {Name: "rev:42", Revision: 42},
		"backup.db": {Name: "backup.db", Snapshot: "backup.db"},
		// A file whose name holds a colon is a file.
		"backups/rev:3.db": {Name: "backups/rev:3.db", Snapshot: "backups/rev:3.db"},
	} {
		if got, err := ParseSource(in); err != nil || got != want {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	// A time is told when the side is opened.
	for in, text := range map[string]string{"rev:2026-11-29T14:00:00Z": "2026-11-29T14:00:00Z", "rev:90m": "90m"} {
		if got, err := ParseSource(in); err != nil || got.Name != in || got.Revision != 0 || got.Time.Text != text || got.Snapshot != "" {
			t.Errorf("ParseSource(%q) = %+v, %v; want the time %s", in, got, err, text)
		}
	}
	for _, in := range []string{"", "rev:0", "rev:-1", "rev:x", "rev:-5m", "rev:2026-11-29"} {
		if _, err := ParseSource(in); err == nil {
			t.Errorf("ParseSource(%q) took it", in)
		}
	}
}

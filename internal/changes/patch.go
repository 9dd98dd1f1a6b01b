package changes

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
)

// Patch writes the objects that differ to a FROM and a TO directory, as
// kubectl's diff writes its LIVE and MERGED ones (YAML, managedFields left
// out, a Secret's data masked), and runs the diff program on them: a
// unified diff of each object, one at a time in memory.
type Patch struct {
	from, to *kubectldiff.DiffVersion
	program  *kubectldiff.DiffProgram
	// ShowSecrets leaves a Secret's data unmasked.
	ShowSecrets bool
}

// NewPatch makes the two directories; Close removes them.
func NewPatch(program *kubectldiff.DiffProgram) (*Patch, error) {
	from, err := kubectldiff.CreateDirectory("FROM")
	if err != nil {
		return nil, err
	}
	to, err := kubectldiff.CreateDirectory("TO")
	if err != nil {
		from.Delete()
		return nil, err
	}
	return &Patch{from: &kubectldiff.DiffVersion{Dir: from, Name: "FROM"}, to: &kubectldiff.DiffVersion{Dir: to, Name: "TO"}, program: program}, nil
}

// Add writes one object's two sides; nil for a side without it.
func (p *Patch) Add(name string, from, to runtime.Object) error {
	from, err := printable(from)
	if err != nil {
		return err
	}
	if to, err = printable(to); err != nil {
		return err
	}
	if !p.ShowSecrets && isSecret(from, to) {
		m, err := kubectldiff.NewMasker(from, to)
		if err != nil {
			return err
		}
		// The masker's sides are never nil: keep a missing one missing.
		if from != nil {
			from = m.From()
		}
		if to != nil {
			to = m.To()
		}
	}
	if err := p.from.Print(name, from, kubectldiff.Printer{}); err != nil {
		return err
	}
	return p.to.Print(name, to, kubectldiff.Printer{})
}

// Run runs the diff program on the two directories: its error is an
// exec.ExitError of status 1 when they differ.
func (p *Patch) Run() error { return p.program.Run(p.from.Dir.Name, p.to.Dir.Name) }

// Close removes the directories.
func (p *Patch) Close() {
	p.from.Dir.Delete()
	p.to.Dir.Delete()
}

// printable is obj as kubectl's diff prints it: unstructured, so its
// fields come sorted, without managedFields; nil stays nil.
func printable(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: data}
	u.SetManagedFields(nil)
	return u, nil
}

func isSecret(objs ...runtime.Object) bool {
	for _, o := range objs {
		if o != nil && o.GetObjectKind().GroupVersionKind() == (schema.GroupVersionKind{Version: "v1", Kind: "Secret"}) {
			return true
		}
	}
	return false
}

package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
	"github.com/regctl/regctl/internal/writes"
)

// WriteOptions are shared by create, replace and delete.
type WriteOptions struct {
	*Globals
	target.Scope
	Output render.Format // empty: messages only
	DryRun bool
	// AllowPlaintext writes resources in plain text where their stored
	// values are encrypted (create and replace).
	AllowPlaintext bool
	// Validation is kubectl's --validate (create and replace).
	Validation writes.Validation
	// FieldManager is kubectl's --field-manager (create and replace): the
	// manager managedFields records the write as.
	FieldManager string
	// DropUnknownFields writes over stored values with fields this
	// release does not know (replace).
	DropUnknownFields bool
	// Recursive reads -f directories' subdirectories too (-R).
	Recursive bool
	output    string
}

// WriteFormats are the -o of the commands that write.
var WriteFormats = []render.Format{render.YAML, render.JSON, render.Name}

// AddWriteFlags are -o and --dry-run, for the commands that write.
func AddWriteFlags(cmd *cobra.Command, o *WriteOptions) {
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Print the stored objects (yaml|json) or their names (name) instead of a line per write, as kubectl does")
	AddDryRunFlag(cmd, "Run defaulting, strategies and validation, print the result, write nothing")
}

// AddManifestFlags are the flags of the commands that write a manifest's
// objects: --allow-plaintext, --field-manager and --validate.
func AddManifestFlags(cmd *cobra.Command, o *WriteOptions) {
	fs := cmd.Flags()
	addPlaintextFlag(fs, o)
	cmdutil.AddFieldManagerFlagVar(cmd, &o.FieldManager, stores.DefaultFieldManager)
	o.Validation = metav1.FieldValidationStrict
	f := fs.VarPF(&o.Validation, "validate", "", "Field validation, as kubectl's: strict (unknown or duplicate fields are errors), warn (they are warnings) or ignore; a custom resource's unknown fields are pruned unless strict")
	f.NoOptDefVal = "strict"
}

// AddDropUnknownFieldsFlag is `--drop-unknown-fields`, for the commands
// that write over stored values.
func AddDropUnknownFieldsFlag(fs *pflag.FlagSet, drop *bool) {
	fs.BoolVar(drop, "drop-unknown-fields", false, "Write over stored values that hold fields this release does not know (written by a newer kube-apiserver), dropping them as this release's kube-apiserver would; without it such a write is refused")
}

// AddFilenameFlags are kubectl's -f and -R, for the commands that read a
// manifest: usage says what the manifest is for.
func AddFilenameFlags(fs *pflag.FlagSet, filenames *[]string, recursive *bool, usage string) {
	fs.StringSliceVarP(filenames, "filename", "f", nil, usage+": a file, a directory (its .json, .yaml and .yml files), or - for standard input; repeat it, or separate with commas, for several, read in turn")
	fs.BoolVarP(recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively, as kubectl does")
}

// addPlaintextFlag is `--allow-plaintext`, for the commands that write
// object values.
func addPlaintextFlag(fs *pflag.FlagSet, o *WriteOptions) {
	fs.BoolVar(&o.AllowPlaintext, "allow-plaintext", false, "Write resources whose stored values are encrypted in plain text, without `--encryption-provider-config`")
}

// Complete reads what every write takes beside its own flags: -n given or
// not, --dry-run and -o.
func (o *WriteOptions) Complete(cmd *cobra.Command, _ []string) (err error) {
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	if o.DryRun, err = DryRun(cmd); err != nil {
		return err
	}
	if o.output != "" {
		o.Output, err = render.ParseFormat(o.output, WriteFormats...)
	}
	return err
}

// Validate checks what every write is given beside its own flags.
func (o *WriteOptions) Validate() error {
	if o.RevisionGiven() {
		return stores.ErrWriteAtRevision
	}
	return CheckFieldManager(o.FieldManager)
}

// CheckFieldManager checks `--field-manager` as the server checks the
// fieldManager a request names; empty is the default manager.
func CheckFieldManager(name string) error {
	if errs := metav1validation.ValidateFieldManager(name, field.NewPath("fieldManager")); len(errs) > 0 {
		return fmt.Errorf("`--field-manager`: %s", errs.ToAggregate())
	}
	return nil
}

// WriteManifest writes the manifest in filenames with v (writes.Run), on
// the map of the user's etcd, which it builds once the manifest is read.
func (o *WriteOptions) WriteManifest(ctx context.Context, filenames []string, subresource string, v writes.Verb) error {
	if err := o.SessionConfig().Writable(); err != nil {
		return err
	}
	live := NewLiveMaps(o.Globals, o.Scope, !o.DryRun)
	defer live.Close()
	return writes.Run(ctx, writes.Manifest{
		Filenames: filenames, Recursive: o.Recursive, In: o.IO.In, Out: o.IO.Out, ErrOut: o.IO.ErrOut,
		Output: o.Output, DryRun: o.DryRun,
		Scope:       writes.Scope{Namespace: o.Namespace, Explicit: o.NamespaceSet},
		Subresource: subresource, AllowPlaintext: o.AllowPlaintext, Validation: string(o.Validation),
		Verb: v, Maps: live,
	})
}

// LiveMaps are the maps a manifest is written or diffed on (writes.Maps):
// built once the manifest is read, for its kinds, with what the field
// managers of custom resources need, which reads do without; built again
// once the CRDs written in a sandbox are established. Close closes the
// last one built.
type LiveMaps struct {
	g *Globals
	// scope is -n, checked before the map is built: the commands that
	// read a manifest take it for the objects that name no namespace, and
	// resolve no path through OpenTargets, which checks it for the others.
	scope target.Scope
	// writes is set when the command writes what the map is built for:
	// not a dry run, nor a diff.
	writes  bool
	kinds   []schema.GroupVersionKind
	session *storagemap.Session
}

// NewLiveMaps are the maps of the etcd g names, for the objects in scope;
// writes says whether the command writes to it.
func NewLiveMaps(g *Globals, scope target.Scope, writes bool) *LiveMaps {
	return &LiveMaps{g: g, scope: scope, writes: writes}
}

func (l *LiveMaps) Open(ctx context.Context, kinds []schema.GroupVersionKind) (writes.Map, error) {
	if err := l.scope.Check(); err != nil {
		return nil, err
	}
	s, err := storagemap.OpenData(ctx, l.config(kinds))
	if err != nil {
		return nil, err
	}
	l.kinds, l.session = kinds, s
	return s.Map, nil
}

// Sandbox: a map built on --data-dir is a sandbox's, where no server runs
// the controllers that establish the CRDs written.
func (l *LiveMaps) Sandbox() bool { return l.g.DataDir != "" }

func (l *LiveMaps) Establish(ctx context.Context, names []string) error {
	return l.session.EstablishCRDs(ctx, names)
}

// Reopen builds the map again on the sandbox's etcd. When it fails, the
// map it had is closed already, and closing it again does nothing.
func (l *LiveMaps) Reopen(ctx context.Context) (writes.Map, error) {
	s, err := l.session.Reopen(ctx, l.config(l.kinds))
	if err != nil {
		return nil, err
	}
	l.session = s
	return s.Map, nil
}

func (l *LiveMaps) Server() *rest.Config { return l.session.LoopbackConfig() }

// Close closes the last map built, if any.
func (l *LiveMaps) Close() {
	if l.session != nil {
		l.session.Close()
	}
}

// config is the map's config for the objects of kinds.
func (l *LiveMaps) config(kinds []schema.GroupVersionKind) storagemap.Config {
	cfg := l.g.SessionConfig()
	cfg.FieldManagement = true
	cfg.Kinds = kinds
	cfg.Writes = l.writes
	return cfg
}

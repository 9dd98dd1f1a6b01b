// Package rootcmd is regctl's root command: the flags every command shares
// (kube-apiserver's, the data to work on, verbosity, the request timeout)
// and every command under it. cmd/regctl runs it, with exit codes and
// Ctrl-C; cmd/gendocs writes the reference from it.
package rootcmd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/createcmd"
	"github.com/regctl/regctl/internal/cli/deletecmd"
	"github.com/regctl/regctl/internal/cli/diffcmd"
	"github.com/regctl/regctl/internal/cli/getcmd"
	"github.com/regctl/regctl/internal/cli/inspectcmd"
	"github.com/regctl/regctl/internal/cli/keyscmd"
	"github.com/regctl/regctl/internal/cli/migratecmd"
	"github.com/regctl/regctl/internal/cli/replacecmd"
	"github.com/regctl/regctl/internal/cli/restorecmd"
	"github.com/regctl/regctl/internal/cli/routescmd"
	"github.com/regctl/regctl/internal/cli/scancmd"
	"github.com/regctl/regctl/internal/cli/spacecmd"
	"github.com/regctl/regctl/internal/cli/versioncmd"
	"github.com/regctl/regctl/internal/cli/whycmd"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// DropGlobalFlags empties pflag.CommandLine, whose flags cobra gives every
// command: the server's packages register flags of their own there
// (component-base's --version, which prints the Kubernetes version and
// quits in a server), and regctl serves none of them. A program calls it
// before New.
func DropGlobalFlags() {
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ContinueOnError)
}

// New is regctl's root command with every command under it, and the flags
// its commands share, which Globals.Explain reads when the command fails.
func New(streams cli.IOStreams) (*cobra.Command, *cli.Globals) {
	g := &cli.Globals{IO: streams, Server: serverflags.NewOptions(), RequestTimeout: 5 * time.Second}
	cmd := &cobra.Command{
		Use:   "regctl",
		Short: "See and touch how kube-apiserver stores its API in etcd",
		Long: `regctl instantiates kube-apiserver's own storage map, every API group with the
CRDs and APIServices in etcd, with the server's code and flags, and shows how each
path is stored in etcd.

Storage flags are kube-apiserver's (--etcd-servers, --etcd-prefix, --watch-cache,
--watch-cache-sizes, --storage-media-type, --encryption-provider-config, ...),
and every other kube-apiserver flag is accepted and ignored (listed with -v 1),
so a server's command line can be reused as is, or read from its static Pod
manifest (--apiserver-manifest, flags given here win). etcdctl's environment
(ETCDCTL_ENDPOINTS, ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY) stands in for the
etcd flags not given. --data-dir DIR runs an etcd inside regctl on DIR instead:
a sandbox that keeps what is written from one command to the next. Without an
etcd, regctl builds the map on an ephemeral in-process etcd.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			logs.Setup(g.Verbosity, streams.ErrOut)
			return setUp(cmd, g)
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)

	fs := cmd.PersistentFlags()
	fs.IntVarP(&g.Verbosity, "v", "v", 0, "Log level for klog, grpc and etcd; 0 is silent")
	fs.DurationVar(&g.RequestTimeout, "request-timeout", g.RequestTimeout, "How long to wait for etcd, or a KMS plugin, to answer a request, including dialing it")
	fs.StringVar(&g.DataDir, "data-dir", "", "A sandbox: run an etcd inside regctl on the data directory `DIR` (a command that writes creates it when missing) for the command's duration, instead of --etcd-servers; a copy of a member's /var/lib/etcd opens too")
	fs.StringVar(&g.Manifest, "apiserver-manifest", "", "A kube-apiserver static Pod manifest (kubeadm's /etc/kubernetes/manifests/kube-apiserver.yaml): take the server's flags from it; flags given here win")
	fs.StringVar(&g.Snapshot, "snapshot", "", "Read an etcd snapshot file (etcdctl snapshot save, or a stopped member's member/snap/db) instead of a live etcd; it is opened read-only")
	fs.StringVar(&g.ManifestRoot, "manifest-root", "", "Read the files the manifest names under this directory (a copy of the node's filesystem, e.g. its /etc/kubernetes as DIR/etc/kubernetes)")
	g.AddRevisionFlag(fs)
	fs.StringVar(&g.ReleaseMismatch, storagemap.MismatchFlag, storagemap.MismatchRefuse, "What writes do when the cluster runs another Kubernetes release than this regctl carries (told by the manifest's image, kubeadm-config, the kubelets): refuse, or ignore and write")
	g.Server.AddFlags(fs)

	cmd.AddCommand(
		routescmd.New(g, nil),
		versioncmd.New(g, nil),
		getcmd.New(g, nil),
		keyscmd.New(g, nil),
		inspectcmd.New(g, nil),
		createcmd.New(g, nil),
		replacecmd.New(g, nil),
		deletecmd.New(g, nil),
		scancmd.New(g, nil),
		spacecmd.New(g, nil),
		whycmd.New(g, nil),
		migratecmd.New(g, nil),
		diffcmd.New(g, nil),
		restorecmd.New(g, nil),
	)
	completion.RequireSubcommands(cmd)
	cmd.SetUsageTemplate(withIgnoredFlagsLine(cmd.UsageTemplate()))
	return cmd, g
}

// ignoredFlagsLine stands for the kube-apiserver flags help leaves out.
const ignoredFlagsLine = "Every other kube-apiserver flag is accepted and ignored, so a server's command line can be given as it is (-v 1 lists those given)."

// withIgnoredFlagsLine adds ignoredFlagsLine under the flags of cobra's
// usage template, where a reader looks for a flag.
func withIgnoredFlagsLine(template string) string {
	for _, block := range []string{"{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}", "{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}"} {
		template = strings.Replace(template, block, block+"\n\n"+ignoredFlagsLine, 1)
	}
	return template
}

// setUp reads and checks the flags every command shares, once, before the
// command reads its options: the manifest's flags under those given,
// etcdctl's environment, and a time given to `--revision` told as a
// revision for the commands that read at one.
func setUp(cmd *cobra.Command, g *cli.Globals) error {
	if g.ReleaseMismatch != storagemap.MismatchRefuse && g.ReleaseMismatch != storagemap.MismatchIgnore {
		return fmt.Errorf("`--%s` is %s or %s, not %q", storagemap.MismatchFlag, storagemap.MismatchRefuse, storagemap.MismatchIgnore, g.ReleaseMismatch)
	}
	if g.RequestTimeout < 0 {
		return fmt.Errorf("`--request-timeout` must be 0 (no timeout) or more, not %s", g.RequestTimeout)
	}
	if g.Snapshot != "" && cmd.Flags().Changed("etcd-servers") {
		return errors.New("`--snapshot` and `--etcd-servers` both name an etcd to read: give one")
	}
	if g.Manifest != "" {
		if err := g.Server.ApplyManifest(cmd.Flags(), g.Manifest, g.ManifestRoot); err != nil {
			return err
		}
	} else if g.ManifestRoot != "" {
		return errors.New("`--manifest-root` resolves the files of `--apiserver-manifest`: give the manifest too")
	}
	if ignored := g.Server.Ignored(); len(ignored) > 0 {
		klog.V(1).Infof("kube-apiserver flags accepted and ignored (they shape nothing regctl builds): %s", strings.Join(ignored, " "))
	}
	// A snapshot or a sandbox is the etcd the command line names:
	// etcdctl's environment stands for flags not given, not for
	// another etcd.
	if g.Snapshot == "" && g.DataDir == "" {
		if err := serverflags.FromEnvironment(cmd.Flags(), os.Getenv); err != nil {
			return err
		}
	}
	// Once, before the command reads its options: a time is the
	// revision it reads at. The commands that refuse --revision
	// refuse a time before anything is dialed.
	if cli.ReadsAt(cmd) {
		return g.TellRevision(cmd.Context())
	}
	return nil
}

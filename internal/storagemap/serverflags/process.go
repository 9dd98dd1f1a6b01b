package serverflags

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"k8s.io/kubernetes/pkg/capabilities"
)

// process is what kube-apiserver's code reads from process-wide state: the
// feature gate and kube version (utilfeature, the component registry) and
// the pod capabilities (--allow-privileged). A server has one command line
// per process; regctl may open several maps in one (the two sides of a
// diff, a restore's source and target, tests), so the state is held here,
// in one place: the first map applies its flags', the maps opened while it
// holds must want the same, and the last to close puts back what the
// process had, whatever order they close in.
var process struct {
	mu sync.Mutex
	// holders are the maps open with the state of want.
	holders int
	want    string
	// changed are the gates the flags turn from the process's value, as
	// the first holder found them.
	changed map[string]bool
	restore func() error
}

// ErrOtherMapOpen is the refusal of a map whose flags set other
// process-wide values than a map open in the process.
var ErrOtherMapOpen = errors.New("another map open in this process")

// hold makes the process-wide state that of o's flags for as long as the
// returned release is not called, or refuses when another map holds
// another.
func (o *Options) hold() (release func() error, err error) {
	want := o.processWide()
	process.mu.Lock()
	defer process.mu.Unlock()
	if process.holders > 0 {
		if want != process.want {
			return nil, fmt.Errorf("%w has %s, this one %s: the server's code reads them process-wide, so open the maps one after the other", ErrOtherMapOpen, process.want, want)
		}
		o.versions.changed = process.changed
	} else {
		restore, err := o.versions.apply()
		if err != nil {
			return nil, err
		}
		// kube-apiserver sets the capabilities once, from its one command
		// line; Setup keeps the first value a process gives it, so each
		// holder's is set anew (the reset is upstream's only way to).
		capabilities.ResetForTest()
		capabilities.Setup(o.Server.AllowPrivileged, o.Server.MaxConnectionBytesPerSec)
		process.want, process.changed, process.restore = want, o.versions.changed, restore
	}
	process.holders++
	return sync.OnceValue(release1), nil
}

// release1 lets go of one hold; the last puts the process's state back.
func release1() error {
	process.mu.Lock()
	defer process.mu.Unlock()
	process.holders--
	if process.holders > 0 {
		return nil
	}
	restore := process.restore
	process.want, process.changed, process.restore = "", nil, nil
	capabilities.ResetForTest()
	return restore()
}

// processWide says the flags that set the process-wide state, as given:
// two maps of the same flags share it.
func (o *Options) processWide() string {
	var parts []string
	for _, f := range o.versions.flags {
		if f.Changed {
			// The registry's flags print their component first, empty
			// for kube-apiserver's: ":AllBeta=true".
			parts = append(parts, "`--"+f.Name+"="+strings.TrimPrefix(f.Value.String(), ":")+"`")
		}
	}
	parts = append(parts,
		"`--allow-privileged="+strconv.FormatBool(o.Server.AllowPrivileged)+"`")
	if o.Server.MaxConnectionBytesPerSec != 0 {
		parts = append(parts, "`--max-connection-bytes-per-sec="+strconv.FormatInt(o.Server.MaxConnectionBytesPerSec, 10)+"`")
	}
	return strings.Join(parts, " ")
}

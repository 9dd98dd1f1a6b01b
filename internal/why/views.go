package why

import (
	"fmt"
	"strings"
	"time"

	"github.com/regctl/regctl/internal/render"
)

// Tree is the report as an operator reads it: the object, what the
// namespace controller said, what remains and what holds each, the
// APIServices in the way, and the way out.
func (r *Report) Tree() []render.Node {
	top := render.Node{Text: r.headline()}
	if ns := r.Namespace; ns != nil {
		if len(r.Object.Finalizers) > 0 {
			top.Children = append(top.Children, render.Node{Text: "metadata.finalizers", Children: finalizerNodes(r.Object.Finalizers)})
		}
		if len(ns.SpecFinalizers) > 0 {
			top.Children = append(top.Children, render.Node{Text: "spec.finalizers", Children: finalizerNodes(ns.SpecFinalizers)})
		}
		if len(ns.Conditions) > 0 {
			n := render.Node{Text: "conditions (written by the namespace controller)"}
			for _, c := range ns.Conditions {
				n.Children = append(n.Children, render.Node{Text: fmt.Sprintf("%s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)})
			}
			top.Children = append(top.Children, n)
		}
	}
	if r.Namespace == nil && !r.Gone {
		top.Children = append(top.Children, objectNode(r.Object, true).Children...)
	}
	if len(r.Objects) > 0 {
		title := fmt.Sprintf("%s %s: %s", objects(len(r.Objects)), remain(len(r.Objects)), joinCounts(r.Remaining))
		if r.Remaining == nil {
			title = fmt.Sprintf("%s (ownerReferences name it)", dependents(len(r.Objects)))
		}
		n := render.Node{Text: title}
		if len(r.FinalizersRemaining) > 0 {
			n.Children = append(n.Children, render.Node{Text: "with finalizers: " + joinCounts(r.FinalizersRemaining)})
		}
		for _, o := range r.Objects {
			n.Children = append(n.Children, objectNode(o, false))
		}
		top.Children = append(top.Children, n)
	} else if r.Namespace != nil || r.Gone {
		top.Children = append(top.Children, render.Node{Text: "no object remains in it in etcd"})
	}
	if len(r.UnavailableAPIServices) > 0 {
		n := render.Node{Text: "unavailable APIServices (while one is, the namespace controller finishes no namespace)"}
		for _, a := range r.UnavailableAPIServices {
			text := fmt.Sprintf("%s: service %s", a.Name, a.Service)
			if a.Reason != "" {
				text += fmt.Sprintf(" (%s: %s)", a.Reason, a.Message)
			}
			n.Children = append(n.Children, render.Node{Text: text})
		}
		top.Children = append(top.Children, n)
	}
	for _, u := range r.Unread {
		top.Children = append(top.Children, render.Node{Text: fmt.Sprintf("not read: %s: %s", u.Resource, u.Reason)})
	}
	if len(r.TerminatingCRDs) > 0 {
		top.Children = append(top.Children, render.Node{Text: "CRDs being deleted, with objects here: " + joinCounts(r.TerminatingCRDs)})
	}
	if len(r.GoneCRDs) > 0 {
		top.Children = append(top.Children, render.Node{Text: "CRDs that are gone, with objects here: " + joinCounts(r.GoneCRDs)})
	}
	if len(r.WayOut) > 0 {
		n := render.Node{Text: "way out (regctl did none of it: run what you choose)"}
		for i, s := range r.WayOut {
			lines := []string{fmt.Sprintf("%d. %s", i+1, s.Do)}
			for _, c := range s.Commands {
				lines = append(lines, "   "+c)
			}
			if s.Warning != "" {
				lines = append(lines, "   warning: "+s.Warning)
			}
			n.Children = append(n.Children, render.Node{Text: strings.Join(lines, "\n")})
		}
		top.Children = append(top.Children, n)
	}
	return []render.Node{top}
}

func (r *Report) headline() string {
	o := r.Object
	name := o.Resource + "/" + o.Name
	if o.Namespace != "" {
		name += " -n " + o.Namespace
	}
	at := fmt.Sprintf(" (etcd revision %d)", r.Revision)
	switch {
	case r.Gone:
		return name + ": not stored: the namespace is gone" + at
	case o.DeletionTimestamp != nil:
		state := "deleting"
		if r.Namespace != nil && r.Namespace.Phase != "" {
			state = r.Namespace.Phase
		}
		return fmt.Sprintf("%s: %s since %s%s", name, state, o.DeletionTimestamp.UTC().Format(time.RFC3339), at)
	case r.Namespace != nil && r.Namespace.Phase != "":
		return name + ": " + r.Namespace.Phase + at
	}
	return name + ": not being deleted" + at
}

// objectNode is one object's line and what holds it; self leaves out its
// name, which the headline says.
func objectNode(o Object, self bool) render.Node {
	text := o.Resource + "/" + o.Name
	if o.Namespace != "" && self {
		text += " -n " + o.Namespace
	}
	switch {
	case o.Leftover:
		text += ": its CRD is gone"
	case o.Unreadable != "":
		text += ": unreadable: " + o.Unreadable
	case o.DeletionTimestamp != nil:
		text += ": deleting since " + o.DeletionTimestamp.UTC().Format(time.RFC3339)
	default:
		text += ": not deleted yet"
	}
	n := render.Node{Text: text}
	n.Children = append(n.Children, finalizerNodes(o.Finalizers)...)
	for _, h := range o.HeldBy {
		n.Children = append(n.Children, render.Node{Text: h})
	}
	return n
}

func finalizerNodes(fins []Finalizer) []render.Node {
	var out []render.Node
	for _, f := range fins {
		text := "finalizer " + f.Name + ": "
		if f.ownController() {
			text += fmt.Sprintf("%s removes it %s", f.RemovedBy, f.When)
		} else {
			text += "not Kubernetes' own: the controller that added it removes it"
		}
		out = append(out, render.Node{Text: text})
	}
	return out
}

func joinCounts(cs []Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d", c.Name, c.Objects)
	}
	return strings.Join(parts, ", ")
}

func remain(n int) string {
	if n == 1 {
		return "remains"
	}
	return "remain"
}

func dependents(n int) string {
	if n == 1 {
		return "1 dependent"
	}
	return fmt.Sprintf("%d dependents", n)
}

package render

import (
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
)

// Treed is a value shown as a tree of lines, for a report an operator
// reads top down and pastes into an incident.
type Treed interface {
	Tree() []Node
}

// Node is one line of a tree and the lines under it.
type Node struct {
	Text     string
	Children []Node
}

// printTree writes the top nodes flush left and their children under
// them with box-drawing branches, as tree(1) does. Texts hold what etcd
// holds, so terminal control characters are escaped.
func printTree(w io.Writer, nodes []Node) error {
	var b strings.Builder
	for _, n := range nodes {
		b.WriteString(printers.EscapeTerminal(n.Text) + "\n")
		writeBranches(&b, n.Children, "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeBranches(b *strings.Builder, nodes []Node, indent string) {
	for i, n := range nodes {
		branch, next := "├─ ", "│  "
		if i == len(nodes)-1 {
			branch, next = "└─ ", "   "
		}
		lines := strings.Split(printers.EscapeTerminal(n.Text), "\n")
		b.WriteString(indent + branch + lines[0] + "\n")
		for _, l := range lines[1:] {
			b.WriteString(indent + next + l + "\n")
		}
		writeBranches(b, n.Children, indent+next)
	}
}

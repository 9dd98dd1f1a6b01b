package render

import (
	"bytes"
	"testing"
)

type tree []Node

func (t tree) Tree() []Node { return t }

// TestTreeBranchesAndContinuedLines: children hang off box-drawing
// branches, the last with a corner; a child's second line continues under
// its branch; control characters are escaped as kubectl escapes them.
func TestTreeBranchesAndContinuedLines(t *testing.T) {
	v := tree{{Text: "top", Children: []Node{
		{Text: "a", Children: []Node{{Text: "a1"}, {Text: "a2\n   more"}}},
		{Text: "b\x1b[31m"},
	}}}
	var out bytes.Buffer
	if err := Print(&out, Table, v); err != nil {
		t.Fatal(err)
	}
	want := "top\n├─ a\n│  ├─ a1\n│  └─ a2\n│        more\n└─ b^[[31m\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

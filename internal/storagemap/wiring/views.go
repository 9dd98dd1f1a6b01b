package wiring

// Part is one step of a path's wiring as text shows it: a title, and rows
// of a name and a value.
type Part struct {
	Title string
	Rows  [][]string
}

// Parts shows the path as kubectl describe shows an object: a part per
// step, each decision with its value, and its code with where it is on a
// line of its own. (The command prints them; this package links no
// printer.)
func (p Path) Parts() []Part {
	var out []Part
	for i, s := range p.Steps {
		part := Part{Title: s.Step + ":"}
		if i == 0 {
			// The first step is the path's own record.
			part.Title = "Path: " + p.Path
		}
		for _, d := range s.Decisions {
			name := "  " + d.Name + ":"
			if d.Value != "" || d.Code == "" {
				part.Rows = append(part.Rows, []string{name, d.Value})
				name = ""
			}
			if d.Code != "" {
				code := d.Code
				if d.At != "" {
					code += " (" + d.At + ")"
				}
				part.Rows = append(part.Rows, []string{name, code})
			}
		}
		if len(part.Rows) == 0 {
			part.Rows = [][]string{{"  <none>"}}
		}
		out = append(out, part)
	}
	return out
}

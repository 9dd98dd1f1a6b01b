package wiring

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Resolve finds the resource path a user means by name: its plural, singular
// or kind name, or one of its short names, in any case, as kubectl resolves
// them, all read from the server's discovery. Subresources are not matched:
// they are named through their resource.
func (w *Wiring) Resolve(name string) (metav1.APIResource, error) {
	want := strings.ToLower(name)
	for _, r := range w.Resources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		if want == r.Name || want == r.SingularName || want == strings.ToLower(r.Kind) {
			return r, nil
		}
		for _, short := range r.ShortNames {
			if want == short {
				return r, nil
			}
		}
	}
	msg := fmt.Sprintf("unknown resource %q", name)
	if close := w.closeNames(want); len(close) > 0 {
		msg += fmt.Sprintf(": did you mean %s?", strings.Join(close, " or "))
	}
	return metav1.APIResource{}, fmt.Errorf("%s (see `regctl routes`)", msg)
}

// Subresource returns the discovery entry of resource/sub, if served.
func (w *Wiring) Subresource(resource, sub string) (metav1.APIResource, bool) {
	for _, r := range w.Resources {
		if r.Name == resource+"/"+sub {
			return r, true
		}
	}
	return metav1.APIResource{}, false
}

// closeNames suggests resources whose names are a small edit away from, or
// start with, what the user typed.
func (w *Wiring) closeNames(want string) []string {
	var out []string
	for _, r := range w.Resources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		// One typo per three letters reads as a slip; more is another word.
		slack := max(1, len(want)/3)
		candidates := append([]string{r.Name, r.SingularName}, r.ShortNames...)
		for _, c := range candidates {
			if c != "" && (editDistance(want, c) <= slack || (len(want) >= 3 && strings.HasPrefix(c, want))) {
				out = append(out, r.Name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

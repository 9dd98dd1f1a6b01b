package itemjson

// Writer writes a List as kubectl get -o json prints it, one item at a
// time: kubectl's JSON printer indents a List by four spaces, its items at
// two levels in, and each item is indented here as it would be there.
type Writer struct {
	e typedJSON
}

// listHead starts a List; an item after the first follows a comma.
const (
	listHead  = "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        "
	itemAfter = ",\n        "
	listTail  = "    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
)

// Item appends obj to dst as item n (from 0) of the list, after what goes
// before it.
func (w *Writer) Item(dst []byte, n int, obj any) ([]byte, error) {
	if n == 0 {
		dst = append(dst, listHead...)
	} else {
		dst = append(dst, itemAfter...)
	}
	return listItems.append(&w.e, dst, obj, len("        "))
}

// End is what ends a List of n items.
func End(n int) string {
	if n == 0 {
		return "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n" + listTail
	}
	return "\n    ],\n" + listTail
}

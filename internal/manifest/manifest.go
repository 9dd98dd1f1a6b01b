// Package manifest splits what a user feeds `regctl create -f`: YAML or JSON,
// one object, a multi-document stream, or a list (kind: List, ConfigMapList,
// ...), into one JSON document per object, each labelled with where it came
// from.
package manifest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/yaml"
)

// Object is one object of a manifest.
type Object struct {
	// File is the file the object came from, set when a command reads
	// several (FileIndex is its place among them); empty for one alone.
	File      string
	FileIndex int
	// Doc is the 1-based position of the document in the stream; Item the
	// 1-based position inside a kind: List, 0 for a plain document.
	Doc, Item int
	// JSON is the object as JSON, ready for the apiserver's decoders.
	JSON []byte
	GVK  schema.GroupVersionKind
	Name string
	// Namespace is metadata.namespace as written, possibly empty.
	Namespace string
}

// Where says where the object came from, for messages.
func (o Object) Where() string {
	file := ""
	if o.File != "" {
		file = o.File + ", "
	}
	if o.Item > 0 {
		return fmt.Sprintf("%sdocument %d, item %d", file, o.Doc, o.Item)
	}
	return fmt.Sprintf("%sdocument %d", file, o.Doc)
}

// Error is a problem with one document.
type Error struct {
	File      string
	FileIndex int
	Doc, Item int
	Err       error
}

func (e *Error) Error() string {
	return e.At().Where() + ": " + e.Err.Error()
}

// At is where the error is, as an object's place.
func (e *Error) At() Object {
	return Object{File: e.File, FileIndex: e.FileIndex, Doc: e.Doc, Item: e.Item}
}

// Before tells whether a comes before b in the order the files and their
// documents were given.
func Before(a, b Object) int {
	return cmp.Or(cmp.Compare(a.FileIndex, b.FileIndex), cmp.Compare(a.Doc, b.Doc), cmp.Compare(a.Item, b.Item))
}

// InFile places what Read found in one of several files: each object and
// each document's error says which.
func InFile(objs []Object, errs []error, file string, index int) {
	for i := range objs {
		objs[i].File, objs[i].FileIndex = file, index
	}
	for _, err := range errs {
		var e *Error
		if errors.As(err, &e) {
			e.File, e.FileIndex = file, index
		}
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Read splits r into objects. It reads the whole stream; every document that
// cannot be understood is reported in errs, so that nothing is written from a
// stream with a bad document in it unless the caller decides otherwise.
// Splitting is sequential; parsing, most of the work, runs on every core.
func Read(r io.Reader) (objs []Object, errs []error) {
	var raws [][]byte
	br := bufio.NewReader(r)
	if peek, err := br.Peek(binaryPeek); isBinary(peek, err != nil) {
		return nil, []error{ErrBinary}
	}
	reader := utilyaml.NewYAMLReader(br)
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, &Error{Doc: len(raws) + 1, Err: fmt.Errorf("reading: %w", err)})
			break
		}
		if len(bytes.TrimSpace(stripComments(raw))) > 0 {
			raws = append(raws, raw)
		}
	}
	parsedDocs := make([]parsed, len(raws))
	parseErrs := make([]error, len(raws))
	workqueue.ParallelizeUntil(context.Background(), runtime.GOMAXPROCS(0), len(raws), func(i int) { parsedDocs[i], parseErrs[i] = parse(raws[i]) })

	for i, p := range parsedDocs {
		doc := i + 1
		if parseErrs[i] != nil {
			errs = append(errs, &Error{Doc: doc, Err: parseErrs[i]})
			continue
		}
		if !p.isList() {
			p.Doc = doc
			objs = append(objs, p.Object)
			continue
		}
		items, err := listItems(p.JSON)
		if err != nil {
			errs = append(errs, &Error{Doc: doc, Err: err})
			continue
		}
		for j, item := range items {
			it, err := parse(item)
			if err != nil {
				errs = append(errs, &Error{Doc: doc, Item: j + 1, Err: err})
				continue
			}
			it.Doc, it.Item = doc, j+1
			objs = append(objs, it.Object)
		}
	}
	if len(objs) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no objects found"))
	}
	return objs, errs
}

// ErrBinary is what Read says of a stream that is no text: the YAML and
// JSON parsers' errors would quote its bytes back.
var ErrBinary = errors.New("binary data, not a YAML or JSON manifest")

// binaryPeek is how much of a stream is looked at to tell binary data.
const binaryPeek = 8 << 10

// isBinary tells text from binary data as tools do: a NUL byte, or bytes
// that are no UTF-8 (the last rune may be cut by the peek, unless the peek
// holds all there is).
func isBinary(peek []byte, all bool) bool {
	if bytes.IndexByte(peek, 0) >= 0 {
		return true
	}
	for len(peek) > 0 {
		r, size := utf8.DecodeRune(peek)
		if r == utf8.RuneError && size == 1 && (all || len(peek) >= utf8.UTFMax || utf8.FullRune(peek)) {
			return true
		}
		peek = peek[size:]
	}
	return false
}

type parsed struct {
	Object
	// list says the document is a list of objects, to be flattened.
	list bool
}

func (p parsed) isList() bool { return p.list }

// listItems flattens a list document into its objects as kubectl's
// resource builder does (FlattenListVisitor): apimachinery's unstructured
// decoder says what a list is (any document with items, kind: List as
// much as ConfigMapList or RoleBindingList) and gives items that name no
// apiVersion and kind those of the list's (ConfigMap of a v1 ConfigMapList);
// lists inside are flattened after the objects around them, in kubectl's
// order. Each item is the JSON kubectl would send.
func listItems(data []byte) ([][]byte, error) {
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the list: %w", err)
	}
	if !meta.IsListType(obj) {
		// kind: List without items, an empty list.
		return nil, nil
	}
	var out [][]byte
	pending := []kruntime.Object{obj}
	for i := 0; i < len(pending); i++ {
		if !meta.IsListType(pending[i]) {
			raw, err := json.Marshal(pending[i])
			if err != nil {
				return nil, fmt.Errorf("reading item %d of the list: %w", len(out)+1, err)
			}
			out = append(out, raw)
			continue
		}
		items, err := meta.ExtractList(pending[i])
		if err != nil {
			return nil, fmt.Errorf("reading the list: %w", err)
		}
		pending = append(pending, items...)
	}
	return out, nil
}

func parse(raw []byte) (parsed, error) {
	data, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return parsed{}, fmt.Errorf("not YAML or JSON: %w", err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		// Items is only looked at for being there: the unstructured
		// decoder takes a document with items for a list.
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return parsed{}, fmt.Errorf("not an object: %w", err)
	}
	if head.Kind == "" {
		return parsed{}, errors.New("no kind set")
	}
	if head.APIVersion == "" {
		return parsed{}, errors.New("no apiVersion set")
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return parsed{}, fmt.Errorf("reading apiVersion: %w", err)
	}
	p := parsed{Object: Object{JSON: data, GVK: gv.WithKind(head.Kind), Name: head.Metadata.Name, Namespace: head.Metadata.Namespace}}
	// kind: List without items is still read as an empty list.
	p.list = head.Items != nil || head.Kind == "List"
	return p, nil
}

// stripComments drops YAML comment lines, so a document of only comments
// counts as empty.
func stripComments(raw []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}

package storagemap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

func loopbackGet(t *testing.T, l *loopback, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://regctl.loopback"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l.RoundTrip(req)
}

// TestLoopbackStreams checks what a watch through the loopback needs: the
// response arrives while the handler still runs, each flushed write reaches
// the client at once, and closing the body stops the handler.
func TestLoopbackStreams(t *testing.T) {
	l := &loopback{timeout: time.Second}
	if _, err := loopbackGet(t, l, "/api/v1/pods"); !errors.Is(err, errLoopbackUnbound) {
		t.Fatalf("before bind: %v", err)
	}
	stopped := make(chan struct{})
	l.bind(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, _ := genericapirequest.RequestInfoFrom(req.Context())
		u, _ := genericapirequest.UserFrom(req.Context())
		_, deadline := req.Context().Deadline()
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "%s %s %s %v\n", info.Verb, info.Resource, u.GetName(), deadline)
		if info.Verb == "watch" {
			defer close(stopped)
			w.(http.Flusher).Flush()
			<-req.Context().Done()
		}
	}), genericapiserver.NewConfig(legacyscheme.Codecs))

	// Not a watch: bounded by the request timeout, as the server's
	// deadline filter bounds it.
	resp, err := loopbackGet(t, l, "/api/v1/namespaces/shop/pods")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "list pods system:apiserver true\n" {
		t.Errorf("a list: %q", body)
	}

	resp, err = loopbackGet(t, l, "/api/v1/namespaces/shop/pods?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || resp.StatusCode != http.StatusOK || line != "watch pods system:apiserver false\n" {
		t.Fatalf("status %d, first line %q (%v)", resp.StatusCode, line, err)
	}
	select {
	case <-stopped:
		t.Fatal("the handler stopped before the client closed the watch")
	case <-time.After(50 * time.Millisecond):
	}
	resp.Body.Close()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler still runs after the client closed the body")
	}
}

// TestLoopbackPanicIsAnError checks that a panicking handler fails its
// request instead of the process, as the server's panic filter does.
func TestLoopbackPanicIsAnError(t *testing.T) {
	l := &loopback{}
	l.bind(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), genericapiserver.NewConfig(legacyscheme.Codecs))
	if _, err := loopbackGet(t, l, "/api/v1/pods"); err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("got %v, want the panic as an error", err)
	}
}

package storagemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	restclient "k8s.io/client-go/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// loopback is kube-apiserver's loopback client without a network: the
// server's own code (the cluster IP allocator, its informers) talks to the
// server it runs in through LoopbackClientConfig, and in regctl that server
// is the map's go-restful container, called in-process. Nothing listens and
// nothing is encrypted; the only traffic is the stores' own etcd calls.
//
// The providers take the config while the map is being built, before the
// container they would reach exists: the handler is bound once installed,
// and a request before that fails.
type loopback struct {
	handler atomic.Pointer[http.Handler]
	// timeout bounds a request that is not a watch, as the server's
	// request deadline does.
	timeout time.Duration
}

var errLoopbackUnbound = errors.New("the apiserver's loopback client was used before the storage map was built")

// config is the server's LoopbackClientConfig as controlplane's config sets
// it up (protobuf, no compression, no client-side rate limit), with regctl's
// transport in place of a TLS connection.
func (l *loopback) config() *restclient.Config {
	return &restclient.Config{
		// Never dialed: the transport serves every request.
		Host:               "http://regctl.loopback",
		ContentConfig:      restclient.ContentConfig{ContentType: runtime.ContentTypeProtobuf},
		DisableCompression: true,
		QPS:                -1,
		UserAgent:          "regctl",
		Transport:          l,
	}
}

// LoopbackConfig is the config of a client of the map's own API, served
// in-process by the server's request handlers (the installer's, and for
// custom resources their CRD handler's), as the server's loopback client
// reaches the server: what kubectl's own code talks to, with no server
// running. Nothing listens; the only traffic is the stores' etcd calls.
func (s *Session) LoopbackConfig() *restclient.Config {
	return s.loopback.config()
}

// bind makes the loopback serve with the map's container, behind what the
// server's filter chain puts in a request's context that the handlers read:
// the request info, parsed with the server's own resolver, and the user the
// loopback client authenticates as in a server (system:apiserver, in
// system:masters).
func (l *loopback) bind(container http.Handler, cfg *genericapiserver.Config) {
	loopbackUser := &user.DefaultInfo{Name: user.APIServerUser, Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx := genericapirequest.WithUser(req.Context(), loopbackUser)
		if info, ok := genericapirequest.RequestInfoFrom(ctx); ok && info.Verb != "watch" && l.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, l.timeout)
			defer cancel()
		}
		container.ServeHTTP(w, req.WithContext(ctx))
	})
	h = genericapifilters.WithRequestInfo(h, genericapiserver.NewRequestInfoResolver(cfg))
	// The handlers record what they do in the request's audit context,
	// which the server's chain starts with; nothing is audited.
	h = genericapifilters.WithAuditInit(h)
	l.handler.Store(&h)
}

// RoundTrip serves req in-process. The response is streamed as the handler
// writes it, so a watch delivers its events as they come and ends when the
// client closes the body.
func (l *loopback) RoundTrip(req *http.Request) (*http.Response, error) {
	h := l.handler.Load()
	if h == nil {
		return nil, errLoopbackUnbound
	}
	ctx, cancel := context.WithCancel(req.Context())
	served := req.Clone(ctx)
	if served.Body == nil {
		served.Body = http.NoBody
	}
	served.RequestURI = req.URL.RequestURI()
	pr, pw := io.Pipe()
	w := &streamWriter{header: http.Header{}, body: pw, started: make(chan struct{}), done: ctx.Done()}
	go func() {
		defer cancel()
		defer func() {
			if r := recover(); r != nil {
				w.fail(fmt.Errorf("serving %s %s in-process: panic: %v", req.Method, req.URL.Path, r))
				return
			}
			w.WriteHeader(http.StatusOK)
			pw.Close()
		}()
		(*h).ServeHTTP(w, served)
	}()
	<-w.started
	if w.err != nil {
		return nil, w.err
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &streamBody{PipeReader: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// streamWriter is the handler's side of an in-process response: the status
// and headers are handed over at WriteHeader, the body through a pipe.
type streamWriter struct {
	header http.Header
	body   *io.PipeWriter
	// done is closed when the client has gone or the handler returned.
	done <-chan struct{}

	once    sync.Once
	started chan struct{}
	status  int
	sent    http.Header
	err     error
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.started)
	})
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush has nothing to do: the pipe hands each write to the reader.
func (w *streamWriter) Flush() { w.WriteHeader(http.StatusOK) }

// CloseNotify is there because the apiserver's response writer wrappers
// offer Flush (which a watch needs) only on writers that also have it, as
// net/http's do.
func (w *streamWriter) CloseNotify() <-chan bool {
	gone := make(chan bool, 1)
	go func() {
		<-w.done
		gone <- true
	}()
	return gone
}

// fail ends a response that failed before or while it was written: as an
// error of the round trip if nothing was sent, else as an error of the body.
func (w *streamWriter) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.started)
	})
	w.body.CloseWithError(err)
}

// streamBody stops the handler when the client is done with the response.
type streamBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *streamBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// namespaceAdmission is the admission the map's request handlers run, as
// the server's run NamespaceLifecycle, and as the stores check a write
// (stores.checkNamespace): a namespaced create or update needs its
// namespace, read through the map's namespaces path, and a create one
// that is not being deleted.
type namespaceAdmission struct{ m *Map }

func (namespaceAdmission) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

func (a namespaceAdmission) Validate(ctx context.Context, attrs admission.Attributes, _ admission.ObjectInterfaces) error {
	// The handles are built after the handlers that run this.
	h := a.m.Handles["namespaces"]
	if attrs.GetNamespace() == "" || attrs.GetKind().GroupKind() == api.Kind("Namespace") || h == nil {
		return nil
	}
	getter, ok := h.Storage.(rest.Getter)
	if !ok {
		return nil
	}
	// A request of its own, for the namespace: a NotFound names it.
	ctx = genericapirequest.WithRequestInfo(genericapirequest.WithNamespace(ctx, ""), &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "get", APIVersion: "v1", Resource: "namespaces", Name: attrs.GetNamespace()})
	obj, err := getter.Get(ctx, attrs.GetNamespace(), &metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ns, ok := obj.(*api.Namespace); ok && attrs.GetOperation() == admission.Create && ns.Status.Phase == api.NamespaceTerminating {
		return apierrors.NewForbidden(attrs.GetResource().GroupResource(), attrs.GetName(),
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
	}
	return nil
}

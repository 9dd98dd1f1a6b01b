package wiring

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"

	"github.com/regctl/regctl/internal/gocode"
	"github.com/regctl/regctl/internal/routetable"
)

// Path is how one path of the map is wired: the server's decisions in the
// order it makes them, a step each.
type Path struct {
	Path  string `json:"path"`
	Steps []Step `json:"steps"`
}

// Step is one stage of the server's chain: the provider, the REST storage,
// the store, its strategies, CompleteWithOptions and the getter, the
// decorator, the etcd3 store, the HTTP routes.
type Step struct {
	Step      string     `json:"step"`
	Decisions []Decision `json:"decisions"`
}

// Decision is one value the server's code decided; for code, its Go name
// and where it is defined.
type Decision struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	Code  string `json:"code,omitempty"`
	At    string `json:"at,omitempty"`
}

func value(name, v string) Decision { return Decision{Name: name, Value: v} }

func code(name, v string, loc gocode.Location) Decision {
	return Decision{Name: name, Value: v, Code: loc.Name, At: loc.Where()}
}

// Describe is the wiring of one path; http are its HTTP routes (those the
// installer gives it), subresources the paths that share its resource.
func Describe(w Of, subresources []string, http []routetable.HTTPRoute) Path {
	r := w.Route
	out := Path{Path: r.Path}
	path := Step{Step: "path", Decisions: []Decision{
		value("apiVersion", r.APIVersion()), value("kind", orNone(r.Kind)), value("scope", orNone(r.Scope)),
		value("verbs", orNone(strings.Join(r.Verbs, ","))), value("store", storeKind(r)),
	}}
	if r.ProxiedTo != "" {
		path.Decisions = append(path.Decisions, value("proxied to", r.ProxiedTo))
	}
	out.Steps = append(out.Steps, path, providerStep(w))
	if w.Storage != nil {
		out.Steps = append(out.Steps, restStorageStep(w))
	}
	if w.Store == nil {
		return out.withRoutes(subresources, http)
	}
	out.Steps = append(out.Steps, storeStep(w))
	out.Steps = append(out.Steps, strategySteps(w.Store)...)
	out.Steps = append(out.Steps, optionsStep(w), decoratorStep(w), etcdStep(w))
	return out.withRoutes(subresources, http)
}

func storeKind(r routetable.Route) string {
	if r.SharesWith != "" {
		return r.Store + ", with " + r.SharesWith
	}
	return r.Store
}

func (p Path) withRoutes(subresources []string, http []routetable.HTTPRoute) Path {
	if len(subresources) > 0 {
		s := Step{Step: "subresources"}
		for _, sub := range subresources {
			s.Decisions = append(s.Decisions, value(sub, ""))
		}
		p.Steps = append(p.Steps, s)
	}
	if len(http) > 0 {
		s := Step{Step: "HTTP routes (InstallREST)"}
		for _, h := range http {
			s.Decisions = append(s.Decisions, value(h.Method+" "+h.Path, h.Action))
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

func providerStep(w Of) Step {
	s := Step{Step: "storage provider"}
	p := w.Provider
	switch {
	case p.Value == nil:
		s.Decisions = append(s.Decisions, value("provider", "<none>"))
	case p.Method == "":
		s.Decisions = append(s.Decisions, code("provider", "", gocode.Func(p.Value)))
	default:
		loc, _ := gocode.Method(p.Value, p.Method)
		s.Decisions = append(s.Decisions, code("provider", gocode.TypeName(p.Value), loc))
	}
	return s
}

func restStorageStep(w Of) Step {
	s := Step{Step: "REST storage", Decisions: []Decision{value("type", w.Route.Storage)}}
	if w.Store != nil {
		if c := constructor(w.Store); c != "" {
			s.Decisions = append(s.Decisions, code("constructor", "", gocode.Named(c)))
		}
	}
	return s
}

// storeStep is the genericregistry.Store: each field as the registry set
// it or CompleteWithOptions defaulted it.
func storeStep(w Of) Step {
	st := w.Store
	s := Step{Step: "genericregistry.Store"}
	s.Decisions = append(s.Decisions,
		value("DefaultQualifiedResource", st.DefaultQualifiedResource.String()),
		value("SingularQualifiedResource", st.SingularQualifiedResource.String()))
	for _, f := range storeFuncs(st) {
		v := ""
		switch f.name {
		case "NewFunc":
			v = typeOf(st.NewFunc)
		case "NewListFunc":
			v = typeOf(st.NewListFunc)
		case "KeyRootFunc":
			v = keyPattern(w, true)
		case "KeyFunc":
			v = keyPattern(w, false)
		case "PredicateFunc":
			if w.Found && w.Decision.Call != nil {
				fields, err := selectableFields(st, w.Decision.Call)
				v = "fields: " + strings.Join(fields, ",")
				if err != nil {
					v = "fields: " + err.Error()
				}
			}
		}
		s.Decisions = append(s.Decisions, code(f.name, v, gocode.Func(f.fn)))
	}
	if w.Found && w.Decision.Call != nil && w.Decision.Call.AttrFunc != nil {
		s.Decisions = append(s.Decisions, code("AttrFunc (StoreOptions)", "", gocode.Func(w.Decision.Call.AttrFunc)))
	}
	s.Decisions = append(s.Decisions,
		value("EnableGarbageCollection", fmtBool(st.EnableGarbageCollection)),
		value("DeleteCollectionWorkers", fmt.Sprint(st.DeleteCollectionWorkers)),
		value("ReturnDeletedObject", fmtBool(st.ReturnDeletedObject)),
		typed("TableConvertor", st.TableConvertor),
		value("StorageVersioner", versioner(st.StorageVersioner)))
	return s
}

// typed is an interface field: its dynamic type.
func typed(name string, v any) Decision {
	return value(name, orNone(gocode.TypeName(nilIfNil(v))))
}

// versioner is a GroupVersioner as it identifies itself.
func versioner(v runtime.GroupVersioner) string {
	if nilIfNil(v) == nil {
		return "<none>"
	}
	return v.Identifier()
}

// strategySteps are the store's strategies, one step per distinct
// object, naming the roles it has and where each of its methods is.
func strategySteps(st *genericregistry.Store) []Step {
	var out []Step
	for _, v := range strategies(st) {
		var named []string
		for _, r := range roles {
			if o := r.get(st); o != nil && same(o, v) {
				named = append(named, r.name)
			}
		}
		s := Step{Step: "strategy (" + strings.Join(named, ", ") + ")", Decisions: []Decision{value("type", gocode.TypeName(v))}}
		for _, m := range methods(v) {
			loc, _ := gocode.Method(v, m)
			s.Decisions = append(s.Decisions, code(m, "", loc))
		}
		out = append(out, s)
	}
	return out
}

// optionsStep is what the RESTOptionsGetter returned and
// CompleteWithOptions took from it.
func optionsStep(w Of) Step {
	s := Step{Step: "CompleteWithOptions and RESTOptionsGetter"}
	if !w.Found {
		return s
	}
	d, opts := w.Decision, w.Decision.Server
	cfg := opts.StorageConfig
	getter, _ := gocode.Method(d.Getter, "GetRESTOptions")
	complete, _ := gocode.Method(w.Store, "CompleteWithOptions")
	s.Decisions = []Decision{
		// CompleteWithOptions asks the getter.
		code("CompleteWithOptions", "", complete),
		code("RESTOptionsGetter", gocode.TypeName(d.Getter), getter),
		value("ResourcePrefix", opts.ResourcePrefix),
		value("StorageConfig.Prefix", cfg.Prefix),
		value("StorageConfig.Codec", gocode.TypeName(cfg.Codec)),
		value("media type", d.MediaType),
		value("storage version", d.StorageVersion),
		value("StorageConfig.EncodeVersioner", versioner(cfg.EncodeVersioner)),
		value("StorageConfig.Transformer", transformer(d.Encryption, cfg.Transformer)),
		value("transformer reads with", orNone(w.Readers)),
		value("etcd servers", orNone(strings.Join(d.EtcdServers, ","))),
		value("EnableGarbageCollection", fmtBool(opts.EnableGarbageCollection)),
		value("DeleteCollectionWorkers", fmt.Sprint(opts.DeleteCollectionWorkers)),
		value("CountMetricPollPeriod", w.Loops.CountMetricPollPeriod.String()+" (regctl runs none)"),
		value("StorageConfig.CompactionInterval", w.Loops.CompactionInterval.String()+" (regctl runs none)"),
		value("StorageConfig.DBMetricPollInterval", w.Loops.DBMetricPollInterval.String()+" (regctl runs none)"),
	}
	return s
}

// transformer is the provider that writes the resource's values, and the
// transformer's type.
func transformer(writer string, t any) string {
	if name := gocode.TypeName(nilIfNil(t)); name != "" {
		return writer + " (" + name + ")"
	}
	return writer
}

// decoratorStep is the storage decorator the getter picked, why, and what
// the store handed it.
func decoratorStep(w Of) Step {
	s := Step{Step: "decorator"}
	if !w.Found {
		return s
	}
	d := w.Decision
	s.Decisions = append(s.Decisions, code("decorator", d.Decorator+": "+w.WatchCache, gocode.Func(d.Server.Decorator)))
	if d.Decorator == routetable.DecoratorCacher {
		s.Decisions = append(s.Decisions, code("watch cache", "", gocode.Func(cacher.NewCacherFromConfig)))
	}
	if c := d.Call; c != nil {
		s.Decisions = append(s.Decisions, code("KeyFunc", "", gocode.Func(c.KeyFunc)))
		for _, name := range sortedKeys(c.Triggers) {
			s.Decisions = append(s.Decisions, code("trigger "+name, "", gocode.Func(c.Triggers[name])))
		}
		if c.Indexers != nil {
			for _, name := range sortedKeys(*c.Indexers) {
				s.Decisions = append(s.Decisions, code("indexer "+name, "", gocode.Func((*c.Indexers)[name])))
			}
		}
	}
	return s
}

// etcdStep is the etcd3 store under the decorator, as
// generic.NewRawStorage makes it through the storage factory.
func etcdStep(w Of) Step {
	s := Step{Step: "etcd3 store", Decisions: []Decision{
		code("NewRawStorage", "", gocode.Func(generic.NewRawStorage)),
		code("factory.Create", "", gocode.Func(factory.Create)),
		code("etcd3.New", "", gocode.Func(etcd3.New)),
	}}
	if w.Store.KeyFunc != nil {
		s.Decisions = append(s.Decisions, value("keys", keyPattern(w, false)))
	}
	return s
}

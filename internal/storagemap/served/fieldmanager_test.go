package served

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/registry/rest"
	appsinternal "k8s.io/kubernetes/pkg/apis/apps"
	api "k8s.io/kubernetes/pkg/apis/core"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// TestFieldManagersAreBuiltOnTheGroupsModels: installing builds no
// models; a write's field manager is built on the group's OpenAPI models,
// once per group, so that it tracks a list's items by their keys as the
// server's does.
func TestFieldManagersAreBuiltOnTheGroupsModels(t *testing.T) {
	v, info, _ := appsV1(t)
	models := &Models{}
	in := NewInstaller(models, nil, nil)
	if err := in.Install(&v, nil); err != nil {
		t.Fatal(err)
	}
	if len(models.byInfo) != 0 {
		t.Fatal("installing built the group's models")
	}
	kind := appsv1.SchemeGroupVersion.WithKind("Deployment")
	fm, err := GroupFieldManager(models, info, kind, "", v.Stores["deployments"])
	if err != nil {
		t.Fatal(err)
	}
	first, _ := models.ForGroup(info)
	second, _ := models.ForGroup(info)
	if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(second).UnsafePointer() || first["io.k8s.api.apps.v1.Deployment"] == nil {
		t.Errorf("the group's models: built twice, or without Deployment (%d models)", len(first))
	}

	obj := &appsinternal.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsinternal.DeploymentSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{Containers: []api.Container{{Name: "web", Image: "nginx"}}}}}}
	out, err := fm.Update(&appsv1.Deployment{}, obj, "regctl")
	if err != nil {
		t.Fatal(err)
	}
	managed := out.(metav1.Object).GetManagedFields()
	if len(managed) != 1 || managed[0].Manager != "regctl" || managed[0].Operation != metav1.ManagedFieldsOperationUpdate ||
		managed[0].FieldsV1 == nil || !strings.Contains(string(managed[0].FieldsV1.Raw), `"k:{\"name\":\"web\"}"`) {
		t.Errorf("managed fields %+v, want regctl's update, the container by its name", managed)
	}

	if _, err := GroupFieldManager(models, info, kind, "", bothResets{}); err == nil || !strings.Contains(err.Error(), "may not implement both ResetFieldsStrategy and ResetFieldsFilterStrategy") {
		t.Errorf("a storage with both kinds of reset fields: %v", err)
	}

	// The installed handlers' converter builds the models when first used.
	tc := in.typeConverter(info)
	if tc != in.typeConverter(info) {
		t.Error("a type converter per installed version, want one per group")
	}
	models = &Models{}
	in = NewInstaller(models, nil, nil)
	typed := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}}
	if _, err := in.typeConverter(info).ObjectToTyped(typed); err != nil || models.byInfo[info] == nil {
		t.Errorf("the converter's first use: %v, models built: %v", err, models.byInfo[info] != nil)
	}
}

// bothResets is a storage that says which fields it resets both ways.
type bothResets struct{ rest.Storage }

func (bothResets) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set { return nil }

func (bothResets) GetResetFieldsFilter() map[fieldpath.APIVersion]fieldpath.Filter { return nil }

// TestATypeConverterThatCannotBeBuiltFailsEachUse: tried once, its error
// is every use's.
func TestATypeConverterThatCannotBeBuiltFailsEachUse(t *testing.T) {
	builds, broken := 0, errors.New("no models")
	l := &lazyTypeConverter{build: func() (managedfields.TypeConverter, error) {
		builds++
		return nil, broken
	}}
	if _, err := l.ObjectToTyped(&appsv1.Deployment{}); !errors.Is(err, broken) {
		t.Errorf("ObjectToTyped: %v", err)
	}
	if _, err := l.TypedToObject(nil); !errors.Is(err, broken) {
		t.Errorf("TypedToObject: %v", err)
	}
	if builds != 1 {
		t.Errorf("built %d times, want once", builds)
	}
}

package stores

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnreadableTellsDataFromAnEtcdThatDidNotAnswer(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"undecodable value", errors.New("proto: cannot parse invalid wire-format data"), true},
		{"undecryptable value", apierrors.NewInternalError(errors.New("no matching prefix found")), true},
		{"request timeout", fmt.Errorf("etcd did not answer within 5s: %w", context.DeadlineExceeded), false},
		{"cancelled", context.Canceled, false},
		{"etcd unavailable", grpcstatus.Error(codes.Unavailable, "etcdserver: no leader"), false},
		{"server timeout", apierrors.NewServerTimeout(pods, "list", 2), false},
		{"not found", apierrors.NewNotFound(pods, "web"), false},
		{"invalid request", apierrors.NewBadRequest("bad selector"), false},
	} {
		if got := unreadable(context.Background(), tc.err); got != tc.want {
			t.Errorf("%s: unreadable = %v, want %v", tc.name, got, tc.want)
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if unreadable(done, errors.New("anything")) {
		t.Error("an error after the command was cancelled counted as bad data")
	}
}

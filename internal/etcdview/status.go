package etcdview

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MemberStatus is what one member of etcd says of itself, asked at one of
// the client's endpoints: the figures `etcdctl endpoint status` prints.
type MemberStatus struct {
	Endpoint string `json:"endpoint"`
	// ID is the member's ID in hex, as etcdctl and etcd's logs write it;
	// empty when the member did not answer.
	ID             string `json:"id,omitempty"`
	Version        string `json:"version,omitempty"`
	StorageVersion string `json:"storageVersion,omitempty"`
	// DBSize is the size of the member's database file (its bbolt file's
	// pages); DBSizeInUse the part of it that holds data, the rest being
	// free pages that only a defragmentation gives back to the
	// filesystem.
	DBSize      int64 `json:"dbSize"`
	DBSizeInUse int64 `json:"dbSizeInUse"`
	// Quota is the member's --quota-backend-bytes, which DBSize may not
	// pass: 0 when the member does not say (etcd before 3.6).
	Quota            int64  `json:"quota,omitempty"`
	Leader           bool   `json:"leader"`
	Learner          bool   `json:"learner,omitempty"`
	RaftTerm         uint64 `json:"raftTerm,omitempty"`
	RaftIndex        uint64 `json:"raftIndex,omitempty"`
	RaftAppliedIndex uint64 `json:"raftAppliedIndex,omitempty"`
	// Revision is the keyspace's revision as the member applied it.
	Revision int64 `json:"revision,omitempty"`
	// Errors are what the member reports wrong with itself (a corrupt
	// alarm, ...).
	Errors []string `json:"errors,omitempty"`
	// Error is why the endpoint did not answer.
	Error string `json:"error,omitempty"`
}

// MemberStatuses asks each endpoint of c for its member's status, as
// `etcdctl endpoint status` does, in the order of the client's endpoints.
// An endpoint that does not answer is listed with why; when none answers
// it is an error. A status request reads and writes nothing of the
// keyspace.
func MemberStatuses(ctx context.Context, c *clientv3.Client) ([]MemberStatus, error) {
	var out []MemberStatus
	var failed []error
	for _, ep := range c.Endpoints() {
		st, err := memberStatus(ctx, c, ep)
		if err != nil {
			failed = append(failed, err)
			st = MemberStatus{Endpoint: ep, Error: err.Error()}
		}
		out = append(out, st)
	}
	if len(out) > 0 && len(failed) == len(out) {
		return nil, fmt.Errorf("reading the status of etcd's members: %w", errors.Join(failed...))
	}
	return out, nil
}

func memberStatus(ctx context.Context, c *clientv3.Client, ep string) (MemberStatus, error) {
	timeout := requestTimeout(c)
	ctx, cancel := WithRequestTimeout(ctx, timeout)
	defer cancel()
	answer, err := c.Status(ctx, ep)
	if err != nil {
		return MemberStatus{}, RequestError(ctx, timeout, fmt.Errorf("%s: %w", ep, err))
	}
	resp := (*etcdserverpb.StatusResponse)(answer)
	h := resp.GetHeader()
	return MemberStatus{
		Endpoint:         ep,
		ID:               MemberID(h.GetMemberId()),
		Version:          resp.GetVersion(),
		StorageVersion:   resp.GetStorageVersion(),
		DBSize:           resp.GetDbSize(),
		DBSizeInUse:      resp.GetDbSizeInUse(),
		Quota:            resp.GetDbSizeQuota(),
		Leader:           h.GetMemberId() != 0 && resp.GetLeader() == h.GetMemberId(),
		Learner:          resp.GetIsLearner(),
		RaftTerm:         resp.GetRaftTerm(),
		RaftIndex:        resp.GetRaftIndex(),
		RaftAppliedIndex: resp.GetRaftAppliedIndex(),
		Revision:         h.GetRevision(),
		Errors:           resp.GetErrors(),
	}, nil
}

// MemberID is a member's ID as etcd writes it: hex.
func MemberID(id uint64) string { return strconv.FormatUint(id, 16) }

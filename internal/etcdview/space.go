package etcdview

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// NoSpace tells whether err is etcd refusing a write because its NOSPACE
// alarm is raised: its database reached its quota
// (--quota-backend-bytes). Until space is freed and the alarm disarmed,
// etcd refuses every write but deletes, each alike.
func NoSpace(err error) bool {
	return err != nil && (errors.Is(err, rpctypes.ErrGRPCNoSpace) || errors.Is(err, rpctypes.ErrNoSpace) ||
		strings.Contains(err.Error(), rpctypes.ErrGRPCNoSpace.Error()))
}

// SpaceError is the one error a command gives for the writes etcd refused
// for want of space: the way out, as etcd's maintenance guide has it.
type SpaceError struct{ Err error }

func (e *SpaceError) Error() string {
	return fmt.Sprintf("etcd is out of space, its NOSPACE alarm raised (%s): free space by compacting its history and defragmenting each member, then disarm the alarm (etcdctl compact, etcdctl defrag, etcdctl alarm disarm), or delete objects with `regctl delete`, which etcd takes under the alarm; `regctl space` shows where the space went", e.Err)
}

func (e *SpaceError) Unwrap() error { return e.Err }

// Alarm is an alarm a member of etcd raised.
type Alarm struct {
	// Member is the ID of the member that raised it, in hex.
	Member string `json:"member"`
	// Alarm is its kind: NOSPACE (the database reached its quota),
	// CORRUPT (the member's data differs from the others').
	Alarm string `json:"alarm"`
}

func (a Alarm) String() string { return fmt.Sprintf("%s on member %s", a.Alarm, a.Member) }

// alarmLine is an alarm as a member's status lists it among its errors:
// the AlarmMember message in protobuf's text format
// ("memberID:10276657743932975437 alarm:NOSPACE"), whose spacing the
// protobuf library varies on purpose.
var alarmLine = regexp.MustCompile(`^\s*memberID:\s*(\d+)\s+alarm:\s*([A-Z_]+)\s*$`)

// AlarmsOf are the alarms the members' statuses list, each once, in the
// order first listed. Every member keeps the cluster's alarms, and lists
// them all in its status: reading them there asks nothing of the cluster,
// where `etcdctl alarm list` is a request etcd orders through raft, one
// more entry in its log.
func AlarmsOf(statuses []MemberStatus) []Alarm {
	var out []Alarm
	for _, st := range statuses {
		for _, e := range st.Errors {
			m := alarmLine.FindStringSubmatch(e)
			if m == nil {
				continue
			}
			id, err := strconv.ParseUint(m[1], 10, 64)
			if err != nil {
				continue
			}
			a := Alarm{Member: MemberID(id), Alarm: m[2]}
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// Alarms are the alarms etcd's members have raised ("NOSPACE on member
// 8e9e05c52164694d"), as their statuses list them. A snapshot has none.
func Alarms(ctx context.Context, c *clientv3.Client) ([]string, error) {
	statuses, err := MemberStatuses(ctx, c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range AlarmsOf(statuses) {
		out = append(out, a.String())
	}
	return out, nil
}

package etcdview

import (
	"context"
	"errors"
	"fmt"
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
	return fmt.Sprintf("etcd is out of space, its NOSPACE alarm raised (%s): free space by compacting its history and defragmenting each member, then disarm the alarm (etcdctl compact, etcdctl defrag, etcdctl alarm disarm), or delete objects with `regctl delete`, which etcd takes under the alarm", e.Err)
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

// AlarmList is the alarms etcd's members have raised, in etcd's order,
// as `etcdctl alarm list` prints them. Listing them changes nothing. A
// snapshot answers none: it has no members.
func AlarmList(ctx context.Context, c *clientv3.Client) ([]Alarm, error) {
	ctx, cancel := WithRequestTimeout(ctx, requestTimeout(c))
	defer cancel()
	resp, err := c.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading etcd's alarms: %w", err)
	}
	var out []Alarm
	for _, a := range resp.Alarms {
		out = append(out, Alarm{Member: MemberID(a.MemberID), Alarm: a.Alarm.String()})
	}
	return out, nil
}

// Alarms are the alarms etcd's members have raised ("NOSPACE on member
// 8e9e05c52164694d"), in etcd's order. A snapshot has none.
func Alarms(ctx context.Context, c *clientv3.Client) ([]string, error) {
	alarms, err := AlarmList(ctx, c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range alarms {
		out = append(out, a.String())
	}
	return out, nil
}

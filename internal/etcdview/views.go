package etcdview

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// UsageTable is `regctl keys` as a table.
type UsageTable []Usage

func (t UsageTable) Header(bool) []string {
	h := []string{"RESOURCE", "KEY PREFIX", "KEYS", "BYTES"}
	if t.overridden() {
		h = append(h, "ETCD")
	}
	return h
}

func (t UsageTable) Rows(bool) [][]string {
	rows := make([][]string, 0, len(t))
	for _, u := range t {
		row := []string{orNone(u.Resource), u.KeyPrefix, strconv.FormatInt(u.Keys, 10), strconv.FormatInt(u.Bytes, 10)}
		if t.overridden() {
			row = append(row, orNone(strings.Join(u.EtcdServers, ",")))
		}
		rows = append(rows, row)
	}
	return rows
}

// overridden tells whether some resource lives on other etcd servers, which
// then get a column.
func (t UsageTable) overridden() bool {
	for _, u := range t {
		if len(u.EtcdServers) > 0 {
			return true
		}
	}
	return false
}

// KeyInfo says whether a key exists and, if so, etcd's metadata for it.
type KeyInfo struct {
	Key            string `json:"key"`
	Exists         bool   `json:"exists"`
	CreateRevision int64  `json:"createRevision,omitempty"`
	ModRevision    int64  `json:"modRevision,omitempty"`
	Version        int64  `json:"version,omitempty"`
	Lease          string `json:"lease,omitempty"`
	ValueSize      int    `json:"valueSize,omitempty"`
}

// Check reads key's metadata at revision rev (0: now).
func Check(ctx context.Context, c *clientv3.Client, key string, rev int64) (KeyInfo, error) {
	kv, err := ValueAt(ctx, c, key, rev)
	if err != nil || kv == nil {
		return KeyInfo{Key: key}, err
	}
	info := KeyInfo{Key: key, Exists: true, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, ValueSize: len(kv.Value)}
	if kv.Lease != 0 {
		info.Lease = fmt.Sprintf("%x", kv.Lease)
	}
	return info, nil
}

func (KeyInfo) Header(bool) []string {
	return []string{"KEY", "EXISTS", "CREATE REVISION", "MOD REVISION", "VERSION", "LEASE", "VALUE SIZE"}
}

func (k KeyInfo) Rows(bool) [][]string {
	if !k.Exists {
		return [][]string{{k.Key, "false", "", "", "", "", ""}}
	}
	return [][]string{{k.Key, "true", itoa(k.CreateRevision), itoa(k.ModRevision), itoa(k.Version), orNone(k.Lease), strconv.Itoa(k.ValueSize)}}
}

// Fields describes a value for `regctl inspect`.
func (v *ValueInfo) Fields() [][2]string {
	lease := "<none>"
	if v.Lease != "" {
		lease = v.Lease
		if v.LeaseTTL != nil {
			lease += fmt.Sprintf(" (%ds left)", *v.LeaseTTL)
		}
	}
	f := [][2]string{
		{"Key", v.Key},
		{"Create revision", itoa(v.CreateRevision)},
		{"Mod revision", itoa(v.ModRevision)},
		{"Version", itoa(v.Version)},
		{"Lease", lease},
		{"Value size", strconv.Itoa(v.ValueSize) + " bytes"},
		{"Encryption", v.Encryption},
	}
	if v.KMSKeyID != "" {
		f = append(f, [2]string{"KMS key ID", v.KMSKeyID})
	}
	f = append(f,
		[2]string{"Encoding", v.Encoding},
		[2]string{"Stored as", orNone(joinNonEmpty(v.StoredAPIVersion, v.StoredKind))},
	)
	if v.Problem != "" {
		f = append(f, [2]string{"Problem", v.Problem})
	}
	return f
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func joinNonEmpty(apiVersion, kind string) string {
	if apiVersion == "" && kind == "" {
		return ""
	}
	return apiVersion + ", Kind=" + kind
}

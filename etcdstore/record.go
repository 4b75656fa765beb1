package etcdstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/nodeid"
)

var _ nodeid.Recorder = (*Store)(nil)

// Record implements nodeid.Recorder.
func (s *Store) Record(ctx context.Context) (nodeid.LayoutID, error) {
	resp, err := s.cli.Get(ctx, s.layoutKey())
	if err != nil {
		return nodeid.LayoutID{}, fmt.Errorf("read namespace record: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return nodeid.LayoutID{}, nil
	}
	fp, desc, _ := strings.Cut(string(resp.Kvs[0].Value), "\n")
	return nodeid.LayoutID{Fingerprint: fp, Description: desc}, nil
}

// Rerecord implements nodeid.Recorder: a compare-and-swap of the layout
// key. Every claim and renewal compares the layout key's revision in its
// own transaction, so none taken under the old record succeeds after it.
func (s *Store) Rerecord(ctx context.Context, old, new nodeid.LayoutID) error {
	if err := new.Check(); err != nil {
		return err
	}
	cmp := clientv3.Compare(clientv3.CreateRevision(s.layoutKey()), "=", 0)
	if old.Fingerprint != "" {
		cmp = clientv3.Compare(clientv3.Value(s.layoutKey()), "=", old.Fingerprint+"\n"+old.Description)
	}
	resp, err := s.cli.Txn(ctx).If(cmp).
		Then(clientv3.OpPut(s.layoutKey(), new.Fingerprint+"\n"+new.Description)).
		Else(clientv3.OpGet(s.layoutKey())).
		Commit()
	if err != nil {
		return fmt.Errorf("rerecord namespace: %w", err)
	}
	if resp.Succeeded {
		return nil
	}
	var stored nodeid.LayoutID
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		fp, desc, _ := strings.Cut(string(kvs[0].Value), "\n")
		stored = nodeid.LayoutID{Fingerprint: fp, Description: desc}
	}
	return &nodeid.RecordChangedError{Stored: stored}
}

// HWMs implements nodeid.Recorder.
func (s *Store) HWMs(ctx context.Context) (map[uint64]int64, error) {
	resp, err := s.cli.Get(ctx, s.prefix+"hwm/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("read HWMs: %w", err)
	}
	out := map[uint64]int64{}
	for _, kv := range resp.Kvs {
		n, err := strconv.ParseUint(strings.TrimPrefix(string(kv.Key), s.prefix+"hwm/"), 10, 64)
		if err != nil {
			continue
		}
		hwm, err := strconv.ParseInt(string(kv.Value), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read HWM of node %d: corrupt value %q", n, kv.Value)
		}
		out[n] = hwm
	}
	return out, nil
}

// Identity implements nodeid.Recorder: the cluster's ID, which a cluster
// restored from a snapshot gets anew (etcdutl snapshot restore) unless
// it is restored with the same initial cluster and token.
func (s *Store) Identity(ctx context.Context) (string, error) {
	resp, err := s.cli.Get(ctx, s.layoutKey(), clientv3.WithCountOnly())
	if err != nil {
		return "", fmt.Errorf("read the cluster's ID: %w", err)
	}
	return "etcd:" + strconv.FormatUint(resp.Header.ClusterId, 16), nil
}

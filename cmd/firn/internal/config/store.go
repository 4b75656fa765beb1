package config

import "github.com/firn-id/firn/store"

// StoreSettings are the registry, ZooKeeper and segments sections as the
// store table (package store) reads them: the one translation of the
// configuration's store settings. The caller adds what it reads from
// the environment (the digest variable, the user's directories).
func StoreSettings(r Registry, z ZooKeeper, sg Segments) store.Settings {
	return store.Settings{Store: r.Store, DataDir: r.DataDir, Endpoints: r.Endpoints, DSN: r.DSN, Namespace: r.Namespace,
		Table: r.Table, DialTimeout: r.DialTimeout, Flags: flagOf,
		ZooKeeper: store.ZooKeeper{SessionTimeout: z.SessionTimeout, RetryPause: z.RetryPause, DigestFile: z.DigestFile,
			DigestVar: DigestVar, TLSCA: z.TLSCA, TLSCert: z.TLSCert, TLSKey: z.TLSKey},
		Segments: store.Segments{Format: sg.Format, Table: sg.Table, Set: sg.Set, TokenTable: sg.TokenTable}}
}

package nodeid_test

import (
	"net"
	"testing"

	"github.com/firn-id/firn/nodeid"
)

func TestDeriveFromIP(t *testing.T) {
	tests := []struct {
		name    string
		ip      string
		bits    int
		want    uint64
		wantErr bool
	}{
		{name: "sonyflake's 16 bits", ip: "10.0.1.5", bits: 16, want: 1<<8 | 5},
		{name: "10 bits", ip: "192.168.3.7", bits: 10, want: 3<<8 | 7},
		{name: "all 32", ip: "172.16.0.1", bits: 32, want: 172<<24 | 16<<16 | 1},
		{name: "IPv6", ip: "fd00::1", bits: 10, wantErr: true},
		{name: "no bits", ip: "10.0.0.1", bits: 0, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nodeid.DeriveFromIP(net.ParseIP(tt.ip), tt.bits)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Fatalf("DeriveFromIP(%s, %d) = %d, %v; want %d (error %v)", tt.ip, tt.bits, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

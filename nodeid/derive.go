package nodeid

import (
	"errors"
	"fmt"
	"net"
)

// ErrNoPrivateIP is returned by HostIP when the host has no private IPv4
// address to derive a node from.
var ErrNoPrivateIP = errors.New("nodeid: no private IPv4 address to derive a node ID from")

// HostIP returns the host's first private IPv4 address (10/8, 172.16/12,
// 192.168/16), as Sonyflake does.
func HostIP() (net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip := n.IP.To4(); ip != nil && ip.IsPrivate() {
				return ip, nil
			}
		}
	}
	return nil, ErrNoPrivateIP
}

// DeriveFromIP returns the node ID made of the low nodeBits bits of ip.
//
// Nothing can see a second holder of a derived node: two hosts whose
// addresses agree in those bits (10.0.1.5 and 10.1.1.5 with 16 bits) issue
// the same IDs. It is the operator's promise, which is why configuration
// must acknowledge it (accept_collision_risk).
func DeriveFromIP(ip net.IP, nodeBits int) (uint64, error) {
	if nodeBits < 1 || nodeBits > 32 {
		return 0, fmt.Errorf("nodeid: cannot derive a node of %d bits from an IPv4 address (want 1..32)", nodeBits)
	}
	v4 := ip.To4()
	if v4 == nil {
		return 0, fmt.Errorf("nodeid: %s is not an IPv4 address", ip)
	}
	v := uint64(v4[0])<<24 | uint64(v4[1])<<16 | uint64(v4[2])<<8 | uint64(v4[3])
	return v & (1<<uint(nodeBits) - 1), nil
}

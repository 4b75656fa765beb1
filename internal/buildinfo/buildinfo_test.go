package buildinfo

import (
	"runtime"
	"testing"
)

func TestRead(t *testing.T) {
	i := Read()
	if i.GoVersion != runtime.Version() {
		t.Fatalf("GoVersion = %q, want %q", i.GoVersion, runtime.Version())
	}
	if i.Version == "" || i.Commit == "" {
		t.Fatalf("empty version or commit: %+v", i)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		info Info
		want string
	}{
		{"release", Info{Version: "v1.2.0", Commit: "0123456789abcdef0123", GoVersion: "go1.26.8"}, "firn v1.2.0 (commit 0123456789ab, go1.26.8)"},
		{"modified tree", Info{Version: "(devel)", Commit: "abc", Modified: true, GoVersion: "go1.26.8"}, "firn (devel) (commit abc, modified, go1.26.8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.info.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// Package buildinfo reports which build of firn is running: the module
// version, the VCS commit and the Go version, read once from the binary's
// build information, or from the values `make build` and `make release`
// stamp with -ldflags -X (release builds run with -buildvcs=false, so their
// build information holds no commit).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Info describes one build.
type Info struct {
	Version   string // module version, "(devel)" for a build from a work tree
	Commit    string // VCS revision, NoCommit when the build recorded none
	Modified  bool   // the work tree had changes the commit does not hold
	GoVersion string
}

// String returns one line, such as "firn v1.2.0 (commit 0123abcd, go1.26.8)".
func (i Info) String() string {
	commit := i.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if i.Modified {
		commit += ", modified"
	}
	return fmt.Sprintf("firn %s (commit %s, %s)", i.Version, commit, i.GoVersion)
}

// NoCommit is Info.Commit of a build that recorded no VCS revision: go
// build records none in a git worktree or with -buildvcs=false, and make
// build and make release stamp one.
const NoCommit = "unknown"

// Set by `make build` and `make release`: -ldflags "-X …/buildinfo.version=v1.2.0 -X …/buildinfo.commit=…".
var (
	version string
	commit  string
)

var read = sync.OnceValue(func() Info {
	info := fromBuild()
	if version != "" {
		info.Version = version
	}
	if commit != "" {
		info.Commit, info.Modified = commit, false
	}
	return info
})

func fromBuild() Info {
	info := Info{Version: "(devel)", Commit: NoCommit, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// Read returns the running binary's build information.
func Read() Info { return read() }

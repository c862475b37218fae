// Package version says which loupe this is. A release build sets Version and
// Commit with -ldflags "-X"; a build from a checkout or by go install leaves
// Version "dev" and takes the commit from the VCS stamp Go records in the
// binary (runtime/debug.ReadBuildInfo).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version and Commit are set at link time by make dist:
//
//	-ldflags "-X github.com/loupe-dev/loupe/internal/version.Version=v1.2.3 -X github.com/loupe-dev/loupe/internal/version.Commit=abc123"
var (
	Version = "dev"
	Commit  = ""
)

// Info is what `loupe version` prints.
type Info struct {
	Version string
	// Commit is the source revision, "" when unknown; Modified is set when
	// the checkout it was built from had uncommitted changes.
	Commit   string
	Modified bool
	Go       string
}

// Get returns this binary's version, commit and Go version.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Go: runtime.Version()}
	if info.Commit != "" {
		return info
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
		// go install module@version records no VCS stamp, only the
		// module's version; a checkout's build stays "dev".
		if info.Version == "dev" && info.Commit == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
	}
	return info
}

// String is the one line `loupe --version` prints after "loupe version ".
func (i Info) String() string {
	commit := i.Commit
	if commit == "" {
		commit = "unknown"
	}
	if i.Modified {
		commit += "-modified"
	}
	return fmt.Sprintf("%s (commit %s, %s)", i.Version, commit, i.Go)
}

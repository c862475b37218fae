// Command dist builds loupe's release: for each platform a static binary
// (the console embedded), archived as loupe-VERSION-OS-ARCH.tar.gz (.zip for
// Windows), the npm packages (@loupe-dev/loupe and one package per platform
// holding its binary, packed with npm pack), and SHA256SUMS over all of them.
//
// The same commit gives the same bytes: the binaries are built with
// -trimpath, without cgo, VCS stamp or build id, and the archives list their
// files in a fixed order with a fixed time, owner and mode. `make dist` runs
// it; `go run ./internal/dist -platforms host` builds only this machine's.
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Scope is the npm scope of the packages.
const Scope = "@loupe-dev"

// A platform is one GOOS/GOARCH pair and its names in npm (process.platform,
// process.arch).
type platform struct{ goos, goarch, npmOS, npmCPU string }

var platforms = []platform{
	{"linux", "amd64", "linux", "x64"},
	{"linux", "arm64", "linux", "arm64"},
	{"darwin", "amd64", "darwin", "x64"},
	{"darwin", "arm64", "darwin", "arm64"},
	{"windows", "amd64", "win32", "x64"},
	{"windows", "arm64", "win32", "arm64"},
}

func (p platform) exe() string {
	if p.goos == "windows" {
		return "loupe.exe"
	}
	return "loupe"
}

// npmName is the platform package's name, e.g. @loupe-dev/loupe-linux-x64.
func (p platform) npmName() string { return Scope + "/loupe-" + p.npmOS + "-" + p.npmCPU }

type options struct {
	out, version, commit, only string
	date                       time.Time
}

func main() {
	var o options
	var epoch int64
	flag.StringVar(&o.out, "out", "dist", "folder to write the release into (emptied first)")
	flag.StringVar(&o.version, "version", "0.0.0-dev", "the version, semver without a leading v (npm needs one)")
	flag.StringVar(&o.commit, "commit", "", "the commit, recorded in the binaries")
	flag.Int64Var(&epoch, "date", 0, "the archives' file time, in Unix seconds (make dist: the commit's time)")
	flag.StringVar(&o.only, "platforms", "all", `"all", or "host" for this machine's platform only`)
	flag.Parse()
	o.date = time.Unix(epoch, 0).UTC()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	targets := platforms
	if o.only == "host" {
		targets = slices.DeleteFunc(slices.Clone(platforms), func(p platform) bool {
			return p.goos != runtime.GOOS || p.goarch != runtime.GOARCH
		})
		if len(targets) == 0 {
			return fmt.Errorf("no release platform is %s/%s", runtime.GOOS, runtime.GOARCH)
		}
	} else if o.only != "all" {
		return fmt.Errorf("-platforms %q: want all or host", o.only)
	}
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	npmDir := filepath.Join(o.out, "npm")
	if err := os.MkdirAll(npmDir, 0o755); err != nil {
		return err
	}
	var artifacts []string
	for _, p := range targets {
		pkg := filepath.Join(o.out, "build", "loupe-"+p.npmOS+"-"+p.npmCPU)
		bin := filepath.Join(pkg, "bin", p.exe())
		if err := build(o, p, bin); err != nil {
			return err
		}
		archive, err := archiveBinary(o, p, bin)
		if err != nil {
			return err
		}
		if err := platformPackage(o, p, pkg); err != nil {
			return err
		}
		tgz, err := npmPack(pkg, npmDir)
		if err != nil {
			return err
		}
		artifacts = append(artifacts, archive, tgz)
	}
	pkg := filepath.Join(o.out, "build", "loupe")
	if err := mainPackage(o, pkg); err != nil {
		return err
	}
	tgz, err := npmPack(pkg, npmDir)
	if err != nil {
		return err
	}
	artifacts = append(artifacts, tgz)
	if err := os.RemoveAll(filepath.Join(o.out, "build")); err != nil {
		return err
	}
	return checksums(o.out, artifacts)
}

// build compiles loupe for p into bin.
func build(o options, p platform, bin string) error {
	pkg := "github.com/loupe-dev/loupe/internal/version"
	ldflags := fmt.Sprintf("-s -w -buildid= -X %s.Version=%s -X %s.Commit=%s", pkg, o.version, pkg, o.commit)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/loupe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.goos, "GOARCH="+p.goarch, "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s/%s: %w", p.goos, p.goarch, err)
	}
	return nil
}

// archiveBinary writes the binary and the README into
// loupe-VERSION-OS-ARCH.tar.gz, or .zip for Windows, and returns its path.
func archiveBinary(o options, p platform, bin string) (string, error) {
	files := []archived{{name: p.exe(), path: bin, mode: 0o755}, {name: "README.md", path: "README.md", mode: 0o644}}
	base := filepath.Join(o.out, fmt.Sprintf("loupe-%s-%s-%s", o.version, p.goos, p.goarch))
	if p.goos == "windows" {
		return base + ".zip", writeZip(base+".zip", files, o.date)
	}
	return base + ".tar.gz", writeTarGz(base+".tar.gz", files, o.date)
}

// archived is a file of an archive: its name there, where it is, its mode.
type archived struct {
	name, path string
	mode       int64
}

func writeTarGz(dst string, files []archived, date time.Time) error {
	return writeArchive(dst, func(w io.Writer) error {
		gz, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		tw := tar.NewWriter(gz)
		for _, f := range files {
			data, err := os.ReadFile(f.path)
			if err != nil {
				return err
			}
			hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(data)), ModTime: date, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	})
}

func writeZip(dst string, files []archived, date time.Time) error {
	return writeArchive(dst, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, f := range files {
			data, err := os.ReadFile(f.path)
			if err != nil {
				return err
			}
			hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: date}
			hdr.SetMode(os.FileMode(f.mode))
			fw, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			if _, err := fw.Write(data); err != nil {
				return err
			}
		}
		return zw.Close()
	})
}

func writeArchive(dst string, fill func(io.Writer) error) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return f.Close()
}

// packageJSON is the part of package.json the packages set.
type packageJSON struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Description          string            `json:"description"`
	Repository           string            `json:"repository"`
	OS                   []string          `json:"os,omitempty"`
	CPU                  []string          `json:"cpu,omitempty"`
	Bin                  map[string]string `json:"bin,omitempty"`
	Files                []string          `json:"files"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
	PreferUnplugged      bool              `json:"preferUnplugged,omitempty"`
}

const repository = "github:loupe-dev/loupe"

// platformPackage writes the package.json of p's npm package beside its
// binary (already in pkg/bin).
func platformPackage(o options, p platform, pkg string) error {
	return writePackage(pkg, packageJSON{
		Name:        p.npmName(),
		Version:     o.version,
		Description: fmt.Sprintf("The loupe binary for %s %s; install %s/loupe, which picks it", p.npmOS, p.npmCPU, Scope),
		Repository:  repository,
		OS:          []string{p.npmOS},
		CPU:         []string{p.npmCPU},
		Files:       []string{"bin/" + p.exe()},
		// Yarn PnP: keep the binary a real file it can execute.
		PreferUnplugged: true,
	})
}

// mainPackage writes @loupe-dev/loupe: the shim that runs the platform
// package's binary, the README, and one optional dependency per platform,
// of which npm installs only the one whose os and cpu match.
func mainPackage(o options, pkg string) error {
	deps := map[string]string{}
	for _, p := range platforms {
		deps[p.npmName()] = o.version
	}
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		return err
	}
	for _, c := range []struct {
		from, to string
		mode     os.FileMode
	}{{"internal/dist/npm/loupe.js", "bin/loupe.js", 0o755}, {"README.md", "README.md", 0o644}} {
		data, err := os.ReadFile(c.from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pkg, c.to), data, c.mode); err != nil {
			return err
		}
	}
	return writePackage(pkg, packageJSON{
		Name:                 Scope + "/loupe",
		Version:              o.version,
		Description:          "Loupe: the Firebase emulators (Firestore, Realtime Database, Auth, Storage, Pub/Sub, Functions) in one binary",
		Repository:           repository,
		Bin:                  map[string]string{"loupe": "bin/loupe.js"},
		Files:                []string{"bin/loupe.js", "README.md"},
		OptionalDependencies: deps,
	})
}

func writePackage(dir string, p packageJSON) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "package.json"), append(data, '\n'), 0o644)
}

// npmPack packs the package in dir into dest and returns the tarball's path.
func npmPack(dir, dest string) (string, error) {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("npm", "pack", "--json", "--pack-destination", abs)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack %s: %w", dir, err)
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return "", fmt.Errorf("npm pack %s: unexpected output %q", dir, out)
	}
	return filepath.Join(dest, packed[0].Filename), nil
}

// checksums writes SHA256SUMS in out: one line per artifact, as sha256sum
// prints them (sha256sum -c SHA256SUMS checks them), sorted by name.
func checksums(out string, artifacts []string) error {
	var lines []string
	for _, a := range artifacts {
		data, err := os.ReadFile(a)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, err := filepath.Rel(out, a)
		if err != nil {
			return err
		}
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.ToSlash(rel))
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

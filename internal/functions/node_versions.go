package functions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// minFunctionsSDK is the oldest firebase-functions that firebase-tools
// discovers functions of (the SDK's container contract), and loupe too.
var minFunctionsSDK = [3]int{3, 20, 0}

// functionsSDKDevVersion is the version of a firebase-functions built from
// its repository, which firebase-tools does not check.
const functionsSDKDevVersion = "0.0.0-development"

// checkSDKVersion refuses a firebase-functions (installed in the folder
// sdk) older than minFunctionsSDK, with firebase-tools' message.
func checkSDKVersion(sdk string) error {
	data, err := os.ReadFile(filepath.Join(sdk, "package.json"))
	if err != nil {
		return err
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version == functionsSDKDevVersion {
		return nil
	}
	v, ok := parseVersion(pkg.Version)
	if ok && compareVersions(v, minFunctionsSDK) < 0 {
		//lint:ignore ST1005 firebase-tools' words, which users search for
		return fmt.Errorf("You are using an old version of firebase-functions SDK (%s). Please update firebase-functions SDK to >=%d.%d.%d",
			pkg.Version, minFunctionsSDK[0], minFunctionsSDK[1], minFunctionsSDK[2])
	}
	return nil
}

// logNodeVersion says which node runs a Node.js codebase, as
// firebase-tools says it: the major version firebase.json's runtime
// (nodejs20) or package.json's engines.node asks for, against the
// machine's node, which runs it either way.
func logNodeVersion(ctx context.Context, cb *codebase, pkg packageJSON) {
	requested := pkg.Engines.Node
	if strings.HasPrefix(cb.config.Runtime, "nodejs") {
		requested = cb.config.Runtime
	}
	want := firstNumber.FindString(requested)
	if want == "" {
		return
	}
	out, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return
	}
	host := firstNumber.FindString(string(out))
	if host == want {
		cb.logger.Info(fmt.Sprintf("Using node@%s from host.", host))
		return
	}
	cb.logger.Warn(fmt.Sprintf(`Your requested "node" version "%s" doesn't match your global version "%s". Using node@%s from host.`, want, host, host))
}

var firstNumber = regexp.MustCompile(`[0-9]+`)

// parseVersion reads the major, minor and patch numbers of a version such
// as 3.19.0 or 5.0.0-beta.1.
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	core, _, _ := strings.Cut(strings.TrimPrefix(s, "v"), "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// compareVersions is -1, 0 or 1 as a is older than, the same as or newer than b.
func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

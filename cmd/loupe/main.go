// Command loupe serves the Loupe app and emulates the Firebase services it
// uses, and administers the marketplace through the Admin SDK.
package main

import (
	"fmt"
	"os"

	"github.com/loupe-dev/loupe/internal/cli"
)

func main() {
	err := cli.NewRootCmd(os.Stdout, os.Stderr).Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loupe:", err)
	}
	os.Exit(cli.ExitCode(err))
}

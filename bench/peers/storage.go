package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// storageFigures are what storage.mjs measures through the Node Admin SDK.
type storageFigures struct {
	SmallUpPerSec             float64 `json:"smallUpPerSec"`
	SmallDownPerSec           float64 `json:"smallDownPerSec"`
	SmallUpConcurrentPerSec   float64 `json:"smallUpConcurrentPerSec"`
	SmallDownConcurrentPerSec float64 `json:"smallDownConcurrentPerSec"`
	LargeUpMBps               float64 `json:"largeUpMBps"`
	LargeDownMBps             float64 `json:"largeDownMBps"`
	LargeDownNoValidationMBps float64 `json:"largeDownNoValidationMBps"`
}

// storageWorkload runs storage.mjs (beside this file) in Node against the
// emulator at host.
func storageWorkload(ctx context.Context, dir, host, project string, o options) (storageFigures, error) {
	var f storageFigures
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "storage.mjs"),
		strconv.Itoa(o.small), strconv.Itoa(o.smallSize), strconv.Itoa(o.large), strconv.Itoa(o.largeSize), strconv.Itoa(o.smallConcurrency))
	cmd.Env = append(os.Environ(), "FIREBASE_STORAGE_EMULATOR_HOST="+host, "GCLOUD_PROJECT="+project)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return f, fmt.Errorf("storage.mjs: %w: %s", err, stderr.String())
	}
	if err := json.Unmarshal(out, &f); err != nil {
		return f, fmt.Errorf("storage.mjs printed %q: %w", out, err)
	}
	return f, nil
}

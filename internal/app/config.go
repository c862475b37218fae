package app

import (
	"fmt"
)

// checkConfig holds the services that start to their parts of
// firebase.json, as firebase-tools validates only the emulators it starts,
// and logs the configuration's notes once. A functions block the emulator
// cannot run is logged as firebase-tools logs it and the other services
// start without functions (the returned options have none); under Strict
// it is an error. A mistake in the block of another service that starts
// is a ConfigError.
func checkConfig(o Options) (Options, error) {
	cfg := o.Config
	for _, note := range cfg.Notes {
		o.Logger.Warn(note)
	}
	check := []string{"emulators", "hub"}
	if !o.StrictCredentials {
		check = append(check, "ui")
	}
	for _, name := range ServiceNames {
		if name != "functions" && o.Enabled(name) {
			check = append(check, name)
		}
	}
	for _, name := range check {
		if err := cfg.Problem(name); err != nil {
			return o, &ConfigError{err}
		}
	}
	if len(o.HostingSites) > 0 && o.Enabled("hosting") {
		var err error
		if o.Config, err = o.Config.OnlySites(o.HostingSites); err != nil {
			return o, &ConfigError{err}
		}
	}
	if !o.Enabled("functions") {
		return o, nil
	}
	err := cfg.FunctionsError()
	switch {
	case err == nil:
		return o, nil
	case o.Strict:
		return o, &ConfigError{fmt.Errorf("functions: %w", err)}
	}
	o.Logger.Error("Failed to start Functions emulator: "+err.Error()+" (the other services start; --strict makes this an error)", "service", "functions")
	without := *cfg
	without.Functions = nil
	o.Config = &without
	return o, nil
}

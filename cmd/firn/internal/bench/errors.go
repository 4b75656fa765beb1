package bench

import (
	"errors"
	"fmt"
)

// ErrConfig is matched by the errors of a Config that Validate and Run
// refuse: bad input, which firn bench exits 2 for.
var ErrConfig = errors.New("bench: invalid configuration")

// ConfigError is a refused Config; it matches ErrConfig. Its Reason names
// the flag at fault and is printed as it is, so it does not repeat
// ErrConfig's words.
type ConfigError struct{ Reason string }

func (e *ConfigError) Error() string { return "bench: " + e.Reason }

// Is makes errors.Is(err, ErrConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Reason: fmt.Sprintf(format, args...)}
}

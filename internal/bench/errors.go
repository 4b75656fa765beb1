package bench

import (
	"errors"
	"fmt"
)

// ErrConfig is matched by the errors of a Config that Validate and Run
// refuse: bad input, which firn bench exits 2 for.
var ErrConfig = errors.New("bench: invalid configuration")

// configError is a refused Config. Its message names the flag at fault
// and is printed as it is, so it does not repeat ErrConfig's words.
type configError struct{ msg string }

func (e *configError) Error() string        { return "bench: " + e.msg }
func (e *configError) Is(target error) bool { return target == ErrConfig }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

package config

import "fmt"

// InputError is a value a setting cannot take, found when the setting is
// read into the domain's value: a layout's part, opaque mode's key or
// the size of its space, an ID outside an opaque space. Its message is
// what the command prints, naming the setting as its flag (--epoch);
// commands report it as bad input, as they do a *FieldError.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// FieldError names the field at fault, where it is set, and what to
// change.
type FieldError struct {
	Field  string // its YAML path, such as registry.store
	Reason string
}

func (e *FieldError) Error() string {
	if fileOnly(e.Field) {
		return fmt.Sprintf("%s (in the configuration file only): %s", e.Field, e.Reason)
	}
	if f := flagOf(e.Field); f != "" {
		return fmt.Sprintf("%s (env %s, flag --%s): %s", e.Field, envName(e.Field), f, e.Reason)
	}
	return fmt.Sprintf("%s (env %s): %s", e.Field, envName(e.Field), e.Reason)
}

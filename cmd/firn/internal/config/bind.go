package config

import (
	"flag"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// flagOf returns the flag of the field at path, or "".
func flagOf(path string) string {
	name := ""
	var c Config
	c.fields(func(p string, _ reflect.Value, sf reflect.StructField) {
		if p == path {
			name = sf.Tag.Get("flag")
		}
	})
	return name
}

// fileOnly reports whether a field has no environment variable.
func fileOnly(field string) bool {
	return strings.HasPrefix(field, "segments.stores") || strings.HasPrefix(field, "auth.") || field == "opaque.key"
}

func envName(field string) string {
	return "FIRN_" + strings.ToUpper(strings.ReplaceAll(field, ".", "_"))
}

// Register defines a flag on fs for every setting with a flag that a
// command uses, bound to c's field, its usage the field's help: parsing
// fs sets c, over what the file and the environment said. uses names
// sections ("registry") or single settings ("snowflake.floor"); none
// means every setting (firn serve).
func (c *Config) Register(fs *flag.FlagSet, uses ...string) {
	c.fields(func(path string, v reflect.Value, sf reflect.StructField) {
		if used(path, uses) {
			fs.Var(&fieldValue{v: v, path: path}, sf.Tag.Get("flag"), flagUsage(path))
		}
	})
}

// For returns the configuration of a command other than firn serve: the
// defaults, with c's values of the settings the command uses (uses as for
// Register). The rest of the file and the environment is ignored, so one
// file serves every command. registry.node is never taken: it is the
// server's own node, and another command holding it beside the server
// would issue the server's IDs.
func (c *Config) For(uses ...string) *Config {
	out := Default()
	src := reflect.ValueOf(c).Elem()
	dst := reflect.ValueOf(&out).Elem()
	for i := range src.NumField() {
		sec := src.Type().Field(i)
		for j := range sec.Type.NumField() {
			path := sec.Tag.Get("yaml") + "." + sec.Type.Field(j).Tag.Get("yaml")
			if used(path, uses) && path != "registry.node" {
				dst.Field(i).Field(j).Set(src.Field(i).Field(j))
			}
		}
	}
	return &out
}

// used reports whether the setting at path is among uses: the setting
// itself or its section. No uses means every setting.
func used(path string, uses []string) bool {
	section, _, _ := strings.Cut(path, ".")
	return len(uses) == 0 || slices.Contains(uses, path) || slices.Contains(uses, section)
}

// Flags returns the flags of the settings among uses (as for Register).
func Flags(uses ...string) []string {
	var c Config
	var names []string
	c.fields(func(path string, _ reflect.Value, sf reflect.StructField) {
		if used(path, uses) {
			names = append(names, sf.Tag.Get("flag"))
		}
	})
	return names
}

// fieldValue is a setting as a flag.Value.
type fieldValue struct {
	v    reflect.Value
	path string
}

// Setting returns the path of the setting a flag bound by Register sets
// ("registry.dsn"), or "" for a flag of the command's own.
func Setting(f *flag.Flag) string {
	if v, ok := f.Value.(*fieldValue); ok {
		return v.path
	}
	return ""
}

func (f *fieldValue) String() string {
	if !f.v.IsValid() {
		return ""
	}
	return format(f.v)
}

func (f *fieldValue) Set(s string) error { return setString(f.v, s) }

// Get returns the setting's value, so that messages can say what a flag
// wants by its type.
func (f *fieldValue) Get() any { return f.v.Interface() }

// IsBoolFlag lets a boolean setting's flag be given without a value.
func (f *fieldValue) IsBoolFlag() bool { return f.v.IsValid() && f.v.Kind() == reflect.Bool }

// format writes a value as its flag would take it.
func format(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

var durationType = reflect.TypeOf(time.Duration(0))

// fields walks the leaves of c with their YAML paths.
func (c *Config) fields(f func(path string, v reflect.Value, sf reflect.StructField)) {
	root := reflect.ValueOf(c).Elem()
	for i := range root.NumField() {
		sec, st := root.Field(i), root.Type().Field(i)
		for j := range sec.NumField() {
			leaf := sec.Type().Field(j)
			if leaf.Tag.Get("flag") == "-" {
				continue // not a flag, not an environment variable
			}
			f(st.Tag.Get("yaml")+"."+leaf.Tag.Get("yaml"), sec.Field(j), leaf)
		}
	}
}

// commandVars are FIRN_ variables of the commands, not settings of
// firn serve: FIRN_TOKEN is the bearer token firn next and firn tag send
// to a running server.
var commandVars = map[string]bool{"FIRN_TOKEN": true, DigestVar: true}

// applyEnv sets every field whose FIRN_ variable is present.
func (c *Config) applyEnv(environ []string) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "FIRN_") && !strings.HasPrefix(k, "FIRN_TEST_") && !commandVars[k] {
			env[k] = v
		}
	}
	known := map[string]bool{}
	var err error
	c.fields(func(path string, v reflect.Value, _ reflect.StructField) {
		name := envName(path)
		known[name] = true
		s, ok := env[name]
		if !ok || err != nil {
			return
		}
		if e := setString(v, s); e != nil {
			err = &FieldError{Field: path, Reason: e.Error()}
		}
	})
	if err != nil {
		return err
	}
	for k := range env {
		if !known[k] {
			if s := Suggest(k, slices.Sorted(maps.Keys(known))); s != "" {
				return fmt.Errorf("config: unknown environment variable %s (did you mean %s?)", k, s)
			}
			return fmt.Errorf("config: unknown environment variable %s", k)
		}
	}
	return nil
}

func setString(v reflect.Value, s string) error {
	if v.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 10s or 1m30s", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		v.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		v.SetInt(int64(n))
	case reflect.Slice:
		parts := strings.Split(s, ",")
		out := reflect.MakeSlice(v.Type(), len(parts), len(parts))
		for i, p := range parts {
			if err := setString(out.Index(i), strings.TrimSpace(p)); err != nil {
				return err
			}
		}
		v.Set(out)
	case reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a non-negative whole number", s)
		}
		v.SetUint(n)
	}
	return nil
}

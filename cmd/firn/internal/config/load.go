package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load lays a YAML document (empty means none) and then the FIRN_…
// variables of environ over the defaults. It refuses what it cannot
// read; Validate checks the values once flags are bound too.
func Load(doc []byte, environ []string) (*Config, error) {
	return LoadFile("", doc, environ)
}

// LoadFile is Load for doc read from the file at path: a relative path
// of a file the document names (opaque.key_file, http.tls_cert,
// http.tls_key, auth.tokens[].secret_file) is taken from the document's directory, as its author
// sees it, wherever firn is started, and made absolute. Paths from the
// environment and flags stay relative to the working directory. A data
// directory must be absolute wherever it comes from (CheckDataDir). An
// empty path is Load.
func LoadFile(path string, doc []byte, environ []string) (*Config, error) {
	c := Default()
	if len(bytes.TrimSpace(doc)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(doc))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("config file%s: %s", cmp.Or(" "+path, ""), yamlMessage(err))
		}
		if path != "" {
			dir, err := filepath.Abs(filepath.Dir(path))
			if err != nil {
				return nil, fmt.Errorf("config file: %w", err)
			}
			c.resolvePaths(dir)
		}
	}
	if err := c.applyEnv(environ); err != nil {
		return nil, err
	}
	return &c, nil
}

// resolvePaths joins dir to every relative path field that is set.
func (c *Config) resolvePaths(dir string) {
	c.fields(func(_ string, v reflect.Value, sf reflect.StructField) {
		if sf.Tag.Get("path") == "true" && v.String() != "" && !filepath.IsAbs(v.String()) {
			v.SetString(filepath.Join(dir, v.String()))
		}
	})
	for i, t := range c.Auth.Tokens {
		if t.SecretFile != "" && !filepath.IsAbs(t.SecretFile) {
			c.Auth.Tokens[i].SecretFile = filepath.Join(dir, t.SecretFile)
		}
	}
}

// yamlMessage says what is wrong with a file in the configuration's
// words rather than the YAML decoder's Go types.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		m = unknownField.ReplaceAllStringFunc(m, func(s string) string {
			sub := unknownField.FindStringSubmatch(s)
			return unknownSetting(sub[1], sub[2])
		})
		msgs[i] = wrongType.ReplaceAllStringFunc(m, func(s string) string {
			sub := wrongType.FindStringSubmatch(s)
			want := map[string]string{"int": "a whole number", "uint64": "a non-negative whole number", "bool": "true or false",
				"time.Duration": "a duration such as 10s", "float64": "a number", "string": "a string"}[sub[2]]
			if want == "" {
				want = "another kind of value"
			}
			return fmt.Sprintf("%q: want %s", sub[1], want)
		})
	}
	return strings.Join(msgs, "; ")
}

// unknownSetting says which setting key is not, in which section, and
// the section's setting nearest to it, if one is a typo away.
func unknownSetting(key, goType string) string {
	sections := reflect.TypeOf(Config{})
	for i := range sections.NumField() {
		sec := sections.Field(i)
		if sec.Type.String() != goType {
			continue
		}
		msg := fmt.Sprintf("unknown setting %q in %s", key, sec.Tag.Get("yaml"))
		var keys []string
		for j := range sec.Type.NumField() {
			if k := strings.Split(sec.Type.Field(j).Tag.Get("yaml"), ",")[0]; k != "" {
				keys = append(keys, k)
			}
		}
		if k := Suggest(key, keys); k != "" {
			return msg + fmt.Sprintf(" (did you mean %s?)", k)
		}
		return msg
	}
	return fmt.Sprintf("unknown setting %q", key)
}

var (
	unknownField = regexp.MustCompile(`field (\S+) not found in type (\S+)`)
	wrongType    = regexp.MustCompile("cannot unmarshal !!\\w+ `([^`]*)` into (\\S+)")
)

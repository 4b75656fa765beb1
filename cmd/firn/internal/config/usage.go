package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/zkstore"
)

// A setting's help is written once, in its field's help tag; the flag's
// usage (Register), every command's help (Usage) and docs/config.md's
// table (Table) are made from it, with the setting's YAML key, variable
// and default read from the field and Default. In a help tag {a.b} names
// another setting — printed as its flag in a command's help, as its key
// in the table — and {Name} one of the bounds below, so that neither a
// renamed flag nor a changed limit leaves the help behind. arg, when
// set, names the flag's value in the help (ADDR); else its type does.

// bounds are the values a help tag may name as {Name}: each from the
// package that enforces it.
var bounds = map[string]string{
	"MaxBatchLimit":     fmt.Sprint(server.MaxBatchLimit),
	"MinTTL":            short(nodeid.MinTTL),
	"MaxTTL":            short(nodeid.MaxTTL),
	"MaxDialTimeout":    short(MaxDialTimeout),
	"MaxStartAhead":     short(snowflake.DefaultMaxStartAhead),
	"MinSessionTimeout": short(zkstore.MinSessionTimeout),
	"MaxSessionTimeout": short(zkstore.MaxSessionTimeout),
	"MinRetryPause":     short(zkstore.MinRetryPause),
	"MaxRetryPause":     short(zkstore.MaxRetryPause),
	"DigestVar":         DigestVar,
	"Presets":           strings.Join(snowflake.PresetNames(), ", "),
}

// short writes d as people do, 10m rather than Go's 10m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// helpRef is a {…} in a help tag.
var helpRef = regexp.MustCompile(`\{([A-Za-z_.]+)\}`)

// setting is one leaf of Config as its help shows it.
type setting struct {
	path, flag, arg, help string
	def                   string // the default as a flag takes it; "" for a zero value
	fileOnly              bool   // no flag and no variable
}

// settings returns every setting, file-only ones included, in the order
// of the struct.
func settings() []setting {
	def := Default()
	root := reflect.ValueOf(&def).Elem()
	var out []setting
	for i := range root.NumField() {
		sec, st := root.Field(i), root.Type().Field(i)
		for j := range sec.NumField() {
			leaf, v := sec.Type().Field(j), sec.Field(j)
			s := setting{path: st.Tag.Get("yaml") + "." + leaf.Tag.Get("yaml"), flag: leaf.Tag.Get("flag"),
				arg: leaf.Tag.Get("arg"), help: leaf.Tag.Get("help"), fileOnly: leaf.Tag.Get("flag") == "-"}
			if !v.IsZero() {
				s.def = format(v)
			}
			if s.arg == "" {
				s.arg = argOf(v.Type())
			}
			out = append(out, s)
		}
	}
	return out
}

// argOf names a flag's value by its type, when its tag does not.
func argOf(t reflect.Type) string {
	switch {
	case t == durationType:
		return "D"
	case t.Kind() == reflect.Bool:
		return ""
	case t.Kind() == reflect.Int, t.Kind() == reflect.Uint64, t.Kind() == reflect.Float64:
		return "N"
	case t.Kind() == reflect.Slice:
		return "A,B"
	}
	return "VALUE"
}

// text is the setting's help with its references resolved: another
// setting by name(path), a bound by its value.
func (s setting) text(name func(path string) string) string {
	return helpRef.ReplaceAllStringFunc(s.help, func(ref string) string {
		key := ref[1 : len(ref)-1]
		if v, ok := bounds[key]; ok {
			return v
		}
		return name(key)
	})
}

// flagName is a setting's name on the command line: --flag, or its key
// when it has no flag.
func flagName(path string) string {
	if f := flagOf(path); f != "" {
		return "--" + f
	}
	return path
}

// flagUsage is what Register gives flag.FlagSet for a setting.
func flagUsage(path string) string {
	for _, s := range settings() {
		if s.path == path {
			return s.text(flagName)
		}
	}
	return ""
}

// Help layout: every flag at two spaces, every description at one
// column, wrapped to UsageWidth. A command's own flags are written at
// the same column so that its help reads as one list.
const (
	UsageColumn = 26
	UsageWidth  = 80
)

// Usage returns the help of the settings among uses (as for Register),
// one entry per flag in the order of Config: the flag and its value, the
// help and the default, then the YAML key and the variable ($FIRN_…).
func Usage(uses ...string) string {
	var b strings.Builder
	for _, s := range settings() {
		if s.fileOnly || !used(s.path, uses) {
			continue
		}
		head := "--" + s.flag
		switch {
		case s.arg == "" && s.def == "true":
			head += "=false"
		case s.arg != "":
			head += " " + s.arg
		}
		help := s.text(flagName)
		if s.def != "" {
			help += " (default " + s.def + ")"
		}
		b.WriteString(UsageEntry(head, help, s.path+", $"+envName(s.path)))
	}
	return b.String()
}

// UsageEntry is one entry of a command's help: head (a flag and its
// value) at two spaces, each paragraph from UsageColumn, wrapped to
// UsageWidth; head stands on a line of its own when it reaches the
// column. A command's own flags are written with it too.
func UsageEntry(head string, paragraphs ...string) string {
	var b strings.Builder
	pad := strings.Repeat(" ", UsageColumn)
	first := "  " + head
	if len(first) > UsageColumn-2 {
		b.WriteString(first + "\n")
		first = pad
	} else {
		first += strings.Repeat(" ", UsageColumn-len(first))
	}
	for _, p := range paragraphs {
		for _, line := range wrap(p, UsageWidth-UsageColumn) {
			b.WriteString(first + line + "\n")
			first = pad
		}
	}
	return b.String()
}

// wrap breaks text into lines of at most width bytes at spaces; a word
// longer than width stands alone.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// Table returns docs/config.md's table of settings, in Markdown: every
// setting, file-only ones too, with its flag, variable, default and help.
func Table() string {
	var b strings.Builder
	b.WriteString("| setting | flag | variable | default | meaning |\n|---|---|---|---|---|\n")
	code := func(s string) string { return "`" + s + "`" }
	for _, s := range settings() {
		flag, env := "", ""
		if !s.fileOnly {
			flag, env = code("--"+s.flag), code(envName(s.path))
		} else {
			flag, env = "file only", "file only"
		}
		def := ""
		if s.def != "" {
			def = code(s.def)
		}
		help := s.text(code)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", code(s.path), flag, env, def, strings.NewReplacer("|", `\|`, "*", `\*`).Replace(help))
	}
	return b.String()
}

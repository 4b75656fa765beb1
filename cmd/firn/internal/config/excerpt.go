package config

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Excerpt says what Config.Excerpt writes besides the settings that
// differ from the defaults.
type Excerpt struct {
	// Keep lists settings (YAML paths, such as segments.format) written
	// even at their default, for a reader who should see them.
	Keep []string
	// Comments are lines written above a setting, by its YAML path.
	Comments map[string]string
}

// plainWord is a string YAML reads back as itself when written bare.
var plainWord = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Excerpt writes the settings of c that differ from the defaults (and
// e.Keep) as a YAML document firn serve reads back as c: the form of a
// configuration a command proposes, such as firn migrate check's plan.
// Secrets are redacted as Redacted redacts them; lists are written on
// one line and strings quoted: in a list every one, elsewhere those
// other than plain words.
func (c *Config) Excerpt(hide func(kind, value string) string, e Excerpt) ([]byte, error) {
	r, d := c.redacted(hide), Default()
	keep := map[string]bool{}
	for _, k := range e.Keep {
		keep[k] = true
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	rv, dv, t := reflect.ValueOf(r), reflect.ValueOf(d), reflect.TypeOf(r)
	for i := range t.NumField() {
		section := t.Field(i).Tag.Get("yaml")
		body := &yaml.Node{Kind: yaml.MappingNode}
		st := t.Field(i).Type
		for j := range st.NumField() {
			name := strings.Split(st.Field(j).Tag.Get("yaml"), ",")[0]
			path := section + "." + name
			v := rv.Field(i).Field(j)
			if !keep[path] && reflect.DeepEqual(v.Interface(), dv.Field(i).Field(j).Interface()) {
				continue
			}
			var val yaml.Node
			if err := val.Encode(v.Interface()); err != nil {
				return nil, err
			}
			brief(&val)
			key := &yaml.Node{Kind: yaml.ScalarNode, Value: name, HeadComment: e.Comments[path]}
			body.Content = append(body.Content, key, &val)
		}
		if len(body.Content) > 0 {
			root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: section, HeadComment: e.Comments[section]}, body)
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// brief writes n's lists on one line and quotes its strings: in a list
// every one, elsewhere those other than plain words.
func brief(n *yaml.Node) { briefIn(n, false) }

func briefIn(n *yaml.Node, inList bool) {
	switch {
	case n.Kind == yaml.SequenceNode, n.Kind == yaml.MappingNode && inList:
		n.Style = yaml.FlowStyle
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str" && (inList || !plainWord.MatchString(n.Value)):
		n.Style = yaml.SingleQuotedStyle
	}
	for _, c := range n.Content {
		briefIn(c, inList || n.Kind == yaml.SequenceNode)
	}
}

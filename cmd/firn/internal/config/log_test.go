package config_test

import (
	"strings"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// TestLogger: the level filters, text is text, and auto to what is not a
// terminal is JSON.
func TestLogger(t *testing.T) {
	for _, c := range []struct {
		log  config.Log
		want string
	}{
		{config.Log{Level: "info", Format: "text"}, "level=INFO msg=shown\n"},
		{config.Log{Level: "info", Format: "auto"}, `"msg":"shown"`},
		{config.Log{Level: "warn", Format: "json"}, ""},
	} {
		var b strings.Builder
		l := c.log.Logger(&b)
		l.Info("shown")
		if got := b.String(); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v: logged %q, want %q", c.log, got, c.want)
		}
	}
}

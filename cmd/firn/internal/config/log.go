package config

import (
	"io"
	"log/slog"
	"os"

	"github.com/firn-id/firn/internal/secret"
)

// Logger is a logger writing to w at l.Level (debug, info, warn, error)
// in l.Format: text, JSON, or auto (text when w is a terminal, JSON
// otherwise), with every password the command has seen scrubbed
// (secret.ScrubAttr). Validate checked both values.
func (l Log) Logger(w io.Writer) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(l.Level)) // valid: Validate
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: secret.ScrubAttr}
	text := l.Format == "text"
	if f, ok := w.(*os.File); ok && l.Format == "auto" {
		fi, err := f.Stat()
		text = err == nil && fi.Mode()&os.ModeCharDevice != 0
	}
	if text {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

package secret_test

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/secret"
)

// TestScrubHidesWhatWasRemembered: a remembered password is hidden in
// every later message and log value; one too short to tell from a word
// is not remembered.
func TestScrubHidesWhatWasRemembered(t *testing.T) {
	secret.Remember("s3cr3t-pa55", "abc", secret.Redacted)
	if got := secret.Scrub("dial: user s3cr3t-pa55 refused, abc"); got != "dial: user REDACTED refused, abc" {
		t.Fatalf("Scrub = %q", got)
	}
	for _, v := range []slog.Value{slog.StringValue("pw s3cr3t-pa55"), slog.AnyValue(errors.New("pw s3cr3t-pa55"))} {
		a := secret.ScrubAttr(nil, slog.Attr{Key: "err", Value: v})
		if s := a.Value.String(); strings.Contains(s, "s3cr3t-pa55") || !strings.Contains(s, secret.Redacted) {
			t.Fatalf("ScrubAttr(%v) = %q", v, s)
		}
	}
}

// TestPostgresAndEndpoint: the forms read without a driver; every form,
// with the drivers' readings, is tested through cmd/firn's redact.
func TestPostgresAndEndpoint(t *testing.T) {
	tests := []struct {
		name, give, want string
		read             func(string) (string, []string, bool)
		ok               bool
	}{
		{name: "URL", read: secret.Postgres, give: "postgres://app:pa55word@db/ids?sslpassword=k3y", want: "postgres://app:REDACTED@db/ids?sslpassword=REDACTED", ok: true},
		{name: "keyword/value", read: secret.Postgres, give: `host=db password='it\'s pa55' dbname=ids`, want: "host=db password=REDACTED dbname=ids", ok: true},
		{name: "unterminated quote", read: secret.Postgres, give: "host=db password='pa55", ok: false},
		{name: "keyword with a space", read: secret.Postgres, give: "app:pa55 host=db", ok: false},
		{name: "word without =", read: secret.Postgres, give: "host=db pa55word", ok: false},
		{name: "custom setting", read: secret.Postgres, give: "host=db myapp.mode=x", want: "host=db myapp.mode=x", ok: true},
		{name: "endpoint", read: secret.Endpoint, give: "http://root:pa55word@10.0.0.5:2379", want: "http://root:REDACTED@10.0.0.5:2379", ok: true},
		{name: "host:port", read: secret.Endpoint, give: "10.0.0.5:2379", want: "10.0.0.5:2379", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, ok := tt.read(tt.give)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Fatalf("%q: %q, %v; want %q, %v", tt.give, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestFileNamesOnlyAFileThatExists: the name of a secret's file is
// printed only when a file of that name exists; otherwise neither File
// nor ReadFile's error holds it.
func TestFileNamesOnlyAFileThatExists(t *testing.T) {
	existing := t.TempDir() + "/key"
	if err := os.WriteFile(existing, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := secret.File(existing); got != existing {
		t.Fatalf("File(%q) = %q", existing, got)
	}
	key := "q8Vd3Yk7Jm0pZ2xW+R5/tN1cLhB9eGsAoUiF4QjK6vE="
	if got := secret.File(key); got != secret.Redacted {
		t.Fatalf("File(a key) = %q", got)
	}
	_, err := secret.ReadFile(key)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "tN1c") {
		t.Fatalf("ReadFile(a key) = %v", err)
	}
}

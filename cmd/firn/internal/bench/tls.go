package bench

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
)

// validateTLS checks --tls, --ca and --insecure against the protocol and
// target, and builds the TLS configuration the run uses: for gRPC when
// --tls (implied by --ca or --insecure), for https:// targets always.
func (c *settings) validateTLS() error {
	if c.ca != "" && c.insecure {
		return configErrorf("--ca and --insecure: give one (--insecure verifies nothing, so the CA would be ignored)")
	}
	if c.web() {
		if c.tls {
			return configErrorf("--tls is for gRPC; over HTTP, TLS comes with an https:// --target")
		}
		if !strings.HasPrefix(c.targets[0], "https://") {
			if c.ca != "" || c.insecure {
				return configErrorf("--target %q is plain HTTP: --ca and --insecure want an https:// target", c.targets[0])
			}
			return nil
		}
	} else {
		c.tls = c.tls || c.ca != "" || c.insecure
		if !c.tls {
			return nil
		}
	}
	conf, err := LoadTLS(c.ca, c.insecure)
	if err != nil {
		return err
	}
	c.tlsConf = conf
	return nil
}

// LoadTLS returns a client TLS configuration trusting the PEM certificates
// in the file ca (the system's roots when ca is empty), or verifying
// nothing when insecure. Its refusals match ErrConfig.
func LoadTLS(ca string, insecure bool) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} // --insecure asks for it, and is warned of
	if ca == "" {
		return conf, nil
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, configErrorf("--ca: %s", err)
	}
	conf.RootCAs = x509.NewCertPool()
	if !conf.RootCAs.AppendCertsFromPEM(pem) {
		return nil, configErrorf("--ca %s: no PEM certificate in the file", ca)
	}
	return conf, nil
}

// tlsHint is advice to append to an error that failed to verify the
// server's certificate, or "". gRPC flattens the TLS error into its status
// message, so beside errors.As the message is searched for crypto/x509's
// prefix.
func tlsHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &unknown) || errors.As(err, &verify) || strings.Contains(err.Error(), "x509: "):
		return "the server's certificate did not verify: pass --ca FILE with the CA that signed it (or --insecure to skip verification)"
	case strings.Contains(err.Error(), "server preface") || strings.Contains(err.Error(), "HTTP/1.0 400 with neither"):
		// gRPC's answer, and Go's HTTP server's, to a plain-text
		// client on a TLS port.
		return "the server may speak TLS: add --tls over gRPC, or give an https:// target, with --ca FILE for a private CA"
	}
	return ""
}

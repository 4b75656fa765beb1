package secret

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// File returns the name of a file that holds a secret (a key, a
// password) as firn may print it: the name when a file of that name
// exists, else Redacted. A name that is no file may be the secret
// itself, given where its file's name goes.
func File(name string) string {
	if name == "" {
		return ""
	}
	if _, err := os.Stat(name); err != nil {
		return Redacted
	}
	return name
}

// ReadFile reads a file that holds a secret. Its error names the file
// as File does, and never quotes the file's content.
func ReadFile(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if File(name) == Redacted {
			return nil, fmt.Errorf("%w (the name given is not printed: it names no file, and may be the secret itself)", pe.Err)
		}
		return nil, fmt.Errorf("%s: %w", name, pe.Err)
	}
	return b, err
}

// KeyPair reads a PEM certificate and the file of its private key, as
// tls.LoadX509KeyPair does; the key file's name is printed as File
// prints it, and neither file's content is quoted.
func KeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s, %s: %w", certFile, File(keyFile), err)
	}
	return cert, nil
}

package client_test

import (
	"testing"

	"github.com/firn-id/firn/client"
)

func TestFailure(t *testing.T) {
	tests := []struct {
		name   string
		err    client.Error
		want   client.Failure
		detail string
	}{
		{name: "plain HTTP", err: client.Error{Kind: client.ErrUnavailable, Code: "transport",
			Message: `GET /v1/info: Get "https://h:1/v1/info": http: server gave HTTP response to HTTPS client`},
			want: client.PlainHTTP, detail: "http: server gave HTTP response to HTTPS client"},
		{name: "HTTPS only", err: client.Error{Kind: client.ErrInvalid, Code: "bad_request", Message: "Client sent an HTTP request to an HTTPS server."},
			want: client.HTTPSOnly},
		{name: "not HTTP", err: client.Error{Kind: client.ErrUnavailable, Code: "transport", Message: `net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00"`},
			want: client.NotHTTP, detail: "net/http: HTTP/1.x transport connection broken: malformed HTTP response…"},
		{name: "token", err: client.Error{Kind: client.ErrUnavailable, Code: "transport", Message: `net/http: invalid header field value for "Authorization"`},
			want: client.TokenNotSendable},
		{name: "certificate", err: client.Error{Kind: client.ErrUnavailable, Code: "transport", Message: "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
			want: client.UntrustedCertificate},
		{name: "refused", err: client.Error{Kind: client.ErrUnavailable, Code: "transport", Message: `Get "http://h:1/v1/info": dial tcp 127.0.0.1:1: connect: connection refused`},
			want: client.Refused, detail: "dial tcp 127.0.0.1:1: connect: connection refused"},
		{name: "closed", err: client.Error{Kind: client.ErrUnavailable, Code: "transport", Message: `Get "http://h:1/v1/info": EOF`},
			want: client.Closed},
		{name: "no answer", err: client.Error{Kind: client.ErrUnavailable, Code: "transport", Message: `Get "http://h:1/v1/info": context deadline exceeded`},
			want: client.NoAnswer, detail: "context deadline exceeded"},
		{name: "a refusal is an answer", err: client.Error{Kind: client.ErrUnauthorized, Code: "unauthorized", Message: "connection refused\x01 by policy"},
			want: client.FailureOther, detail: "connection refused…"},
		{name: "firn's answer", err: client.Error{Kind: client.ErrUnknownTag, Code: "unknown_tag", Message: "unknown tag"},
			want: client.FailureOther, detail: "unknown tag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Failure(); got != tc.want {
				t.Errorf("Failure() = %d, want %d", got, tc.want)
			}
			if tc.detail != "" && tc.err.Detail() != tc.detail {
				t.Errorf("Detail() = %q, want %q", tc.err.Detail(), tc.detail)
			}
		})
	}
}

package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/server"
)

func opaqueConfig(t *testing.T, tokens ...server.Token) (*server.Config, *opaque.Permutation) {
	t.Helper()
	g := unreservedGenerator(t)
	p, err := opaque.New([]byte("0123456789abcdef"), []byte("orders"), g.Layout().Bits())
	if err != nil {
		t.Fatal(err)
	}
	auth, err := server.NewAuth(tokens, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	return &server.Config{Snowflake: g, Opaque: p, Auth: auth}, p
}

// getAs sends a GET with secret as its bearer token, if any.
func getAs(h http.Handler, target, secret string) *httptest.ResponseRecorder {
	if secret == "" {
		return get(h, http.MethodGet, target)
	}
	return get(h, http.MethodGet, target, "Authorization", "Bearer "+secret)
}

// TestOpaqueIDs: every route that issues snowflake IDs issues their
// images; undone, they are the generator's increasing IDs of this node.
func TestOpaqueIDs(t *testing.T) {
	cfg, p := opaqueConfig(t)
	h := handlerOf(t, cfg)
	w := getAs(h, "/v1/snowflake/batch?count=500", "")
	if w.Code != http.StatusOK {
		t.Fatalf("batch: %d %s", w.Code, w.Body)
	}
	var batch struct{ IDs []string }
	if err := json.Unmarshal(w.Body.Bytes(), &batch); err != nil || len(batch.IDs) != 500 {
		t.Fatalf("batch body %s: %v", w.Body, err)
	}
	ids := batch.IDs
	for _, target := range []string{"/v1/snowflake/next", "/api/snowflake/get/any"} {
		w := getAs(h, target, "")
		id := strings.Trim(strings.TrimSpace(w.Body.String()), `"`)
		if strings.HasPrefix(id, "{") {
			var one struct{ ID string }
			_ = json.Unmarshal(w.Body.Bytes(), &one)
			id = one.ID
		}
		ids = append(ids, id)
	}
	var prev uint64
	descending := 0
	var last uint64
	for i, s := range ids {
		y, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ID %q: %v", s, err)
		}
		x, err := p.Decode(y)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && x <= prev {
			t.Fatalf("revealed IDs not increasing: %d after %d", x, prev)
		}
		if i > 0 && y < last {
			descending++
		}
		prev, last = x, y
	}
	if descending < len(ids)/4 {
		t.Fatalf("only %d of %d opaque IDs are below their predecessor: they still show their order", descending, len(ids))
	}
}

func TestOpaqueDecodeAndReveal(t *testing.T) {
	cfg, p := opaqueConfig(t, server.Token{Name: "ops", Secret: "reveal-secret-01", Scopes: []string{"reveal"}},
		server.Token{Name: "app", Secret: "app-secret-01234", Scopes: []string{"snowflake"}})
	h := handlerOf(t, cfg)
	w := getAs(h, "/v1/snowflake/next", "app-secret-01234")
	var one struct{ ID string }
	if err := json.Unmarshal(w.Body.Bytes(), &one); err != nil {
		t.Fatalf("next: %d %s", w.Code, w.Body)
	}
	for _, target := range []string{"/v1/snowflake/decode/" + one.ID, "/decodeSnowflakeId?snowflakeId=" + one.ID} {
		if w := getAs(h, target, "app-secret-01234"); w.Code == http.StatusOK || !strings.Contains(w.Body.String(), "opaque") {
			t.Errorf("%s in opaque mode: %d %s, want a refusal naming opaque IDs", target, w.Code, w.Body)
		}
	}
	if w := getAs(h, "/v1/snowflake/reveal/"+one.ID, "app-secret-01234"); w.Code != http.StatusForbidden {
		t.Errorf("reveal with a snowflake token: %d, want 403", w.Code)
	}
	w = getAs(h, "/v1/snowflake/reveal/"+one.ID, "reveal-secret-01")
	var d struct {
		ID       string `json:"id"`
		OpaqueID string `json:"opaque_id"`
		UnixMS   int64  `json:"unix_ms"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || w.Code != http.StatusOK {
		t.Fatalf("reveal: %d %s", w.Code, w.Body)
	}
	y, _ := strconv.ParseUint(one.ID, 10, 64)
	x, _ := p.Decode(y)
	if d.ID != strconv.FormatUint(x, 10) || d.OpaqueID != one.ID || d.UnixMS == 0 {
		t.Errorf("reveal answered %+v, want id %d from opaque %s", d, x, one.ID)
	}
	w = getAs(h, "/v1/snowflake/reveal/"+string(idtext.Base32.Append(nil, y))+"?encoding=base32", "reveal-secret-01")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id":"`+d.ID+`"`) {
		t.Errorf("reveal of the ID in base32: %d %s, want id %s", w.Code, w.Body, d.ID)
	}
}

// TestRevealNeedsATokenOfItsOwn: reveal is never anonymous, and with no
// tokens configured (a loopback server open to all) it is refused.
func TestRevealNeedsATokenOfItsOwn(t *testing.T) {
	cfg, _ := opaqueConfig(t)
	if w := getAs(handlerOf(t, cfg), "/v1/snowflake/reveal/1", ""); w.Code != http.StatusForbidden {
		t.Errorf("reveal on a server without tokens: %d %s, want 403", w.Code, w.Body)
	}
	_, err := server.NewAuth([]server.Token{{Name: "a", Secret: "a-secret-0123456", Scopes: []string{"snowflake"}}}, server.Anonymous{Scopes: []string{"reveal"}})
	var te *server.TokenError
	if !errors.As(err, &te) {
		t.Errorf("anonymous reveal: err = %v, want a TokenError", err)
	}
}

func TestOpaqueConfigRefused(t *testing.T) {
	g := unreservedGenerator(t)
	p, err := opaque.New(make([]byte, 16), nil, g.Layout().Bits()-1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(server.Config{Snowflake: g, Opaque: p}); !errors.Is(err, server.ErrConfig) {
		t.Errorf("a permutation of another width: err = %v, want ErrConfig", err)
	}
}

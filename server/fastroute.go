package server

import (
	"net/http"
	"strings"
)

// fastRoutes finds the route of a request without the mux's general
// matching, for the patterns whose path is literal or has one wildcard
// segment: the ID routes most requests take. It returns the very *routed
// the mux holds for the pattern, so a request meets the same scope check
// and handler either way; whatever it is not sure of (an escaped or
// unclean path, a method the pattern does not name, such as HEAD) goes
// to the mux. It sets the request's Pattern but no path value: the first
// SetPathValue on a request the mux did not route allocates a map, which
// cost a wildcard route a third of its time; pathValue reads the value
// from the path instead.
type fastRoutes struct {
	exact map[string]map[string]*routed // method, path
	wild  []fastWild
}

// fastWild is a pattern METHOD PREFIX{NAME}SUFFIX, the wildcard one whole
// segment.
type fastWild struct {
	method, prefix, name, suffix string
	rt                           *routed
}

// add holds rt's pattern if it is of a shape find can match exactly as
// the mux does.
func (f *fastRoutes) add(pattern string, rt *routed) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || strings.HasSuffix(path, "/") || strings.Contains(path, "...}") || strings.Contains(path, "{$}") {
		return
	}
	switch strings.Count(path, "{") {
	case 0:
		if f.exact == nil {
			f.exact = map[string]map[string]*routed{}
		}
		if f.exact[method] == nil {
			f.exact[method] = map[string]*routed{}
		}
		f.exact[method][path] = rt
	case 1:
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		prefix, name, suffix := path[:i], path[i+1:j], path[j+1:]
		if strings.HasSuffix(prefix, "/") && (suffix == "" || suffix[0] == '/') {
			f.wild = append(f.wild, fastWild{method: method, prefix: prefix, name: name, suffix: suffix, rt: rt})
		}
	}
}

// find returns the route of r, with its path value set, or nil for the
// mux to decide. A literal pattern wins over a wildcard one, as in the
// mux.
func (f *fastRoutes) find(r *http.Request) *routed {
	p := r.URL.Path
	if r.URL.RawPath != "" || strings.Contains(p, "//") || strings.Contains(p, "/.") {
		return nil
	}
	if rt := f.exact[r.Method][p]; rt != nil {
		r.Pattern = rt.pattern
		return rt
	}
	for i := range f.wild {
		w := &f.wild[i]
		if w.method != r.Method || len(p) <= len(w.prefix)+len(w.suffix) || !strings.HasPrefix(p, w.prefix) || !strings.HasSuffix(p, w.suffix) {
			continue
		}
		v := p[len(w.prefix) : len(p)-len(w.suffix)]
		if strings.IndexByte(v, '/') >= 0 {
			continue
		}
		r.Pattern = w.rt.pattern
		return w.rt
	}
	return nil
}

// pathValue is r.PathValue(name), also for a request fastRoutes routed:
// the segment of the path where r.Pattern has {name}. find routed such a
// request only if its path is clean and that segment is not empty and
// holds no slash, which is what the mux would have set; the mux never
// sets an empty value, so an empty PathValue means the mux did not route
// r.
func pathValue(r *http.Request, name string) string {
	if v := r.PathValue(name); v != "" {
		return v
	}
	_, pat, _ := strings.Cut(r.Pattern, " ")
	// The pattern's first wildcard must be {name}, and the only one: read
	// in place, as this runs more than once on every request.
	i, n := strings.IndexByte(pat, '{'), len(name)
	if i < 0 || len(pat) < i+n+2 || pat[i+1:i+1+n] != name || pat[i+1+n] != '}' {
		return ""
	}
	prefix, suffix, p := pat[:i], pat[i+n+2:], r.URL.Path
	if strings.IndexByte(suffix, '{') >= 0 || len(p) <= len(prefix)+len(suffix) ||
		!strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, suffix) {
		return ""
	}
	v := p[len(prefix) : len(p)-len(suffix)]
	if strings.IndexByte(v, '/') >= 0 {
		return ""
	}
	return v
}

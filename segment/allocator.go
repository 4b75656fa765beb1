package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures an Allocator. The zero value of every field means its
// default.
type Config struct {
	// MaxWait bounds how long a caller waits for a range when a tag's
	// buffers are empty and a fetch is in flight; then ErrUnavailable.
	// Default 100 ms.
	MaxWait time.Duration
	// FirstWait bounds the wait for a tag's first range instead, as Leaf
	// and Tinyid wait for it: a cold tag on a slow store is served, not
	// refused. Default 1.5 s (below the Go client's 2 s request timeout).
	FirstWait time.Duration
	// Threshold is the share of a range left when the next one is
	// fetched, at the latest. Default 0.9: once a tenth is served, Leaf's
	// rule (SegmentIDGenImpl: idle < 0.9 * step); (0, 1).
	Threshold float64
	// Budget is the store pause the buffers must outlast: the next range
	// is fetched, at the latest, when what is left would last Budget at
	// the observed rate. (A range that lasts less than Period doubles the
	// next step, so at a steady rate ranges soon last far longer than
	// Budget, up to MaxStep.) Default 5 s.
	Budget time.Duration
	// Period is the time one range should last: a range used up faster
	// doubles the next step, one that lasted over twice as long halves
	// it. Default 15 min.
	Period time.Duration
	// MaxStep caps the adaptive step. Default 1,000,000; at most
	// StepLimit.
	MaxStep int64
	// FetchTimeout bounds one store round trip. Default 5 s.
	FetchTimeout time.Duration
	// MaxID, if set, returns the largest ID the allocator may issue for a
	// tag, or 0 for no bound below the store's own: a range reaching past
	// it is cut short, and a range starting past it answers ErrExhausted.
	// JavaScriptSafe is the bound of IDs JavaScript holds exactly.
	MaxID func(tag string) int64
	// Opaque, if set, returns the permutation a tag's IDs pass through on
	// the way out, or nil for plain IDs. Every range is checked against
	// the permutation its tag records (CheckPermutation): a tag is served
	// only as it was created, opaque or plain. Nil: every tag is plain.
	Opaque func(tag string) Permutation
}

// JavaScriptSafe is the largest ID JavaScript's Number holds exactly,
// 2^53−1 (Number.MAX_SAFE_INTEGER), as a Config.MaxID bound.
const JavaScriptSafe int64 = 1<<53 - 1

func (c Config) withDefaults() Config {
	if c.MaxWait == 0 {
		c.MaxWait = 100 * time.Millisecond
	}
	if c.FirstWait == 0 {
		c.FirstWait = 1500 * time.Millisecond
	}
	if c.Threshold == 0 {
		c.Threshold = 0.9
	}
	if c.Budget == 0 {
		c.Budget = 5 * time.Second
	}
	if c.Period == 0 {
		c.Period = 15 * time.Minute
	}
	if c.MaxStep == 0 {
		c.MaxStep = 1_000_000
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = 5 * time.Second
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.MaxWait < 0:
		return fmt.Errorf("segment: max wait %s is negative", c.MaxWait)
	case c.FirstWait < 0:
		return fmt.Errorf("segment: first wait %s is negative", c.FirstWait)
	case c.Budget < 0:
		return fmt.Errorf("segment: budget %s is negative", c.Budget)
	case !(c.Threshold > 0 && c.Threshold < 1):
		return fmt.Errorf("segment: threshold %g outside (0, 1)", c.Threshold)
	case c.Period <= 0:
		return fmt.Errorf("segment: period %s is not positive", c.Period)
	case c.MaxStep < 1 || c.MaxStep > StepLimit:
		return fmt.Errorf("segment: max step %d: want 1 to %d", c.MaxStep, StepLimit)
	case c.FetchTimeout <= 0:
		return fmt.Errorf("segment: fetch timeout %s is not positive", c.FetchTimeout)
	}
	return nil
}

// Allocator serves IDs per tag from ranges reserved in a Store. It is safe
// for concurrent use.
type Allocator struct {
	store  Store
	cfg    Config
	limits Limits // the store's: a tag past them is refused before any lookup

	tags atomic.Pointer[map[string]*Handle] // copy on write
	mu   sync.Mutex                         // serializes writers of tags

	// unknown remembers tags the store did not have (UnknownFor), and
	// lookups the store answers now, shared by every caller of one tag.
	unknownMu sync.Mutex
	unknown   map[string]time.Time
	lookups   map[string]*lookupCall

	ctx    context.Context // cancelled by Close; fetches run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
	// fetchMu orders Close against startFetch: no fetch is added to wg
	// once Close has marked the allocator closed.
	fetchMu sync.Mutex
}

// NewAllocator validates cfg and returns an allocator on store. It does no
// I/O and starts no goroutines: a tag's first use loads it, and fetches
// run in the background from then on until Close.
func NewAllocator(store Store, cfg Config) (*Allocator, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if store == nil {
		return nil, errors.New("segment: no store")
	}
	a := &Allocator{store: store, cfg: cfg, limits: LimitsOf(store), unknown: map[string]time.Time{}, lookups: map[string]*lookupCall{}}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.tags.Store(&map[string]*Handle{})
	return a, nil
}

// Next returns a new ID of tag.
func (a *Allocator) Next(ctx context.Context, tag string) (int64, error) {
	if h := (*a.tags.Load())[tag]; h != nil {
		return h.Next(ctx)
	}
	h, err := a.Tag(ctx, tag)
	if err != nil {
		return 0, err
	}
	return h.Next(ctx)
}

// NextN fills dst with new IDs of tag, in increasing order; a batch may
// span ranges. It returns the number written: len(dst), or fewer with an
// error.
func (a *Allocator) NextN(ctx context.Context, tag string, dst []int64) (int, error) {
	h, err := a.Tag(ctx, tag)
	if err != nil {
		return 0, err
	}
	return h.NextN(ctx, dst)
}

// The allocator's memory of the store's answers about tags it does not
// serve is bounded: a tag the store did not have is answered as unknown,
// without asking again, for UnknownFor; at most MaxUnknownTags such tags
// are remembered (past it all are forgotten at once). Together with one
// lookup at a time per tag, a flood of requests for missing tags reaches
// the store at most once per tag and UnknownFor.
const (
	UnknownFor     = time.Second
	MaxUnknownTags = 10_000
)

// Tag returns the handle of tag, loading it from the store on first use:
// a tag created in the store directly is picked up without a restart
// (within UnknownFor of a request that found it missing). Hot loops keep
// the handle and skip the lookup. A tag that is not valid UTF-8 or longer
// than the store holds is refused (a *TagRuleError) before any lookup.
func (a *Allocator) Tag(ctx context.Context, tag string) (*Handle, error) {
	if h := (*a.tags.Load())[tag]; h != nil {
		return h, nil
	}
	if a.closed.Load() {
		return nil, ErrClosed
	}
	if err := CheckTag(tag, a.limits); err != nil {
		return nil, err
	}
	info, err := a.lookup(ctx, tag)
	if err != nil {
		return nil, &TagError{Tag: tag, Err: err}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old := *a.tags.Load()
	if h := old[tag]; h != nil {
		return h, nil
	}
	p := a.permutation(tag)
	if err := CheckPermutation(tag, info.Opaque, p); err != nil {
		return nil, err
	}
	if err := checkSpace(tag, p, a.maxID(tag)); err != nil {
		return nil, err
	}
	h := newHandle(a, tag, info.Step)
	h.perm, h.recorded = p, Recorded(p)
	tags := make(map[string]*Handle, len(old)+1)
	for k, v := range old {
		tags[k] = v
	}
	tags[tag] = h
	a.tags.Store(&tags)
	return h, nil
}

// Loaded reports whether tag is served here already: its handle was
// loaded, so using it asks the store nothing.
func (a *Allocator) Loaded(tag string) bool { return (*a.tags.Load())[tag] != nil }

// permutation returns the permutation of tag's IDs, nil for plain IDs.
func (a *Allocator) permutation(tag string) Permutation {
	if a.cfg.Opaque == nil {
		return nil
	}
	return a.cfg.Opaque(tag)
}

// maxID returns the largest ID tag may issue, 0 for the store's bound.
func (a *Allocator) maxID(tag string) int64 {
	if a.cfg.MaxID == nil {
		return 0
	}
	return a.cfg.MaxID(tag)
}

// Opaque reports whether tag's IDs pass through a permutation.
func (a *Allocator) Opaque(tag string) bool { return a.permutation(tag) != nil }

// CreateTag creates tag in the allocator's store, recording the
// permutation its IDs pass through here (see segment.CreateTag).
func (a *Allocator) CreateTag(ctx context.Context, tag string, first, step int64, description string) error {
	p := a.permutation(tag)
	if err := checkSpace(tag, p, a.maxID(tag)); err != nil {
		return err
	}
	return CreateTag(ctx, a.store, tag, first, step, description, p)
}

// CheckPermutation returns a *PermutationError unless recorded, the
// permutation record of tag's row, is the one this allocator applies.
func (a *Allocator) CheckPermutation(tag, recorded string) error {
	return CheckPermutation(tag, recorded, a.permutation(tag))
}

// CheckTags lists the store's tags and returns a *PermutationError
// (errors.Is ErrPermutation) for each that records another permutation
// than this allocator gives it: opaque where Config.Opaque leaves it
// plain, plain where it makes it opaque, another key or tweak. Serving
// such a tag would mix two permutations in one ID space, so a program
// calls it before it serves, as firn serve does; every range is checked
// as well, so a tag the store could not list in time is refused on first
// use instead. An error of the store's listing is returned as it is (it
// matches no ErrPermutation).
func (a *Allocator) CheckTags(ctx context.Context) error {
	tags, err := a.store.Tags(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tags {
		if err := a.CheckPermutation(t.Tag, t.Opaque); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StartCheckTags runs CheckTags in the background, bounded by d (a store
// slow to list its tags must not hold up a start: every range is checked
// on first use anyway), and returns the channel its one result arrives
// on.
func (a *Allocator) StartCheckTags(ctx context.Context, d time.Duration) <-chan error {
	checked := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		checked <- a.CheckTags(ctx)
	}()
	return checked
}

// OpaqueTags reports whether any tag's IDs may be opaque here.
func (a *Allocator) OpaqueTags() bool { return a.cfg.Opaque != nil }

// CheckHandOut returns an error unless a range of tag, from a row that
// records the permutation record recorded, may be handed to a caller
// that issues from it itself (Tinyid's nextSegmentId): never for an
// opaque tag (ErrOpaqueRange: a range is plain IDs), nor for a row that
// records a permutation (a *PermutationError).
func (a *Allocator) CheckHandOut(tag, recorded string) error {
	if a.Opaque(tag) {
		return &TagError{Tag: tag, Err: ErrOpaqueRange}
	}
	return CheckPermutation(tag, recorded, nil)
}

// Reveal undoes the permutation of tag's IDs: the plain ID behind an
// opaque one. The tag is looked up as Next looks it up (Tag), so a tag the
// store does not have gives ErrUnknownTag, and the permutation is the one
// checked against the tag's row; a plain tag gives ErrInvalid.
func (a *Allocator) Reveal(ctx context.Context, tag string, id uint64) (int64, error) {
	h, err := a.Tag(ctx, tag)
	if err != nil {
		return 0, err
	}
	p := h.perm
	if p == nil {
		return 0, &TagError{Tag: tag, Err: Errorf(ErrInvalid, ": the tag's IDs are not opaque on this server")}
	}
	plain, err := p.Decode(id)
	if err != nil {
		return 0, &TagError{Tag: tag, Err: Errorf(ErrInvalid, ": ID %d does not fit the tag's %d-bit opaque space", id, p.Bits())}
	}
	return int64(plain), nil
}

// Close stops background fetches and waits for them. Buffered IDs are
// dropped — the store never hands them out again — and every call after
// Close returns ErrClosed. It is idempotent.
func (a *Allocator) Close(ctx context.Context) error {
	a.fetchMu.Lock()
	a.closed.Store(true)
	a.fetchMu.Unlock()
	for _, h := range *a.tags.Load() {
		h.drop()
	}
	a.cancel()
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats is a tag's buffer state.
type Stats struct {
	Tag        string
	Step       int64 // the step of the next fetch: the adaptive step
	Left       int64 // IDs left in the current range
	Prefetched int64 // IDs in the next range, already fetched
	Fetches    int64 // ranges fetched
	Errors     int64 // fetches that failed
	// ConfiguredStep is the tag's step in the store (firn tag create
	// --step, firn tag step): the least step the adaptive one returns to.
	ConfiguredStep int64
	// Current is the range being handed out (empty before the first
	// fetch), Next the range fetched ahead (empty when none is).
	Current, Next Range
	Latency       time.Duration // recent fetch latency
	Fetched       time.Time     // when the last range arrived; zero before one did
	Err           error         // why the last fetch failed; nil once one succeeds
}

// Stats returns the state of every loaded tag.
func (a *Allocator) Stats() []Stats {
	var out []Stats
	for _, h := range *a.tags.Load() {
		out = append(out, h.Stats())
	}
	return out
}

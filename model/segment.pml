/*
 * firn's segment mode with several stores per tag (docs/design.md §5),
 * model-checked with Spin.
 *
 * NS stores serve one tag, each issuing its own residue class: the row of
 * store s records its counter, its delta and its remainder. A range is one
 * atomic update of the row (counter += STEP) and holds the IDs of
 * [counter, counter+STEP) in the row's class. NA allocators (processes
 * over segment.Multi) reserve ranges from any store that is up, fail over
 * between stores, lose replies (the counter moved, the range is never
 * seen), crash (the buffered range is dropped, never reused) and restart,
 * and hand out the IDs of their current range one by one.
 *
 * Operator errors, at most NF of them in a run: an allocator's
 * configuration lists the stores in another order than the rows were
 * created in, or a row's remainder is edited by hand. segment.Multi takes
 * a range only if its row's delta is the number of stores and its
 * remainder the store's position in the configuration, checked on every
 * range.
 *
 * Safety: no ID is handed out twice (the assertion in hand).
 * MUT_CONFIG_ORDER takes the class from the configuration order instead
 * of the row; MUT_NONATOMIC reads the counter and writes it back in two
 * steps. model_test.go checks that Spin finds a duplicate for each.
 */

#ifndef NF
#define NF 1
#endif
#define NS 2            /* stores serving the tag */
#define NA 2            /* allocators */
#define STEP 4          /* IDs per range, before the residue filter */
#define MAXID 8         /* IDs 0..MAXID-1: each store gives two ranges */

byte cnt[NS];           /* the row's counter: the next range starts there */
byte dlt[NS];           /* the row's delta */
byte rem[NS];           /* the row's remainder */
bool up[NS];            /* the store answers */
bool issued[MAXID];     /* ID x was handed out */
byte nf;                /* operator errors so far */

#define FAULT (nf < NF)

proctype Env() {
	byte c;
	do
	:: atomic { up[0] = !up[0] }
	:: atomic { up[1] = !up[1] }
	/* a row edited by hand */
	:: atomic { FAULT -> nf++; select(c : 0 .. NS - 1); rem[0] = c }
	:: atomic { FAULT -> nf++; select(c : 0 .. NS - 1); rem[1] = c }
	od
}

proctype Alloc(byte a) {
	byte ord[NS];   /* the configuration: position -> store */
	byte pos, s, lo, hi, d, r, x, c;
	bool have;      /* a range is installed */
restart:
	/* the configuration lists the stores in creation order, or, as an
	 * operator error, in another one */
	atomic {
		have = 0; lo = 0; hi = 0; d = 0; r = 0; x = 0; c = 0; pos = 0; s = 0;
		if
		:: ord[0] = 0; ord[1] = 1
		:: FAULT -> nf++; ord[0] = 1; ord[1] = 0
		fi
	};
	do
	/* reserve a range from the store at any position: the primary, or
	 * the next one when it is down */
	:: !have ->
		select(pos : 0 .. NS - 1);
		s = ord[pos];
#ifdef MUT_NONATOMIC
		atomic { up[s] && cnt[s] + STEP <= MAXID -> c = cnt[s] };
		atomic { cnt[s] = c + STEP; lo = c; d = dlt[s]; r = rem[s]; c = 0 };
#else
		/* one atomic update of the row, which answers with its class */
		atomic { up[s] && cnt[s] + STEP <= MAXID ->
			lo = cnt[s]; cnt[s] = cnt[s] + STEP; d = dlt[s]; r = rem[s] };
#endif
		atomic {
			if
			:: skip         /* the reply arrives */
			:: lo = 0; d = 0; r = 0; pos = 0; s = 0; goto lost
			fi;
#ifdef MUT_CONFIG_ORDER
			/* the class is the store's position in this process's list */
			d = NS; r = pos;
#endif
			if
			:: d == NS && r == pos -> hi = lo + STEP; x = lo; have = 1
			:: else -> lo = 0; d = 0; r = 0     /* refused: ErrResidues */
			fi;
			pos = 0; s = 0
		};
lost:		skip
	/* hand out the next ID of the range in its class */
	:: atomic { have ->
		do
		:: x < hi && x % d != r -> x++
		:: else -> break
		od;
		if
		:: x < hi ->
			assert(!issued[x]);     /* no ID handed out twice */
			issued[x] = 1; x++
		:: else -> have = 0; lo = 0; hi = 0; d = 0; r = 0; x = 0
		fi }
	/* a crash drops the buffered range */
	:: goto restart
	od
}

init {
	atomic {
		/* the rows, created in the order of the set */
		dlt[0] = NS; rem[0] = 0; up[0] = 1;
		dlt[1] = NS; rem[1] = 1; up[1] = 1;
		run Env(); run Alloc(0); run Alloc(1)
	}
}

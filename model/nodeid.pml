/*
 * firn's node-ID protocol (docs/design.md §3), model-checked with Spin.
 *
 * NP processes compete for one node ID held in one store row: the owner's
 * token, whether its lease is live by the store's clock, and the HWM. Each
 * process claims the node, binds a generator to the lease, extends the HWM
 * ahead of the generator's time, and issues a tick t only while
 * t+1 <= the HWM the store confirmed (the HWM is an exclusive bound).
 *
 * Faults, at most NF of them in any run: a process crashes (its requests
 * in flight still land later), a request or a reply is lost, a reply
 * arrives after the caller gave up, a holder's lease expires while it
 * still renews (a paused process). Between faults, requests are delayed
 * and reordered at will: the store serves the NSLOT slots of the network
 * in any order. A lease nobody renews any more expires by the store's
 * clock at some point, which is not a fault. Wall clocks are not trusted
 * at all: a generator starts from whatever its clock reads, stepped back
 * or forward any distance, and extends the HWM to any target past its
 * last tick (its clock catches up with a stepped wall clock in either
 * direction).
 *
 * Safety: no tick is issued by two generators (the assertion in issue).
 * Liveness (ltl serves): once the faults are over, the store eventually
 * confirms a reservation to a holder, which then keeps it.
 *
 * Each MUT_ macro breaks one rule of the protocol; model_test.go checks
 * that Spin finds a duplicate tick for every one of them, and for
 * MUT_NO_EXPIRY (leases that never expire) a run in which no holder
 * serves. docs/guarantees.md maps every rule and mutant to the code.
 */

#ifndef NF
#define NF 1            /* faults in one run */
#endif
#define NP 2            /* processes competing for the node */
#define MAXT 3          /* ticks 0..MAXT-1 */
#define MAXH MAXT       /* HWMs 0..MAXH */
#define NSLOT 2         /* requests in flight at once */

#define MAX(a, b) ((a) > (b) -> (a) : (b))
#define MIN(a, b) ((a) < (b) -> (a) : (b))

mtype = { CLAIM, RENEW, RELEASE, READ, TAKE, OK, CONFLICT, LOST };

typedef Req {
	bool used;      /* the slot holds a request in flight */
	bool want;      /* its sender still waits for the answer */
	mtype kind;
	byte p;         /* sender */
	byte tok;
	byte target;
};
Req net[NSLOT];

typedef Rep {
	bool has;
	mtype res;
	byte tok;
	byte hwm;
};
Rep rep[NP];

/* The store's row for the node. */
byte owner;             /* token of the holder, 0 for none */
bool live;              /* the holder's lease has not expired */
byte hwm;               /* exclusive bound, in ticks */
byte ntok;              /* tokens handed out so far */

/* What the processes hold, for the checks and the environment. */
byte held[NP];          /* the token p renews, 0 if none */
bool ready[NP];         /* p holds a reservation the store confirmed */
bool issued[MAXT];      /* tick t was issued */
byte nf;                /* faults so far */
bool quiet;             /* no fault will happen any more */
bool crash[NP];         /* Env crashes p */

#define FAULT (!quiet && nf < NF)
/* HOLDS: a process renews token t, or is about to (the store's answer
 * to its claim is on its way). */
#define HOLDS(t) ((t) != 0 && (held[0] == (t) || held[1] == (t) || \
	(rep[0].has && rep[0].res == OK && rep[0].tok == (t)) || \
	(rep[1].has && rep[1].res == OK && rep[1].tok == (t))))
#define INFLIGHT(q) ((net[0].used && net[0].want && net[0].p == (q)) || (net[1].used && net[1].want && net[1].p == (q)))

/* A token for an acquisition by process q: a fresh one, or with
 * MUT_TOKEN_REUSE the host's name, the same for every process (the
 * processes are incarnations of one service on one host). */
#ifdef MUT_TOKEN_REUSE
#define NEWTOKEN(q) 1
#else
#define NEWTOKEN(q) ntok
#endif

inline send(kd, q, tk, tg, wt) {
	if
	:: !net[0].used -> i = 0
	:: else -> i = 1
	fi;
	net[i].used = 1; net[i].want = wt; net[i].kind = kd;
	net[i].p = q; net[i].tok = tk; net[i].target = tg
}
#define FREESLOT (!net[0].used || !net[1].used)

/* forget: p no longer waits for any answer (it gave up, or crashed). */
inline forget(q) {
	net[0].want = (net[0].want && net[0].p != q);
	net[1].want = (net[1].want && net[1].p != q);
	rep[q].has = 0
}

inline answer(i, r, t, h) {
	if
	:: net[i].want -> rep[net[i].p].has = 1; rep[net[i].p].res = r;
	   rep[net[i].p].tok = t; rep[net[i].p].hwm = h
	:: else -> skip
	fi
}

/* serve applies one request to the row, atomically: what a transaction
 * (SQL) or a Txn (etcd) does. */
inline serve(i) {
	if
	:: net[i].kind == CLAIM || net[i].kind == TAKE ->
		/* the HWM is read under the lock that takes the node */
		if
		:: owner == 0 || !live ->
			ntok++; owner = NEWTOKEN(net[i].p); live = 1;
			answer(i, OK, owner, hwm)
		:: else -> answer(i, CONFLICT, 0, 0)
		fi
	:: net[i].kind == READ -> answer(i, OK, 0, hwm)
	:: net[i].kind == RENEW ->
		/* fenced by the token and the lease, monotone */
		if
		:: owner == net[i].tok && live ->
#ifdef MUT_LOWER
			hwm = net[i].target;
#else
			hwm = MAX(hwm, net[i].target);
#endif
			answer(i, OK, 0, hwm)
		:: else -> answer(i, LOST, 0, 0)
		fi
	:: net[i].kind == RELEASE ->
		if
		:: owner == net[i].tok -> owner = 0; live = 0
		:: else -> skip
		fi
	fi;
	net[i].used = 0; net[i].want = 0
}

/* Store(i) serves network slot i: one process per slot, so that under
 * weak fairness no request waits forever once the faults are over; the
 * two slots are served in any order. */
proctype Store(byte i) {
	do
	:: atomic { net[i].used -> serve(i) }
	od
}

/* Env: the store's clock and the faults of the network and the clocks. */
proctype Env() {
	do
	/* a lease nobody renews expires by the store's clock (MUT_NO_EXPIRY:
	 * never, so a crashed holder keeps the node forever) */
#ifndef MUT_NO_EXPIRY
	:: atomic { owner != 0 && live && !HOLDS(owner) -> live = 0 }
#endif
	/* a holder paused past its TTL */
	:: atomic { FAULT && owner != 0 && live && HOLDS(owner) -> live = 0; nf++ }
	:: atomic { FAULT && net[0].used -> net[0].used = 0; net[0].want = 0; nf++ }
	:: atomic { FAULT && net[1].used -> net[1].used = 0; net[1].want = 0; nf++ }
	:: atomic { FAULT && rep[0].has -> rep[0].has = 0; nf++ }
	:: atomic { FAULT && rep[1].has -> rep[1].has = 0; nf++ }
	:: atomic { FAULT -> nf++; crash[0] = 1 }
	:: atomic { FAULT -> nf++; crash[1] = 1 }
	:: atomic { !quiet -> quiet = 1 }
	od
}

#define IDLE 0
#define WAITC 1         /* claim sent */
#define HOLD 2          /* node held, generator bound */
#define WAITR 3         /* renewal sent; the generator keeps serving */
#define WAITREAD 4      /* MUT_READ_OUTSIDE: HWM read sent */

/* A generator issues its next tick: never below the last one it issued
 * (gnext), otherwise at whatever its clock says (any tick ahead: the wall
 * clock it started from may have read anything), and only below the HWM
 * the store confirmed: tick t needs t+1 <= limit. */
#ifdef MUT_NORES
#define ISSUABLE(nx) ((nx) < MAXT)
#define TOP(nx) (MAXT - 1)
#else
#define ISSUABLE(nx) ((nx) < MAXT && (nx) + 1 <= limit)
#define TOP(nx) (limit - 1)
#endif
inline issue(nx) {
	select(t : nx .. TOP(nx));
	assert(!issued[t]);  /* no tick issued by two generators */
	issued[t] = 1;
	nx = t + 1;
	t = 0
}

/* bind starts a new generator on the lease, at the lease's start (the HWM
 * the claim read). */
inline bind() {
#ifdef MUT_NORES
	gnext = 0
#else
	gnext = start
#endif
}

proctype Host(byte p) {
	byte st, tok, start, limit, gnext, t, i;
	bool stale;     /* a renewal went unanswered since the last confirmed one */
#ifdef MUT_TWO_GEN
	bool bound2; byte gnext2;
#endif
restart:
	atomic {
		st = IDLE; tok = 0; start = 0; limit = 0; gnext = 0; stale = 0;
#ifdef MUT_TWO_GEN
		bound2 = 0; gnext2 = 0;
#endif
		held[p] = 0; ready[p] = 0
	};
	do
	/* claim the node: the store reads the HWM under the row lock */
#ifdef MUT_READ_OUTSIDE
	:: atomic { st == IDLE && FREESLOT -> send(READ, p, 0, 0, 1); st = WAITREAD }
	:: atomic { st == WAITREAD && rep[p].has ->
		start = rep[p].hwm; rep[p].has = 0;
		if
		:: FREESLOT -> send(TAKE, p, 0, 0, 1); st = WAITC
		:: else -> st = IDLE
		fi }
#else
	:: atomic { st == IDLE && FREESLOT -> send(CLAIM, p, 0, 0, 1); st = WAITC }
#endif
	:: atomic { st == WAITC && rep[p].has ->
		if
		:: rep[p].res == OK ->
			tok = rep[p].tok;
#ifndef MUT_READ_OUTSIDE
			start = rep[p].hwm;
#endif
			limit = start; held[p] = tok; bind(); st = HOLD
		:: else -> st = IDLE
		fi;
		rep[p].has = 0 }
	/* give up waiting: free when the request or its answer was lost, a
	 * fault when the answer is still on its way */
	:: atomic { (st == WAITC || st == WAITREAD) && !rep[p].has && (!INFLIGHT(p) || FAULT) ->
		if :: INFLIGHT(p) -> nf++ :: else -> skip fi;
		forget(p); st = IDLE }

	/* the generator serves, while the lease renews too */
	:: atomic { (st == HOLD || st == WAITR) && ISSUABLE(gnext) -> issue(gnext) }
#ifdef MUT_TWO_GEN
	:: atomic { (st == HOLD || st == WAITR) && !bound2 -> bound2 = 1; gnext2 = start }
	:: atomic { (st == HOLD || st == WAITR) && bound2 && ISSUABLE(gnext2) -> issue(gnext2) }
#endif

	/* the lease extends the HWM to the generator's time plus the window */
	:: atomic { st == HOLD && FREESLOT ->
		/* the generator's time plus the window: past its last tick */
		select(t : MIN(gnext + 1, MAXH) .. MAXH);
		send(RENEW, p, tok, t, 1);
#ifdef MUT_UNCONFIRMED
		limit = MAX(limit, t);
#endif
		t = 0;
		st = WAITR }
	:: atomic { st == WAITR && rep[p].has && rep[p].res == OK ->
		/* the limit moves only to what the store confirmed */
		limit = MAX(limit, rep[p].hwm); ready[p] = 1; stale = 0; rep[p].has = 0; st = HOLD }
	:: atomic { st == WAITR && !rep[p].has && (!INFLIGHT(p) || FAULT) ->
		if :: INFLIGHT(p) -> nf++ :: else -> skip fi;
		forget(p); stale = 1; st = HOLD }

	/* the lease is lost (the store said so, or no renewal was confirmed
	 * for a TTL): the reservation is frozen, the lease revoked, and the
	 * node claimed again with a new token and a new generator */
	:: atomic { (st == WAITR && rep[p].has && rep[p].res == LOST) || (st == HOLD && stale) ->
		forget(p); ready[p] = 0; stale = 0;
#ifdef MUT_REVIVE
		/* the same lease, bound to a new generator */
		bind(); st = HOLD
#else
		held[p] = 0;
		if
		:: FREESLOT -> send(RELEASE, p, tok, 0, 0)
		:: else -> skip
		fi;
		tok = 0; st = IDLE
#endif
	}
	od unless {
		/* Env decides when: an escape of unless takes priority */
		atomic { crash[p] -> crash[p] = 0; forget(p); held[p] = 0; ready[p] = 0 };
		goto restart
	}
}

init {
	atomic {
		run Store(0); run Store(1); run Env();
		run Host(0); run Host(1)
	}
}

#define anyready (ready[0] || ready[1])
ltl serves { [] (quiet -> <> [] anyready) }

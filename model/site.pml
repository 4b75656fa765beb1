/*
 * firn's sites (design: "Sites: several registries, one ID space"; the
 * argument of docs/design.md §3 across registries), model-checked with
 * Spin.
 *
 * A node value is a site part, fixed per site (a datacenter field), and a
 * leased part. The ledger records which site owns each site value, for
 * ever. Site A and site B each have a registry of their own, a store that
 * keeps per full node value an owner token and an HWM, and a site record:
 * the site's value, the value's floor and a released marker. The model
 * follows one site value V with NL nodes under it (leased parts
 * 0..NL-1): A owns V, then releases it to B, a site provisioned with no
 * value yet.
 *
 * A's holder claims nodes under V from A's registry, binds a generator at
 * the HWM its claim read, issues tick t only while t+1 <= the HWM the
 * registry confirmed, and raises the HWM by a write fenced by its token
 * and the absence of the marker, checked in the same atomic write. It may
 * release its node and claim one again (a restart), NACQ times at most.
 * It is cut off from everyone but its own registry: nothing tells it of
 * the release but its own renewals failing, after which it stops at its
 * confirmed HWM. Its requests are delayed at will, so they land at A's
 * registry in any order with the release's marker, and any answer may be
 * lost (a claim's outcome is then unknown, a renewal confirmed nothing).
 *
 * The release of V: (1) the marker is written into A's registry, one
 * atomic write; (2) once it is confirmed, the highest HWM of A's nodes
 * under V is read, and the ledger records it as V's floor, released, in
 * one write; (3) B claims V in the ledger, and B's registry records V and
 * its floor in its site record, in one write. B's holder asks for any
 * node under V at any time: B's registry refuses a claim whose node lies
 * outside the value its site record holds. A claim reads the HWM under
 * the lock that takes the node, and B's generator starts at that HWM or
 * the floor, whichever is higher (as if every node under V had been
 * advanced to the floor before B served it), and issues below the HWM its
 * registry confirmed.
 *
 * Safety: no tick of a full node value is issued twice, by either site
 * (the assertion in issue). Each MUT_ macro breaks one rule; model_test.go
 * checks that Spin finds a duplicate tick for every one of them:
 * MUT_OUTSIDE (B's registry serves a node outside its site's value),
 * MUT_NO_MARKER_CHECK (a renewal's fenced write does not see the
 * marker), MUT_FLOOR_BEFORE_MARKER (the floor is read before the marker
 * write is confirmed), MUT_NO_FLOOR (B's claimant does not start at the
 * floor). docs/guarantees.md maps every rule and mutant to the code.
 */

#ifndef NL
#define NL 2            /* leased nodes under the site value V */
#endif
#define MAXT 3          /* ticks 0..MAXT-1 of every node */
#define MAXH MAXT       /* HWMs 0..MAXH, exclusive bounds in ticks */
#define NACQ 2          /* acquisitions by A's holder */

#define MAX(a, b) ((a) > (b) -> (a) : (b))
#define MIN(a, b) ((a) < (b) -> (a) : (b))

#define NOVAL 0         /* a site record with no value yet */
#define V 1             /* the site value A releases to B */
#define SITEA 1
#define SITEB 2

/* A node lies inside a site whose record holds value s: every modelled
 * node's site part is V. */
#define INSITE(s) ((s) == V)

mtype = { CLAIM, RENEW, RELEASE, OK, REFUSED, LOST };

/* The ledger's claim of V. */
byte lowner = SITEA;    /* the site that owns V */
bool lreleased;         /* A released V */
byte lfloor;            /* V's floor, recorded with the release */

/* A's registry: its site record holds V and the marker. */
byte ownA[NL];          /* owner token per node, 0 for none */
byte hwmA[NL];
bool markA;             /* V released */
byte ntok;              /* tokens handed out so far */

/* B's registry: its site record holds no value until B claims V, then V
 * and its floor (B's marker is never written in the model). */
byte svalB = NOVAL;
byte floorB;
byte ownB[NL];
byte hwmB[NL];

/* A's holder's request and the registry's answer: delayed at will. */
bool apend;             /* a request is on its way to A's registry */
mtype akind;
byte anode, atok, atarget;
bool ahas;              /* the answer is back */
mtype ares;
byte ahwm;

/* The release's marker write and its confirmation. */
bool mpend, mdone;

bool issued[NL * MAXT]; /* tick t of node n was issued */

/* A generator on node n issues its next tick: never below the last one
 * it issued (nx), otherwise at whatever its clock says, and only below
 * the HWM its registry confirmed: tick t needs t+1 <= lim. */
#define ISSUABLE(nx, lim) ((nx) < MAXT && (nx) + 1 <= (lim))
inline issue(n, nx, lim) {
	select(t : nx .. lim - 1);
	assert(!issued[n * MAXT + t]);  /* no tick of a node issued twice */
	issued[n * MAXT + t] = 1;
	nx = t + 1;
	t = 0
}

/* serveA applies A's holder's request to A's registry, atomically. */
inline serveA() {
	if
	:: akind == CLAIM ->
		/* inside the site's value (A's record holds V), not
		 * released, free; the HWM is read under the lock that takes
		 * the node */
		if
		:: INSITE(V) && !markA && ownA[anode] == 0 ->
			ntok++; ownA[anode] = ntok;
			ares = OK; atok = ntok; ahwm = hwmA[anode]
		:: else -> ares = REFUSED
		fi
	:: akind == RENEW ->
		/* fenced by the token and the marker in one write, monotone */
#ifdef MUT_NO_MARKER_CHECK
		if
		:: ownA[anode] == atok ->
#else
		if
		:: ownA[anode] == atok && !markA ->
#endif
			hwmA[anode] = MAX(hwmA[anode], atarget);
			ares = OK; ahwm = hwmA[anode]
		:: else -> ares = LOST
		fi
	:: akind == RELEASE ->
		if
		:: ownA[anode] == atok -> ownA[anode] = 0
		:: else -> skip
		fi;
		ares = OK
	fi;
	apend = 0; anode = 0; atarget = 0;
	/* the answer arrives, or is lost */
	if
	:: ahas = 1
	:: ares = 0; atok = 0; ahwm = 0
	fi
}

/* A's registry serves the requests in flight in any order. */
proctype RegistryA() {
end:	do
	:: atomic { apend -> serveA() }
	:: atomic { mpend -> markA = 1; mpend = 0; mdone = 1 }
	od
}

#define IDLE 0
#define WAITC 1         /* claim sent */
#define HOLD 2          /* node held, generator bound */
#define WAITR 3         /* renewal sent; the generator keeps serving */
#define WAITREL 4       /* release sent; the generator has stopped */

/* HolderA: a process of site A, cut off from all but A's registry. */
proctype HolderA() {
	byte st, n, tok, limit, gnext, t, nacq;
end:	do
	:: atomic { st == IDLE && nacq < NACQ ->
		select(n : 0 .. NL - 1);
		apend = 1; akind = CLAIM; anode = n; st = WAITC }
	:: atomic { st == WAITC && ahas ->
		if
		:: ares == OK ->
			/* the generator starts at the HWM the claim read */
			tok = atok; limit = ahwm; gnext = ahwm; nacq++; st = HOLD
		:: else -> n = 0; st = IDLE
		fi;
		ahas = 0; ares = 0; atok = 0; ahwm = 0 }

	:: atomic { (st == HOLD || st == WAITR) && ISSUABLE(gnext, limit) ->
		issue(n, gnext, limit) }

	/* the lease extends the HWM past the generator's last tick */
	:: atomic { st == HOLD ->
		select(t : MIN(gnext + 1, MAXH) .. MAXH);
		apend = 1; akind = RENEW; anode = n; atok = tok; atarget = t;
		t = 0; st = WAITR }
	:: atomic { st == WAITR && ahas ->
		if
		:: ares == OK ->
			/* the limit moves only to what the registry confirmed */
			limit = MAX(limit, ahwm); st = HOLD
		:: else ->
			/* the lease is lost: the generator stops at its
			 * confirmed HWM, and the holder claims again */
			tok = 0; limit = 0; gnext = 0; n = 0; st = IDLE
		fi;
		ahas = 0; ares = 0; ahwm = 0 }

	/* the answer was lost: a claim's outcome is unknown (the node may
	 * stay claimed), a renewal confirmed nothing, a release is done */
	:: atomic { (st == WAITC || st == WAITR || st == WAITREL) && !apend && !ahas ->
		if
		:: st == WAITR -> st = HOLD
		:: else -> n = 0; tok = 0; st = IDLE
		fi }

	/* a restart: the generator stops, the claim is released */
	:: atomic { st == HOLD ->
		limit = 0; gnext = 0;
		apend = 1; akind = RELEASE; anode = n; atok = tok; st = WAITREL }
	:: atomic { st == WAITREL && ahas ->
		tok = 0; n = 0; st = IDLE;
		ahas = 0; ares = 0; atok = 0 }
	od
}

/* Release: `firn site release` gives V up. */
proctype Release() {
	byte n;
	/* (1) the marker, one atomic write to A's registry */
	mpend = 1;
#ifndef MUT_FLOOR_BEFORE_MARKER
	/* (2) only once the marker write is confirmed ... */
	mdone;
#endif
	/* ... the floor: the highest HWM of A's nodes under V, one read,
	 * recorded in the ledger with the release, one write */
	atomic {
		do
		:: n < NL -> lfloor = MAX(lfloor, hwmA[n]); n++
		:: else -> break
		od;
		n = 0; lreleased = 1
	}
}

/* ClaimB: `firn site claim` at B takes the released value in the ledger,
 * then records V and its floor in B's site record, one write. */
proctype ClaimB() {
	atomic { lreleased -> lowner = SITEB };
	atomic { svalB = V; floorB = lfloor }
}

/* HolderB: a process of site B. Its registry answers at once and never
 * ends its lease: within one registry, nodeid.pml checks the rest. */
proctype HolderB() {
	byte st, n, limit, gnext, t;
end:	do
	/* a claim of a node outside the site's value is refused */
	:: atomic { st == IDLE ->
		select(n : 0 .. NL - 1);
		if
#ifdef MUT_OUTSIDE
		:: ownB[n] == 0 ->
#else
		:: INSITE(svalB) && ownB[n] == 0 ->
#endif
			/* the HWM read under the lock that takes the node;
			 * the generator starts at the floor or past it */
			ownB[n] = 1;
#ifdef MUT_NO_FLOOR
			limit = hwmB[n];
#else
			limit = MAX(hwmB[n], floorB);
#endif
			gnext = limit; st = HOLD
		:: else -> n = 0
		fi }
	:: atomic { st == HOLD && ISSUABLE(gnext, limit) -> issue(n, gnext, limit) }
	/* a fenced, monotone extension, confirmed */
	:: atomic { st == HOLD && limit < MAXH ->
		select(t : MIN(gnext + 1, MAXH) .. MAXH);
		hwmB[n] = MAX(hwmB[n], t); limit = MAX(limit, hwmB[n]); t = 0 }
	od
}

init {
	atomic {
		run RegistryA(); run HolderA(); run Release();
		run ClaimB(); run HolderB()
	}
}

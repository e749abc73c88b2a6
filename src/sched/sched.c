#include "scheduler.h"

#include "engi/alloc.h"

#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum tag {
	TAG_READY = 1,	   /* worker -> 0: give me work (empty) */
	TAG_RESULT = 2,	   /* worker -> 0: uint64 cell + payload */
	TAG_ABORTED = 3,   /* worker -> 0: uint64 cell */
	TAG_GOVERN = 4,	   /* worker -> 0: a governor message (fixed-layout bytes) */
	TAG_PENDING = 5,   /* worker -> 0: uint64 cell + payload to verify */
	TAG_CELL = 10,	   /* 0 -> worker: uint64 cell */
	TAG_STOP = 11,	   /* 0 -> worker: empty */
	TAG_GOVERNED = 12, /* 0 -> worker: double, the governor's answer */
	TAG_DRAIN = 13,	   /* 0 -> worker: do not start a cell sent ahead */
	TAG_VERIFY = 14,   /* 0 -> worker: uint64 cell + its episode's payload */
};

/* The queue is re-sorted by the priority hook after this many results. */
#define SCHED_RESORT_EVERY 64

static int g_mpi, g_rank, g_size = 1, g_local_size = 1;
static volatile sig_atomic_t g_stop;
static atomic_llong g_stop_at_ns;
static double g_grace_s = 60;

static long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	if (!g_stop) {
		atomic_store(&g_stop_at_ns, mono_ns());
		g_stop = 1;
	}
}

void sched_request_stop(void)
{
	on_stop_signal(0);
}

void sched_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int sched_stop_requested(void)
{
	return g_stop != 0;
}

int sched_should_abort(void)
{
	if (!g_stop)
		return 0;
	return (double)(mono_ns() - atomic_load(&g_stop_at_ns)) * 1e-9 > g_grace_s;
}

static int launched_by_mpi(void)
{
	static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
				     "MPI_LOCALNRANKS",	     NULL};
	for (const char **v = vars; *v; v++)
		if (getenv(*v))
			return 1;
	return 0;
}

int sched_init(int *argc, char ***argv, int force_serial, struct engi_error *err)
{
	if (force_serial || !launched_by_mpi()) {
		g_mpi = 0;
		g_rank = 0;
		g_size = 1;
		return 0;
	}
	int provided;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		RAISE(err, ENGI_EENV, "MPI_Init_thread failed");
	if (provided < MPI_THREAD_FUNNELED) {
		MPI_Finalize();
		RAISE(err, ENGI_EENV, "the MPI library offers no MPI_THREAD_FUNNELED");
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_size);
	MPI_Comm node;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
	    MPI_SUCCESS) {
		MPI_Comm_size(node, &g_local_size);
		MPI_Comm_free(&node);
	}
	g_mpi = 1;
	return 0;
}

void sched_library_version(char *buf, size_t n)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	if (n == 0)
		return;
	buf[0] = '\0';
	if (MPI_Get_library_version(v, &len) != MPI_SUCCESS)
		return;
	v[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
	v[strcspn(v, ",\n")] = '\0';
	snprintf(buf, n, "%s", v);
}

void sched_finalize(void)
{
	if (g_mpi)
		MPI_Finalize();
	g_mpi = 0;
}

int sched_rank(void)
{
	return g_rank;
}

int sched_size(void)
{
	return g_size;
}

int sched_local_size(void)
{
	return g_local_size;
}

int sched_is_mpi(void)
{
	return g_mpi;
}

int sched_agree(int ok)
{
	if (!g_mpi)
		return ok != 0;
	int in = ok != 0, out = 0;
	MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return out;
}

int sched_same_digest(const char *digest)
{
	if (!g_mpi)
		return 1;
	char buf[65] = "";
	if (g_rank == 0)
		strncpy(buf, digest, 64);
	MPI_Bcast(buf, 65, MPI_CHAR, 0, MPI_COMM_WORLD);
	return sched_agree(strncmp(buf, digest, 64) == 0);
}

void sched_bcast_str(char *buf, size_t n)
{
	if (!g_mpi || n == 0)
		return;
	MPI_Bcast(buf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
	buf[n - 1] = '\0';
}

double sched_sum(double v)
{
	if (!g_mpi)
		return v;
	double out = 0;
	MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return out;
}

/* Waiting for a message without spinning a core (ranks often share cores):
 * naps start at 20 us and double up to 2 ms while nothing happens. */
static void nap(long *ns)
{
	*ns = *ns ? *ns * 2 : 20000;
	if (*ns > 2000000)
		*ns = 2000000;
	struct timespec ts = {0, *ns};
	nanosleep(&ts, NULL);
}

/* ---- rank 0 ---- */

struct slot {
	pthread_t th;
	atomic_int state; /* 0 free, 1 running, 2 finished */
	size_t cell;
	char *input; /* a verification item: its episode's payload */
	size_t input_len;
	char *payload;
	size_t len;
	int rc;
	int joinable;
	const struct sched_hooks *h;
};

static void *slot_main(void *p)
{
	struct slot *s = p;
	s->payload = NULL;
	s->len = 0;
	s->rc = s->h->run(s->h->ctx, s->cell, 0, s->input, s->input_len, &s->payload, &s->len);
	atomic_store(&s->state, 2);
	return NULL;
}

enum worker_state { W_BUSY, W_PARKED, W_STOPPED };

struct held {
	size_t cell;
	int rank;
	char *buf;
	size_t off, len;
	int has_payload;
	int verified; /* the result of a verification item */
};

/* A cell whose episode is over and whose verification waits for a slot. */
struct vitem {
	size_t cell;
	char *input; /* the episode's payload (owned) */
	size_t len;
};

struct master {
	size_t *order; /* rank 0's own copy: re-sorted as predictions improve */
	size_t n;
	unsigned char *taken;
	size_t first; /* every order[i] with i < first is taken */
	const struct sched_hooks *h;
	struct sched_status st;
	size_t unsettled; /* results delivered since the last settle */
	int *wstate;
	size_t *wcell;
	/* a cell sent ahead to a busy worker, started when its current one
	 * ends (hides the dispatch round trip) */
	size_t *wnext;
	unsigned char *whas_next, *wdrained;
	unsigned char *wverify; /* the worker's item is a verification */
	size_t since_resort;
	int failed;
	struct engi_error *err;
	struct held *held;
	size_t nheld, aheld;
	/* verification items, first in first out: vq[vhead..vtail) */
	struct vitem *vq;
	size_t vhead, vtail, vcap;
};

static int vq_push(struct master *m, size_t cell, char *input, size_t len)
{
	if (m->vhead > 0 && m->vtail == m->vcap) {
		memmove(m->vq, m->vq + m->vhead, (m->vtail - m->vhead) * sizeof(*m->vq));
		m->vtail -= m->vhead;
		m->vhead = 0;
	}
	TRY(engi_grow((void **)&m->vq, &m->vcap, m->vtail + 1, sizeof(*m->vq)));
	m->vq[m->vtail++] = (struct vitem){cell, input, len};
	m->st.verifying++;
	return 0;
}

/* The next verification item, or NULL. Verification is handed out before
 * any episode (it finishes cells that are already paid for), and also
 * while draining, until the grace time is over. */
static struct vitem *vq_take(struct master *m, struct vitem *out)
{
	if (m->vhead == m->vtail || m->failed || sched_should_abort())
		return NULL;
	*out = m->vq[m->vhead++];
	return out;
}

/* Position in the queue of the next admissible cell, or -1 (none
 * admissible now), or -2 (none left). */
static long next_pos(struct master *m)
{
	while (m->first < m->n && m->taken[m->first])
		m->first++;
	if (m->first >= m->n)
		return -2;
	for (size_t i = m->first; i < m->n; i++)
		if (!m->taken[i] && (!m->h->admit || m->h->admit(m->h->ctx, m->order[i])))
			return (long)i;
	return -1;
}

/* Next admissible cell, or -1 (none admissible now), or -2 (none left).
 * With take = 0 it only looks. */
static long pick(struct master *m, int take)
{
	long i = next_pos(m);
	if (i < 0)
		return i;
	if (take) {
		m->taken[i] = 1;
		m->st.queued--;
	}
	return (long)m->order[i];
}

struct prio {
	double p;
	size_t pos;
};

static int prio_cmp(const void *a, const void *b)
{
	const struct prio *x = a, *y = b;
	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Longest predicted first again, now that results have moved the
 * predictions; ties keep their order. */
static void resort(struct master *m)
{
	m->since_resort = 0;
	if (!m->h->priority)
		return;
	size_t k = 0;
	for (size_t i = m->first; i < m->n; i++)
		k += !m->taken[i];
	struct prio *p = engi_reallocarray(NULL, k + 1, sizeof(*p));
	if (!p)
		return; /* keep the old order: slower, never wrong */
	k = 0;
	for (size_t i = m->first; i < m->n; i++)
		if (!m->taken[i])
			p[k++] = (struct prio){m->h->priority(m->h->ctx, m->order[i]), m->order[i]};
	for (size_t i = 0; i < k; i++) {
		double v = p[i].p;
		p[i].p = v == v ? v : 0; /* a NaN would break the order */
	}
	/* pos carries the cell for the tie-break by former position: the
	 * former position order equals the scan order, so number them */
	size_t *cells = engi_reallocarray(NULL, k + 1, sizeof(*cells));
	if (!cells) {
		engi_free(p);
		return;
	}
	for (size_t i = 0; i < k; i++) {
		cells[i] = p[i].pos;
		p[i].pos = i;
	}
	qsort(p, k, sizeof(*p), prio_cmp);
	for (size_t i = 0; i < k; i++) {
		m->order[m->first + i] = cells[p[i].pos];
		m->taken[m->first + i] = 0;
	}
	m->n = m->first + k;
	engi_free(cells);
	engi_free(p);
}

static int dispatching(const struct master *m)
{
	return !g_stop && !m->failed;
}

static void send_stop(struct master *m, int w)
{
	MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, MPI_COMM_WORLD);
	m->wstate[w] = W_STOPPED;
}

static void send_cell(int w, size_t c)
{
	uint64_t cell = (uint64_t)c;
	MPI_Send(&cell, 1, MPI_UINT64_T, w, TAG_CELL, MPI_COMM_WORLD);
}

/* A busy worker gets its next cell ahead of time, when the hooks allow it
 * and enough cells are queued that the tail still goes to idle workers. */
static void feed_ahead(struct master *m, int w)
{
	if (!m->h->prefetch || m->whas_next[w] || m->wstate[w] != W_BUSY || !dispatching(m) ||
	    m->st.queued <= (size_t)g_size)
		return;
	long i = next_pos(m);
	if (i < 0 || !m->h->prefetch(m->h->ctx, m->order[i]))
		return;
	m->taken[i] = 1; /* it stays counted as queued until it starts */
	size_t c = m->order[i];
	send_cell(w, c);
	m->wnext[w] = c;
	m->whas_next[w] = 1;
	if (m->h->started)
		m->h->started(m->h->ctx, c, w);
}

static void send_verify(struct master *m, int w, struct vitem *v)
{
	char *msg = engi_malloc(v->len + 8);
	uint64_t cell = (uint64_t)v->cell;
	if (msg && v->len <= (size_t)INT32_MAX - 8) {
		memcpy(msg, &cell, 8);
		memcpy(msg + 8, v->input, v->len);
		MPI_Send(msg, (int)(v->len + 8), MPI_BYTE, w, TAG_VERIFY, MPI_COMM_WORLD);
	} else {
		/* cannot send it: the worker verifies nothing and says so */
		MPI_Send(&cell, 8, MPI_BYTE, w, TAG_VERIFY, MPI_COMM_WORLD);
	}
	engi_free(msg);
	engi_free(v->input);
	m->wverify[w] = 1;
	m->wstate[w] = W_BUSY;
	m->wcell[w] = v->cell;
	m->st.running++;
}

/* A worker is idle: give it a verification or a cell, park it, or stop
 * it. While draining it is parked, not stopped, as long as a running
 * episode may still bring a verification to do. */
static void feed(struct master *m, int w)
{
	struct vitem v;
	if (vq_take(m, &v)) {
		send_verify(m, w, &v);
		return;
	}
	if (!dispatching(m)) {
		if (m->st.running > 0 && !m->failed && !sched_should_abort())
			m->wstate[w] = W_PARKED;
		else
			send_stop(m, w);
		return;
	}
	long c = pick(m, 1);
	if (c == -2) {
		send_stop(m, w);
		return;
	}
	if (c == -1) {
		m->wstate[w] = W_PARKED;
		return;
	}
	send_cell(w, (size_t)c);
	m->wstate[w] = W_BUSY;
	m->wverify[w] = 0;
	m->wcell[w] = (size_t)c;
	m->st.running++;
	if (m->h->started)
		m->h->started(m->h->ctx, (size_t)c, w);
	feed_ahead(m, w);
}

/* A worker's cell came back: the cell sent ahead (if any) is running now,
 * else the worker is idle and is fed. */
static void worker_done(struct master *m, int w, size_t cell)
{
	if (m->whas_next[w] && m->wnext[w] != cell) {
		m->whas_next[w] = 0;
		m->wverify[w] = 0;
		m->wcell[w] = m->wnext[w];
		m->st.queued--;
		m->st.running++;
		feed_ahead(m, w);
		return;
	}
	m->whas_next[w] = 0;
	feed(m, w);
}

/* Draining: workers holding a cell sent ahead are told not to start it;
 * it comes back unrun (or run, if it had started). */
static void recall_ahead(struct master *m)
{
	for (int w = 1; w < g_size; w++)
		if (m->whas_next[w] && !m->wdrained[w]) {
			MPI_Send(NULL, 0, MPI_BYTE, w, TAG_DRAIN, MPI_COMM_WORLD);
			m->wdrained[w] = 1;
		}
}

static void deliver(struct master *m, size_t cell, int rank, const char *payload, size_t len,
		    int verified)
{
	m->st.running--;
	if (verified)
		m->st.verifying--;
	m->since_resort++;
	if (payload)
		m->st.done++;
	else
		m->st.interrupted++;
	if (m->failed)
		return;
	if (m->h->finished(m->h->ctx, cell, rank, payload, len, m->err) < 0)
		m->failed = 1;
	m->unsettled++;
}

/* The results delivered since the last call made durable together. */
static void settle(struct master *m)
{
	if (!m->unsettled)
		return;
	m->unsettled = 0;
	if (!m->h->settle)
		return;
	/* after a failure too: what was written before it is kept, and the
	 * first failure is the one reported */
	struct engi_error later;
	engi_error_init(&later);
	if (m->h->settle(m->h->ctx, m->failed ? &later : m->err) < 0)
		m->failed = 1;
}

/* The hooks of the running sched_run, for sched_govern. */
static const struct sched_hooks *g_hooks;
static pthread_mutex_t g_govern_lock = PTHREAD_MUTEX_INITIALIZER;

static double govern_here(const void *msg, size_t len)
{
	const struct sched_hooks *h = g_hooks;
	if (!h || !h->govern)
		return 0;
	pthread_mutex_lock(&g_govern_lock);
	double v = h->govern(h->ctx, msg, len);
	pthread_mutex_unlock(&g_govern_lock);
	return v;
}

double sched_govern(const void *msg, size_t n)
{
	if (!g_hooks || n > SCHED_GOVERN_MSG_MAX)
		return 0;
	if (!g_mpi || g_rank == 0)
		return govern_here(msg, n);
	MPI_Send(msg, (int)n, MPI_BYTE, 0, TAG_GOVERN, MPI_COMM_WORLD);
	int flag = 0;
	long nap_ns = 0;
	MPI_Status st;
	while (!flag) {
		MPI_Iprobe(0, TAG_GOVERNED, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			nap(&nap_ns);
	}
	double v = 0;
	MPI_Recv(&v, 1, MPI_DOUBLE, 0, TAG_GOVERNED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return v;
}

static int hold(struct master *m, size_t cell, int rank, char *buf, size_t off, size_t len,
		int has_payload, int verified)
{
	TRY(engi_grow((void **)&m->held, &m->aheld, m->nheld + 1, sizeof(*m->held)));
	m->held[m->nheld++] = (struct held){cell, rank, buf, off, len, has_payload, verified};
	return 0;
}

/* A cell's episode is over and its payload must be verified: the payload
 * (buf + off, len bytes; buf is taken) becomes a verification item. */
static void pending_at(struct master *m, size_t cell, char *buf, size_t off, size_t len)
{
	m->st.running--;
	if (m->h->pending)
		m->h->pending(m->h->ctx, cell, buf + off, len);
	if (off) {
		memmove(buf, buf + off, len);
		buf[len] = '\0'; /* buf holds off + len + 1 bytes */
	}
	if (vq_push(m, cell, buf, len) < 0) {
		engi_free(buf);
		m->st.interrupted++;
		if (m->h->finished(m->h->ctx, cell, 0, NULL, 0, m->err) < 0)
			m->failed = 1;
	}
}

static void pending(struct master *m, size_t cell, char *buf, size_t count)
{
	pending_at(m, cell, buf, 8, count >= 8 ? count - 8 : 0);
}

static int poll_workers(struct master *m)
{
	int activity = 0;
	for (;;) {
		int flag = 0;
		MPI_Status stt;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &stt);
		if (!flag)
			return activity;
		activity = 1;
		int w = stt.MPI_SOURCE, count = 0;
		MPI_Get_count(&stt, MPI_BYTE, &count);
		char *buf = engi_malloc((size_t)count + 1);
		if (!buf) {
			/* cannot even receive: drop to a zero-length receive is not
			 * allowed, so fail the run after draining this message */
			static char scratch[8];
			MPI_Recv(scratch, 0, MPI_BYTE, w, stt.MPI_TAG, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			engi_raise(m->err, ENGI_ENOMEM, "out of memory receiving a result");
			m->failed = 1;
			continue;
		}
		MPI_Recv(buf, count, MPI_BYTE, w, stt.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		buf[count] = '\0';
		if (stt.MPI_TAG == TAG_GOVERN) {
			/* a question from a running cell: answer, the worker stays busy */
			double v = govern_here(buf, (size_t)count);
			MPI_Send(&v, 1, MPI_DOUBLE, w, TAG_GOVERNED, MPI_COMM_WORLD);
			engi_free(buf);
			continue;
		}
		if (stt.MPI_TAG == TAG_RESULT || stt.MPI_TAG == TAG_ABORTED ||
		    stt.MPI_TAG == TAG_PENDING) {
			uint64_t cell = 0;
			if (count >= 8)
				memcpy(&cell, buf, 8);
			int result = stt.MPI_TAG != TAG_ABORTED;
			int verified = m->wverify[w] && m->wcell[w] == (size_t)cell;
			/* a verification frees no caps: they went with its episode */
			int first = 0;
			if (!verified && m->h->released)
				first = m->h->released(m->h->ctx, (size_t)cell);
			if (stt.MPI_TAG == TAG_PENDING) {
				pending(m, (size_t)cell, buf, (size_t)count);
				worker_done(m, w, (size_t)cell);
				continue;
			}
			/* the worker gets its next cell before rank 0 journals and
			 * stores this one: an fsync is not in its way */
			if (!first && hold(m, (size_t)cell, w, buf, result ? 8 : 0,
					   result ? (size_t)count - 8 : 0, result, verified) == 0) {
				worker_done(m, w, (size_t)cell);
				continue;
			}
			deliver(m, (size_t)cell, w, result ? buf + 8 : NULL,
				result ? (size_t)count - 8 : 0, verified);
			engi_free(buf);
			worker_done(m, w, (size_t)cell);
			continue;
		}
		if (stt.MPI_TAG != TAG_READY) {
			engi_free(buf);
			continue; /* nothing else is sent to rank 0 */
		}
		engi_free(buf);
		feed(m, w);
	}
}

/* Results held while their workers were fed, delivered in arrival order. */
static int deliver_held(struct master *m)
{
	size_t n = m->nheld;
	for (size_t i = 0; i < n; i++) {
		struct held *hd = &m->held[i];
		deliver(m, hd->cell, hd->rank, hd->has_payload ? hd->buf + hd->off : NULL,
			hd->has_payload ? hd->len : 0, hd->verified);
		engi_free(hd->buf);
	}
	m->nheld = 0;
	return n > 0;
}

static void free_master(struct master *m)
{
	engi_free(m->order);
	engi_free(m->taken);
	engi_free(m->wstate);
	engi_free(m->wcell);
	engi_free(m->wnext);
	engi_free(m->whas_next);
	engi_free(m->wdrained);
	engi_free(m->wverify);
	for (size_t i = m->vhead; i < m->vtail; i++)
		engi_free(m->vq[i].input);
	engi_free(m->vq);
}

/* Verifications that will not run (the grace time is over, or rank 0
 * failed): their cells come back interrupted, to be run again. */
static void vq_abandon(struct master *m)
{
	while (m->vhead < m->vtail) {
		struct vitem *v = &m->vq[m->vhead++];
		engi_free(v->input);
		v->input = NULL;
		m->st.verifying--;
		m->st.interrupted++;
		if (!m->failed && m->h->finished(m->h->ctx, v->cell, 0, NULL, 0, m->err) < 0)
			m->failed = 1;
	}
}

static int run_master(const size_t *order, size_t n, const struct sched_hooks *h, int local_slots,
		      struct sched_status *final, struct engi_error *err)
{
	struct master m = {.n = n, .h = h, .err = err};
	m.st.total = n;
	m.st.queued = n;
	m.st.ranks = g_size;
	m.order = engi_reallocarray(NULL, n ? n : 1, sizeof(*m.order));
	m.taken = engi_calloc(n ? n : 1, 1);
	m.wstate = engi_calloc((size_t)g_size, sizeof(*m.wstate));
	m.wcell = engi_calloc((size_t)g_size, sizeof(*m.wcell));
	m.wnext = engi_calloc((size_t)g_size, sizeof(*m.wnext));
	m.whas_next = engi_calloc((size_t)g_size, 1);
	m.wdrained = engi_calloc((size_t)g_size, 1);
	m.wverify = engi_calloc((size_t)g_size, 1);
	struct slot *slots = engi_calloc(local_slots > 0 ? (size_t)local_slots : 1, sizeof(*slots));
	if (!m.order || !m.taken || !m.wstate || !m.wcell || !m.wnext || !m.whas_next ||
	    !m.wdrained || !m.wverify || !slots) {
		free_master(&m);
		engi_free(slots);
		RAISE(err, ENGI_ENOMEM, "out of memory for a queue of %zu cells", n);
	}
	if (n)
		memcpy(m.order, order, n * sizeof(*order));
	resort(&m); /* the priority hook orders from the start */
	/* a worker counts as busy until its first READY arrives */
	for (int w = 1; w < g_size; w++)
		m.wstate[w] = W_BUSY;
	long long last_tick = 0;
	long nap_ns = 0;
	for (;;) {
		int activity = 0;
		m.st.draining = !dispatching(&m);
		if (g_mpi)
			activity |= poll_workers(&m);
		int local_busy = 0;
		for (int i = 0; i < local_slots; i++) {
			struct slot *s = &slots[i];
			if (atomic_load(&s->state) == 2) {
				if (s->joinable)
					pthread_join(s->th, NULL);
				atomic_store(&s->state, 0);
				int verified = s->input != NULL;
				engi_free(s->input);
				s->input = NULL;
				int first = 0;
				if (!verified && h->released)
					first = h->released(h->ctx, s->cell);
				if (s->rc == 1 && !verified) {
					pending_at(&m, s->cell, s->payload, 0, s->len);
				} else if (first || hold(&m, s->cell, 0, s->payload, 0,
							 s->rc == 0 ? s->len : 0, s->rc == 0,
							 verified) < 0) {
					/* refill the slot first, journal and store after */
					deliver(&m, s->cell, 0, s->rc == 0 ? s->payload : NULL,
						s->rc == 0 ? s->len : 0, verified);
					engi_free(s->payload);
				}
				s->payload = NULL;
				activity = 1;
			}
			struct vitem v;
			long c = -1;
			if (atomic_load(&s->state) == 0 && vq_take(&m, &v)) {
				s->input = v.input;
				s->input_len = v.len;
				c = (long)v.cell;
			} else if (atomic_load(&s->state) == 0 && dispatching(&m)) {
				c = pick(&m, 1);
				if (c >= 0 && h->started)
					h->started(h->ctx, (size_t)c, 0);
			}
			if (c >= 0) {
				s->cell = (size_t)c;
				s->h = h;
				atomic_store(&s->state, 1);
				m.st.running++;
				s->joinable = pthread_create(&s->th, NULL, slot_main, s) == 0;
				if (!s->joinable)
					slot_main(s); /* run it here: slower, never lost */
				activity = 1;
			}
			local_busy |= atomic_load(&s->state) == 1 || (atomic_load(&s->state) == 2);
		}
		activity |= deliver_held(&m);
		if (m.since_resort >= SCHED_RESORT_EVERY && dispatching(&m))
			resort(&m);
		if (!dispatching(&m))
			recall_ahead(&m);
		/* parked workers: a cap may have freed, or a verification come */
		for (int w = 1; w < g_size; w++)
			if (m.wstate[w] == W_PARKED &&
			    (m.vhead < m.vtail || (dispatching(&m) && pick(&m, 0) >= 0)))
				feed(&m, w);
		if (m.vhead < m.vtail && (m.failed || sched_should_abort()))
			vq_abandon(&m);
		int remote_live = 0, remote_busy = 0;
		for (int w = 1; w < g_size; w++) {
			remote_live += m.wstate[w] != W_STOPPED;
			remote_busy += m.wstate[w] == W_BUSY;
		}
		long long now = mono_ns();
		if (h->tick && (activity || now - last_tick > 500000000LL)) {
			h->tick(h->ctx, &m.st);
			last_tick = now;
		}
		int running = local_busy || remote_busy || m.vhead < m.vtail;
		/* cells still queued but refused by admit while nothing runs
		 * can never start (a spent budget): they stay unrun */
		int exhausted =
		    !dispatching(&m) || m.st.queued == 0 || (!running && pick(&m, 0) == -1);
		if (exhausted && !running) {
			for (int w = 1; w < g_size; w++)
				if (m.wstate[w] == W_PARKED)
					send_stop(&m, w);
			if (remote_live == 0 || g_size == 1)
				break;
			remote_live = 0;
			for (int w = 1; w < g_size; w++)
				remote_live += m.wstate[w] != W_STOPPED;
			if (remote_live == 0)
				break;
		}
		settle(&m);
		if (activity)
			nap_ns = 0;
		else
			nap(&nap_ns);
	}
	deliver_held(&m);
	settle(&m);
	vq_abandon(&m);
	engi_free(m.held);
	if (final)
		*final = m.st;
	if (h->tick)
		h->tick(h->ctx, &m.st);
	free_master(&m);
	engi_free(slots);
	return m.failed ? (err && err->code ? err->code : ENGI_EIO) : 0;
}

/* ---- worker ranks ---- */

static int run_worker(const struct sched_hooks *h, struct engi_error *err)
{
	MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD);
	for (;;) {
		MPI_Status st;
		uint64_t cell = 0;
		/* poll instead of a blocking receive so that an oversubscribed
		 * node does not spin a core while waiting */
		int flag = 0;
		long nap_ns = 0;
		while (!flag) {
			MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
			if (!flag)
				nap(&nap_ns);
		}
		char *input = NULL;
		size_t input_len = 0;
		if (st.MPI_TAG == TAG_VERIFY) {
			int count = 0;
			MPI_Get_count(&st, MPI_BYTE, &count);
			char *buf = engi_malloc((size_t)count + 1);
			if (!buf) {
				static char scratch[8];
				MPI_Recv(scratch, 0, MPI_BYTE, 0, TAG_VERIFY, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(&cell, 8, MPI_BYTE, 0, TAG_ABORTED, MPI_COMM_WORLD);
				continue;
			}
			MPI_Recv(buf, count, MPI_BYTE, 0, TAG_VERIFY, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (count >= 8)
				memcpy(&cell, buf, 8);
			if (count <= 8) { /* rank 0 could not send the episode */
				engi_free(buf);
				MPI_Send(&cell, 8, MPI_BYTE, 0, TAG_ABORTED, MPI_COMM_WORLD);
				continue;
			}
			input_len = (size_t)count - 8;
			memmove(buf, buf + 8, input_len);
			buf[input_len] = '\0';
			input = buf;
		} else {
			MPI_Recv(&cell, st.MPI_TAG == TAG_CELL ? 1 : 0, MPI_UINT64_T, 0, st.MPI_TAG,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (st.MPI_TAG == TAG_STOP)
				return 0;
			if (st.MPI_TAG != TAG_CELL)
				continue; /* a drain notice after the cell it was about started */
		}
		/* a drain notice overtakes the cells sent before it: the cell
		 * about to start goes back unrun (rank 0 counts it interrupted) */
		flag = 0;
		if (!input)
			MPI_Iprobe(0, TAG_DRAIN, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_DRAIN, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(&cell, 8, MPI_BYTE, 0, TAG_ABORTED, MPI_COMM_WORLD);
			continue;
		}
		char *payload = NULL;
		size_t len = 0;
		int rc = h->run(h->ctx, (size_t)cell, g_rank, input, input_len, &payload, &len);
		engi_free(input);
		if (rc == 1 && input)
			rc = ENGI_EINTERRUPTED; /* a verification is never verified again */
		if ((rc == 0 || rc == 1) && len <= (size_t)INT32_MAX - 8) {
			char *msg = engi_malloc(len + 8);
			if (msg) {
				memcpy(msg, &cell, 8);
				memcpy(msg + 8, payload, len);
				MPI_Send(msg, (int)(len + 8), MPI_BYTE, 0,
					 rc == 1 ? TAG_PENDING : TAG_RESULT, MPI_COMM_WORLD);
				engi_free(msg);
				engi_free(payload);
				continue;
			}
		}
		engi_free(payload);
		MPI_Send(&cell, 8, MPI_BYTE, 0, TAG_ABORTED, MPI_COMM_WORLD);
	}
	(void)err;
}

int sched_run(const size_t *order, size_t n, const struct sched_hooks *h,
	      const struct sched_opts *o, struct sched_status *final, struct engi_error *err)
{
	g_grace_s = o->grace_s;
	int slots = o->local_slots;
	if (slots < 0)
		slots = g_size == 1 ? 1 : g_size < 4 ? 1 : 0;
	if (g_size == 1 && slots < 1)
		slots = 1;
	int rc;
	g_hooks = h;
	if (g_rank == 0)
		rc = run_master(order, n, h, slots, final, err);
	else
		rc = run_worker(h, err);
	g_hooks = NULL;
	return rc;
}

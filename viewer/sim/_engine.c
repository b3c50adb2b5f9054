/* The compiled twin of viewer/sim/engine.py's `play` (optional; the Python one defines it).
 *
 * Same events, same order: every priority queue here orders by a unique key, as the
 * Python heaps do (events by (time, sequence number), queued tasks by index, each GPU's
 * idle workers by (idle since, worker), the GPU by its workers in a call first), so the
 * two give the same schedule to the millisecond.
 * tests/sim/test_engine_twin.py holds them together.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SYNTH_END, QUEUED, LOCK, RELEASE, END, WAKE };

typedef struct {
    int64_t t, seq;
    int32_t kind;
    int64_t arg;
} Event;

typedef struct {
    Event *a;
    Py_ssize_t n, cap;
} EventHeap;

static int ev_less(const Event *x, const Event *y) {
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int ev_push(EventHeap *h, Event e) {
    if (h->n == h->cap) {
        Py_ssize_t cap = h->cap ? 2 * h->cap : 1024;
        Event *a = realloc(h->a, (size_t)cap * sizeof(Event));
        if (!a) return -1;
        h->a = a;
        h->cap = cap;
    }
    Py_ssize_t i = h->n++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!ev_less(&e, &h->a[p])) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
    return 0;
}

static Event ev_pop(EventHeap *h) {
    Event top = h->a[0], last = h->a[--h->n];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && ev_less(&h->a[c + 1], &h->a[c])) c++;
        if (!ev_less(&h->a[c], &last)) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n) h->a[i] = last;
    return top;
}

/* A min-heap of (key, id) pairs ordered by key then id: queued tasks (key = index) and
 * idle workers (key = idle since). */
typedef struct {
    int64_t *key, *id;
    Py_ssize_t n;
} PairHeap;

static int pair_less(const PairHeap *h, Py_ssize_t i, int64_t k, int64_t id) {
    return h->key[i] < k || (h->key[i] == k && h->id[i] < id);
}

static void pair_push(PairHeap *h, int64_t k, int64_t id) {
    Py_ssize_t i = h->n++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (pair_less(h, p, k, id)) break; /* the parent comes first: in place */
        h->key[i] = h->key[p];
        h->id[i] = h->id[p];
        i = p;
    }
    h->key[i] = k;
    h->id[i] = id;
}

static int64_t pair_pop(PairHeap *h) {
    int64_t top = h->id[0], k = h->key[--h->n], id = h->id[h->n];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && pair_less(h, c + 1, h->key[c], h->id[c])) c++;
        if (!pair_less(h, c, k, id)) break;
        h->key[i] = h->key[c];
        h->id[i] = h->id[c];
        i = c;
    }
    if (h->n) {
        h->key[i] = k;
        h->id[i] = id;
    }
    return top;
}

enum { OUT_SS, OUT_SE, OUT_Q, OUT_PK, OUT_ST, OUT_AQ, OUT_KE, OUT_RL, OUT_EN, OUT_W, OUT_WARM, N_OUT };
enum { IN_JOB, IN_SYNTH, IN_QDELAY, IN_PICKUP, IN_DISPATCH, IN_PRELOCK, IN_KERNEL, IN_HOLD, IN_POST,
       N_TASK_IN };

/* An input column: int32 or int64 values, any stride (0: one value for every row, as
 * ``frame.constant`` holds a column of one value). */
typedef struct {
    const char *p;
    Py_ssize_t step;
    int wide;
} In;

static inline int64_t at(const In *c, Py_ssize_t i) {
    const char *q = c->p + i * c->step;
    return c->wide ? *(const int64_t *)q : (int64_t)*(const int32_t *)q;
}

/* An output column: contiguous int64, or int32 where the caller expects every time to lie
 * within +-2^30 ms (sim.model's narrow rule); one that does not is flagged, not written
 * wrapped. */
typedef struct {
    char *p;
    int wide;
} Out;

#define NARROW_LIMIT ((int64_t)1 << 30)

typedef struct {
    /* inputs */
    Py_ssize_t n, jobs;
    In in[N_TASK_IN], arrival, assemble;
    int64_t pw, gw, gpus, cap, warmup;
    /* outputs, N_OUT rows of n */
    Out out[N_OUT];
    int overflow; /* a time did not fit an int32 output */
    /* state */
    int64_t *post, *left, *next_waiter, *wait_head, *wait_tail, *blocked;
    Py_ssize_t blocked_head, blocked_n;
    char *busy, *warmed;
    EventHeap events;
    PairHeap ready;
    PairHeap *idle;   /* per GPU: its free workers by (free since, worker) */
    int64_t *in_call; /* per GPU: its workers in a call */
    int64_t free;     /* free workers, all GPUs */
    int64_t seq, pool, nxt, wake;
} Engine;

static inline int64_t got(const Engine *e, int k, Py_ssize_t i) {
    const Out *c = &e->out[k];
    return c->wide ? ((const int64_t *)c->p)[i] : (int64_t)((const int32_t *)c->p)[i];
}

static inline void put(Engine *e, int k, Py_ssize_t i, int64_t v) {
    Out *c = &e->out[k];
    if (c->wide) {
        ((int64_t *)c->p)[i] = v;
    } else if (v < NARROW_LIMIT && v > -NARROW_LIMIT) {
        ((int32_t *)c->p)[i] = (int32_t)v;
    } else {
        e->overflow = 1;
    }
}

static int push(Engine *e, int64_t t, int kind, int64_t arg) {
    Event ev = {t, ++e->seq, kind, arg};
    return ev_push(&e->events, ev);
}

static int try_synth(Engine *e, int64_t now) {
    while (e->pool && e->nxt < e->n) {
        int64_t i = e->nxt, a = at(&e->arrival, at(&e->in[IN_JOB], i));
        if (a > now) {
            if (e->wake != a) {
                e->wake = a;
                if (push(e, a, WAKE, -1)) return -1;
            }
            return 0;
        }
        e->nxt++;
        e->pool--;
        int64_t end = now + at(&e->in[IN_SYNTH], i);
        put(e, OUT_SS, i, now);
        put(e, OUT_SE, i, end);
        if (push(e, end, SYNTH_END, i)) return -1;
    }
    return 0;
}

static void enqueue(Engine *e, int64_t i, int64_t now) {
    put(e, OUT_Q, i, now);
    pair_push(&e->ready, i, i);
    e->pool++;
}

/* The worker that takes the next call: of the GPU with the fewest workers in a call, the
 * one free longest, then the lowest (engine.py's Workers.take). */
static int64_t take_worker(Engine *e) {
    int64_t best = -1;
    for (int64_t g = 0; g < e->gpus; g++) {
        PairHeap *h = &e->idle[g];
        if (!h->n) continue;
        if (best < 0 || e->in_call[g] < e->in_call[best] ||
            (e->in_call[g] == e->in_call[best] &&
             pair_less(h, 0, e->idle[best].key[0], e->idle[best].id[0])))
            best = g;
    }
    e->in_call[best]++;
    e->free--;
    return pair_pop(&e->idle[best]);
}

static void give_back(Engine *e, int64_t w, int64_t now) {
    int64_t g = w / e->gw;
    pair_push(&e->idle[g], now, w);
    e->in_call[g]--;
    e->free++;
}

static int try_dispatch(Engine *e, int64_t now) {
    while (e->ready.n && e->free) {
        int64_t w = take_worker(e), i = pair_pop(&e->ready), j = at(&e->in[IN_JOB], i);
        int64_t pickup = at(&e->in[IN_PICKUP], i), dispatch = at(&e->in[IN_DISPATCH], i);
        e->left[j]--;
        put(e, OUT_W, i, w);
        put(e, OUT_PK, i, now + (pickup < dispatch ? pickup : dispatch));
        put(e, OUT_ST, i, now + dispatch);
        if (push(e, now + dispatch + at(&e->in[IN_PRELOCK], i), LOCK, i)) return -1;
        if (e->blocked_n) {
            int64_t b = e->blocked[e->blocked_head++];
            e->blocked_n--;
            enqueue(e, b, now);
        }
        if (e->left[j] == 0) e->post[i] += at(&e->assemble, j);
    }
    return try_synth(e, now);
}

static int acquire(Engine *e, int64_t i, int64_t now, int64_t g) {
    int64_t warm = 0;
    if (!e->warmed[g]) {
        e->warmed[g] = 1;
        warm = e->warmup;
        put(e, OUT_WARM, i, warm);
    }
    e->busy[g] = 1;
    put(e, OUT_AQ, i, now);
    int64_t ke = now + at(&e->in[IN_KERNEL], i) + warm;
    int64_t release = ke + at(&e->in[IN_HOLD], i), end = ke + e->post[i];
    put(e, OUT_KE, i, ke);
    put(e, OUT_RL, i, release);
    put(e, OUT_EN, i, end);
    if (push(e, release, RELEASE, g)) return -1;
    return push(e, end, END, i);
}

static int run(Engine *e) {
    int64_t workers = e->gw * e->gpus;
    for (int64_t w = 0; w < workers; w++) pair_push(&e->idle[w / e->gw], 0, w);
    e->free = workers;
    if (try_synth(e, 0)) return -1;
    while (e->events.n && !e->overflow) { /* a time past an int32 output: played again */
        Event ev = ev_pop(&e->events);
        int64_t now = ev.t, i = ev.arg;
        switch (ev.kind) {
        case SYNTH_END:
            if (push(e, now + at(&e->in[IN_QDELAY], i), QUEUED, i)) return -1;
            break;
        case QUEUED:
            if (e->cap < 0 || e->ready.n < e->cap) {
                enqueue(e, i, now);
                if (try_dispatch(e, now)) return -1;
            } else {
                e->blocked[e->blocked_head + e->blocked_n++] = i;
            }
            break;
        case LOCK: {
            int64_t g = got(e, OUT_W, i) / e->gw;
            if (e->busy[g]) {
                e->next_waiter[i] = -1;
                if (e->wait_tail[g] < 0)
                    e->wait_head[g] = i;
                else
                    e->next_waiter[e->wait_tail[g]] = i;
                e->wait_tail[g] = i;
            } else if (acquire(e, i, now, g)) {
                return -1;
            }
            break;
        }
        case RELEASE:
            e->busy[i] = 0;
            if (e->wait_head[i] >= 0) {
                int64_t k = e->wait_head[i];
                e->wait_head[i] = e->next_waiter[k];
                if (e->wait_head[i] < 0) e->wait_tail[i] = -1;
                if (acquire(e, k, now, i)) return -1;
            }
            break;
        case END:
            give_back(e, got(e, OUT_W, i), now);
            if (try_dispatch(e, now)) return -1;
            break;
        default:
            if (try_synth(e, now)) return -1;
        }
    }
    return 0;
}

/* A signed integer column of n values, 4 or 8 bytes each: any stride to read (``wide``
 * set to its width), contiguous to write. */
static int get_buffer(PyObject *obj, Py_buffer *b, Py_ssize_t n, int writable, const char *name) {
    int flags = PyBUF_FORMAT | (writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS : PyBUF_STRIDES);
    if (PyObject_GetBuffer(obj, b, flags) < 0) return -1;
    int size = (int)b->itemsize;
    const char *f = b->format ? b->format : "";
    if (*f == '=' || *f == '@') f++;
    if (b->ndim != 1 || b->shape[0] != n || (size != 4 && size != 8) || !*f ||
        strchr("ilq", *f) == NULL) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd int32 or int64 values", name, n);
        PyBuffer_Release(b);
        b->obj = NULL;
        return -1;
    }
    return 0;
}

static In in_of(const Py_buffer *b) {
    In c = {(const char *)b->buf, b->strides ? b->strides[0] : b->itemsize, b->itemsize == 8};
    return c;
}

#define PLAY_DOC                                                                                 \
    "play(tasks, arrival, assemble, out, pw, gw, gpus, queue_cap, warmup): tasks is a sequence " \
    "of 9 int32 or int64 arrays of n (any stride): job, synth, qdelay, pickup, dispatch, "      \
    "prelock, kernel, hold, post; out a sequence of 11 writable C-contiguous int64 or int32 "   \
    "arrays of n for synth_start, synth_end, queued, pickup, start, acquire, kernel_end, "      \
    "release, end, worker, warm (filled with -1 / 0 by the caller). queue_cap < 0: unbounded. " \
    "Returns False, the outputs unfinished, where a time does not lie within 2^30 ms for an " \
    "int32 output (the play stops there); True once played."

/* The buffers of the ``rows`` arrays of sequence ``obj``, each of n values (n: the first's
 * length when n < 0). */
static int get_rows(PyObject *obj, Py_buffer *b, int rows, Py_ssize_t *n, int writable,
                    const char *name) {
    PyObject *seq = PySequence_Fast(obj, name);
    if (!seq) return -1;
    int rc = 0;
    if (PySequence_Fast_GET_SIZE(seq) != rows) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d arrays", name, rows);
        rc = -1;
    }
    for (int k = 0; k < rows && !rc; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        if (*n < 0) {
            *n = PyObject_Length(item);
            if (*n < 0) rc = -1;
        }
        if (!rc) rc = get_buffer(item, &b[k], *n, writable, name);
    }
    Py_DECREF(seq);
    return rc;
}

static PyObject *play(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *o_tasks, *o_arrival, *o_assemble, *o_out;
    Engine e;
    memset(&e, 0, sizeof e);
    if (!PyArg_ParseTuple(args, "OOOOLLLLL", &o_tasks, &o_arrival, &o_assemble, &o_out, &e.pw,
                          &e.gw, &e.gpus, &e.cap, &e.warmup))
        return NULL;
    if (e.pw < 1 || e.gw < 1 || e.gpus < 1 || e.gw > (1 << 16) || e.gpus > (1 << 16) ||
        e.cap == 0) {
        PyErr_SetString(PyExc_ValueError, "pw, gw, gpus (and a queue cap) must be at least 1");
        return NULL;
    }
    Py_buffer bt[N_TASK_IN] = {{0}}, ba = {0}, bs = {0}, bo[N_OUT] = {{0}};
    PyObject *res = NULL;
    Py_ssize_t len = PyObject_Length(o_arrival);
    if (len < 0) return NULL;
    e.jobs = len;
    e.n = -1;
    if (get_rows(o_tasks, bt, N_TASK_IN, &e.n, 0, "tasks") ||
        get_buffer(o_arrival, &ba, e.jobs, 0, "arrival") ||
        get_buffer(o_assemble, &bs, e.jobs, 0, "assemble") ||
        get_rows(o_out, bo, N_OUT, &e.n, 1, "out"))
        goto done;
    for (int k = 0; k < N_TASK_IN; k++) e.in[k] = in_of(&bt[k]);
    for (int k = 0; k < N_OUT; k++) {
        e.out[k].p = bo[k].buf;
        e.out[k].wide = bo[k].itemsize == 8;
    }
    e.arrival = in_of(&ba);
    e.assemble = in_of(&bs);
    for (Py_ssize_t i = 0; i < e.n; i++) {
        int64_t j = at(&e.in[IN_JOB], i);
        if (j < 0 || j >= e.jobs) {
            PyErr_SetString(PyExc_ValueError, "a task's job is out of range");
            goto done;
        }
    }
    int64_t workers = e.gw * e.gpus;
    Py_ssize_t n1 = e.n + 1;
    e.post = malloc((size_t)n1 * 8);
    e.left = calloc((size_t)e.jobs + 1, 8);
    e.next_waiter = malloc((size_t)n1 * 8);
    e.blocked = malloc((size_t)n1 * 8);
    e.wait_head = malloc((size_t)e.gpus * 8);
    e.wait_tail = malloc((size_t)e.gpus * 8);
    e.busy = calloc((size_t)e.gpus, 1);
    e.warmed = calloc((size_t)e.gpus, 1);
    e.ready.key = malloc((size_t)n1 * 8);
    e.ready.id = malloc((size_t)n1 * 8);
    e.idle = calloc((size_t)e.gpus, sizeof(PairHeap));
    e.in_call = calloc((size_t)e.gpus, 8);
    /* One block of keys and one of ids for every GPU's heap of its gw workers. */
    int64_t *idle_keys = malloc((size_t)(workers + 1) * 8), *idle_ids = malloc((size_t)(workers + 1) * 8);
    if (!e.post || !e.left || !e.next_waiter || !e.blocked || !e.wait_head || !e.wait_tail ||
        !e.busy || !e.warmed || !e.ready.key || !e.ready.id || !e.idle || !e.in_call ||
        !idle_keys || !idle_ids) {
        free(idle_keys);
        free(idle_ids);
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t g = 0; g < e.gpus; g++) {
        e.idle[g].key = idle_keys + g * e.gw;
        e.idle[g].id = idle_ids + g * e.gw;
    }
    for (Py_ssize_t i = 0; i < e.n; i++) {
        e.post[i] = at(&e.in[IN_POST], i);
        e.left[at(&e.in[IN_JOB], i)]++;
    }
    for (int64_t g = 0; g < e.gpus; g++) e.wait_head[g] = e.wait_tail[g] = -1;
    e.wake = -1;
    e.pool = e.pw;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run(&e);
    Py_END_ALLOW_THREADS
    if (rc) {
        PyErr_NoMemory();
        goto done;
    }
    res = Py_NewRef(e.overflow ? Py_False : Py_True);
done:
    free(e.post);
    free(e.left);
    free(e.next_waiter);
    free(e.blocked);
    free(e.wait_head);
    free(e.wait_tail);
    free(e.busy);
    free(e.warmed);
    free(e.ready.key);
    free(e.ready.id);
    if (e.idle) {
        free(e.idle[0].key);
        free(e.idle[0].id);
    }
    free(e.idle);
    free(e.in_call);
    free(e.events.a);
    for (int k = 0; k < N_TASK_IN; k++)
        if (bt[k].obj) PyBuffer_Release(&bt[k]);
    if (ba.obj) PyBuffer_Release(&ba);
    if (bs.obj) PyBuffer_Release(&bs);
    for (int k = 0; k < N_OUT; k++)
        if (bo[k].obj) PyBuffer_Release(&bo[k]);
    return res;
}

static PyMethodDef METHODS[] = {{"play", play, METH_VARARGS, PLAY_DOC}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_engine",
                                    "The compiled pipeline engine of viewer.sim (optional).", -1,
                                    METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__engine(void) { return PyModule_Create(&MODULE); }

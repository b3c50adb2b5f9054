/* The compiled scanner: one pass over a buffer of whole log lines, without the GIL.
 *
 * It finds the records the pure-Python scanner (records.find_records) finds, in the same
 * order and with the same ordinals, and parses the TIMELINE and CUZK_TIMING records that
 * are in the strict form the daemon writes (the forms strict.py accepts).  Every other
 * record is handed back whole, with its ordinal, to the exact path (exact.py), which
 * defines the behaviour; records that path would drop are dropped here.  The grammar's
 * tables come from _grammar.h, generated from grammar.py.
 *
 * scan(buffer, start, end) -> dict of packed little-endian columns (bytes) and lists;
 * see SCAN_DOC.  The module is optional: without it the reader runs in pure Python.
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "_grammar.h"

/* ------------------------------------------------------------------ growable arrays */

typedef struct {
    char *data;
    size_t len, cap;
} Vec;

static int vec_reserve(Vec *v, size_t more) {
    if (v->len + more <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 4096;
    while (cap < v->len + more) cap *= 2;
    char *d = realloc(v->data, cap);
    if (!d) return -1;
    v->data = d;
    v->cap = cap;
    return 0;
}

static int vec_put(Vec *v, const void *p, size_t n) {
    if (vec_reserve(v, n)) return -1;
    memcpy(v->data + v->len, p, n);
    v->len += n;
    return 0;
}

/* Append one value of type T to a Vec holding only T (so the slot is aligned). */
#define PUT(v, T, x)                                 \
    do {                                             \
        if (vec_reserve((v), sizeof(T))) return -1;  \
        *(T *)((v)->data + (v)->len) = (T)(x);       \
        (v)->len += sizeof(T);                       \
    } while (0)

/* ------------------------------------------------------------------ job id table */

typedef struct {
    int64_t *key; /* offset of the id in the text heap */
    int32_t *klen;
    int32_t *code;
    uint64_t *hash;
    size_t cap, used;
} Jobs;

/* Eight bytes at a time (a byte at a time, FNV-1a cost the scan of the 10^6-event log
 * ~0.04 s of CPU for its 36-byte job ids); the high half folded down at each step, as
 * the table takes the low bits.  0 marks a free slot. */
static uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 32;
    }
    return h ? h : 1;
}

static int jobs_grow(Jobs *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    int64_t *key = calloc(cap, sizeof *key);
    int32_t *klen = calloc(cap, sizeof *klen), *code = calloc(cap, sizeof *code);
    uint64_t *hash = calloc(cap, sizeof *hash);
    if (!key || !klen || !code || !hash) {
        free(key), free(klen), free(code), free(hash);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->hash[i]) continue;
        size_t j = t->hash[i] & (cap - 1);
        while (hash[j]) j = (j + 1) & (cap - 1);
        key[j] = t->key[i], klen[j] = t->klen[i], code[j] = t->code[i], hash[j] = t->hash[i];
    }
    free(t->key), free(t->klen), free(t->code), free(t->hash);
    t->key = key, t->klen = klen, t->code = code, t->hash = hash, t->cap = cap;
    return 0;
}

/* A record of int64s whose last two are (heap offset, length) of a copy of [p, p+n). */
static int put_text_record(Vec *v, Vec *heap, const int64_t *head, int k, const char *p,
                           size_t n) {
    int64_t rec[4];
    memcpy(rec, head, k * sizeof *rec);
    rec[k] = (int64_t)heap->len;
    rec[k + 1] = (int64_t)n;
    return vec_put(heap, p, n) || vec_put(v, rec, (k + 2) * sizeof *rec);
}

/* The code of the job id [p, p+n): first appearance order; -1 on memory failure. */
static int32_t jobs_code(Jobs *t, Vec *heap, Vec *spans, const char *p, size_t n) {
    if ((t->used + 1) * 2 > t->cap && jobs_grow(t)) return -1;
    uint64_t h = hash_bytes(p, n);
    size_t j = h & (t->cap - 1);
    while (t->hash[j]) {
        if (t->hash[j] == h && (size_t)t->klen[j] == n && !memcmp(heap->data + t->key[j], p, n))
            return t->code[j];
        j = (j + 1) & (t->cap - 1);
    }
    t->key[j] = (int64_t)heap->len;
    if (put_text_record(spans, heap, &t->key[j], 0, p, n)) return -1;
    t->hash[j] = h, t->klen[j] = (int32_t)n, t->code[j] = (int32_t)t->used;
    return (int32_t)t->used++;
}

static void jobs_free(Jobs *t) { free(t->key), free(t->klen), free(t->code), free(t->hash); }

/* ------------------------------------------------------------------ candidates */

/* The first position in [p, end - 2) holding "TIM" (of both record starts) or the probe
 * of a marker ("k-d" of cuzk-daemon starting, "U w" of GPU worker started), or NULL.  Each
 * hit is checked by the caller.  Where the CPU has AVX2 (chosen once, at import), 64
 * bytes at a time, and a probe's first and third bytes only: a few more hits to check,
 * two loads and six compares a block where all three bytes took three and nine. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
__attribute__((target("avx2"))) static inline unsigned probe_mask(const char *p, __m256i T,
                                                                   __m256i M, __m256i K,
                                                                   __m256i D, __m256i U,
                                                                   __m256i W) {
    __m256i a = _mm256_loadu_si256((const __m256i *)p);
    __m256i c = _mm256_loadu_si256((const __m256i *)(p + 2));
    __m256i m = _mm256_and_si256(_mm256_cmpeq_epi8(a, T), _mm256_cmpeq_epi8(c, M));
    __m256i k = _mm256_and_si256(_mm256_cmpeq_epi8(a, K), _mm256_cmpeq_epi8(c, D));
    __m256i u = _mm256_and_si256(_mm256_cmpeq_epi8(a, U), _mm256_cmpeq_epi8(c, W));
    return (unsigned)_mm256_movemask_epi8(_mm256_or_si256(m, _mm256_or_si256(k, u)));
}

/* A hit, or NULL with *at moved to where fewer than 34 bytes are left. */
__attribute__((target("avx2"))) static const char *candidate_avx2(const char **at,
                                                                   const char *end) {
    const char *p = *at;
    const __m256i T = _mm256_set1_epi8(TL[0]), M = _mm256_set1_epi8(TL[2]);
    const __m256i K = _mm256_set1_epi8(DAEMON[DAEMON_PROBE]);
    const __m256i D = _mm256_set1_epi8(DAEMON[DAEMON_PROBE + 2]);
    const __m256i U = _mm256_set1_epi8(WORKER[WORKER_PROBE]);
    const __m256i W = _mm256_set1_epi8(WORKER[WORKER_PROBE + 2]);
    for (; p + 66 <= end; p += 64) {
        uint64_t mask = probe_mask(p, T, M, K, D, U, W) |
                        (uint64_t)probe_mask(p + 32, T, M, K, D, U, W) << 32;
        if (mask) return p + __builtin_ctzll(mask);
    }
    for (; p + 34 <= end; p += 32) {
        unsigned mask = probe_mask(p, T, M, K, D, U, W);
        if (mask) return p + __builtin_ctz(mask);
    }
    *at = p;
    return NULL;
}
static int use_avx2;
#endif

static const char *candidate_sse2(const char *p, const char *end);

static const char *candidate(const char *p, const char *end) {
#ifdef HAVE_AVX2_PATH
    if (use_avx2) {
        const char *q = candidate_avx2(&p, end);
        if (q) return q;
    }
#endif
    return candidate_sse2(p, end);
}

static const char *candidate_sse2(const char *p, const char *end) {
#if defined(__SSE2__)
    const __m128i T = _mm_set1_epi8(TL[0]), I = _mm_set1_epi8(TL[1]), M = _mm_set1_epi8(TL[2]);
    const __m128i K = _mm_set1_epi8(DAEMON[DAEMON_PROBE]);
    const __m128i H = _mm_set1_epi8(DAEMON[DAEMON_PROBE + 1]);
    const __m128i D = _mm_set1_epi8(DAEMON[DAEMON_PROBE + 2]);
    const __m128i U = _mm_set1_epi8(WORKER[WORKER_PROBE]);
    const __m128i S = _mm_set1_epi8(WORKER[WORKER_PROBE + 1]);
    const __m128i W = _mm_set1_epi8(WORKER[WORKER_PROBE + 2]);
    while (p + 18 <= end) {
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(p + 1));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + 2));
        __m128i m = _mm_and_si128(_mm_cmpeq_epi8(a, T), _mm_cmpeq_epi8(b, I));
        __m128i k = _mm_and_si128(_mm_cmpeq_epi8(a, K), _mm_cmpeq_epi8(b, H));
        __m128i u = _mm_and_si128(_mm_cmpeq_epi8(a, U), _mm_cmpeq_epi8(b, S));
        m = _mm_and_si128(m, _mm_cmpeq_epi8(c, M));
        k = _mm_and_si128(k, _mm_cmpeq_epi8(c, D));
        u = _mm_and_si128(u, _mm_cmpeq_epi8(c, W));
        int mask = _mm_movemask_epi8(_mm_or_si128(m, _mm_or_si128(k, u)));
        if (mask) return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    for (; p + 3 <= end; p++) {
        if (!memcmp(p, TL, 3) || !memcmp(p, DAEMON + DAEMON_PROBE, 3) ||
            !memcmp(p, WORKER + WORKER_PROBE, 3))
            return p;
    }
    return NULL;
}

static int starts_with(const char *p, const char *end, const char *word, size_t n) {
    return (size_t)(end - p) >= n && !memcmp(p, word, n);
}

/* Whether the marker ``words`` (probed ``probe`` bytes in) holds the candidate at q; its
 * text (what follows the words) then starts at *text. */
static int marker_is(const char *lo, const char *q, const char *end, const char *words,
                     size_t n, int probe, const char **text) {
    if (q[0] != words[probe] || q - lo < probe || !starts_with(q - probe, end, words, n)) return 0;
    *text = q - probe + n;
    return 1;
}

/* MARK_DAEMON / MARK_WORKER: the marker whose candidate is at q; -1: none. */
static int marker_at(const char *lo, const char *q, const char *end, const char **text) {
    if (marker_is(lo, q, end, DAEMON, sizeof DAEMON - 1, DAEMON_PROBE, text)) return MARK_DAEMON;
    if (marker_is(lo, q, end, WORKER, sizeof WORKER - 1, WORKER_PROBE, text)) return MARK_WORKER;
    return -1;
}

/* ------------------------------------------------------------------ field parsing */

/* Digits [p, stop) of 1..most bytes, stopping at the first non-digit; NULL if none. */
static const char *digits(const char *p, const char *stop, int most, int64_t *out) {
    int64_t v = 0;
    const char *s = p;
    while (p < stop && *p >= '0' && *p <= '9' && p - s < most) v = v * 10 + (*p++ - '0');
    if (p == s || (p < stop && *p >= '0' && *p <= '9')) return NULL;
    *out = v;
    return p;
}

typedef struct {
    Vec ord, off, event, job, flags;
    Vec num[N_KEYS]; /* int64 per row, -1 absent: the number keys' values (KEY_ID, KEY_MS) */
} TlCols;

typedef struct {
    Vec ord, kind, a, b;
} CzCols;

/* What a scan collects.  Texts (job ids, kinds, lines for Python, marker texts) are
 * copied to ``heap``: the scanned buffer may be gone by the time they are read. */
typedef struct {
    TlCols tl;
    CzCols cz;
    Vec kinds;     /* (row, heap offset, length) of kind= values */
    Vec reject;    /* (ordinal, heap offset, length) of lines for the Python exact path */
    Vec markers;   /* (matches before the marker's line, kind, heap offset, length) */
    Vec skips;     /* (matches before the line, heap offset, length of the reason) */
    Vec job_spans; /* (heap offset, length) of each local job id */
    Vec copies;    /* (row, copies) of the rows exact copies were folded into */
    int64_t last_ord;              /* the ordinal of the last TIMELINE row taken */
    size_t last_markers, last_skips; /* markers.len and skips.len then */
    Vec heap;
    Jobs jobs;
    int64_t matches;
} Out;

enum { HAS_KIND = 1, MONO_WORD = 2 }; /* flags: a text key (kind=), a flag key (monolithic) */

/* The first byte x or y in [p, end), or NULL: 16 bytes at a time. */
static const char *first_of(const char *p, const char *end, char x, char y) {
#if defined(__SSE2__)
    const __m128i vx = _mm_set1_epi8(x), vy = _mm_set1_epi8(y);
    for (; p + 16 <= end; p += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(a, vx), _mm_cmpeq_epi8(a, vy)));
        if (mask) return p + __builtin_ctz((unsigned)mask);
    }
#endif
    for (; p < end; p++)
        if (*p == x || *p == y) return p;
    return NULL;
}

/* The first ',' or ' ' in [p, e), or e (a job id is 36 bytes). */
static const char *comma_or_space(const char *p, const char *e) {
    const char *q = first_of(p, e, ',', ' ');
    return q ? q : e;
}

/* Parse a TIMELINE payload [p, e) in strict form: the detail keys in the grammar's order,
 * each at most once, nothing after the flag key; 1 if taken, 0 to hand it to Python, -1
 * on memory failure. */
static int parse_tl(Out *o, const char *p, const char *e, int64_t ord) {
    TlCols *c = &o->tl;
    int64_t off, val[N_KEYS];
    for (int k = 0; k < N_KEYS; k++) val[k] = -1;
    const char *q = digits(p, e, MAX_OFFSET_DIGITS, &off);
    if (!q || q >= e || *q != ',') return 0;
    const char *name = ++q;
    while (q < e && *q != ',') q++;
    int event = -1;
    for (int i = 0; i < N_EVENTS && event < 0; i++) {
        size_t n = EVENT_LEN[i];
        if ((size_t)(q - name) == n && !memcmp(name, EVENT_NAME[i], n)) event = EVENT_CODE[i];
    }
    if (event < 0 || q >= e) return 0;
    const char *job = ++q;
    q = comma_or_space(q, e);
    if (q < e && *q == ' ') return 0;
    size_t job_len = q - job;
    if (!job_len || job_len > MAX_JOB || q >= e) return 0; /* no detail: Python decides */
    int rank = -1, fields = 0, flags = 0;
    const char *kind = NULL;
    size_t kind_len = 0;
    while (q < e) { /* q is at a comma */
        if (rank >= 0 && KEY_KIND[rank] == KEY_FLAG) return 0; /* nothing after the flag */
        const char *f = ++q;
        while (q < e && *q != ',') q++;
        if (++fields > 3 || q == f) return 0; /* an empty field: Python decides */
        int r = rank + 1;
        for (; r < N_KEYS; r++) { /* keys come in this order or not at all */
            size_t n = KEY_LEN[r];
            if (KEY_KIND[r] == KEY_FLAG ? (size_t)(q - f) == n && !memcmp(f, KEY[r], n)
                                        : f[0] == KEY[r][0] && starts_with(f, q, KEY[r], n))
                break;
        }
        if (r == N_KEYS) return 0;
        rank = r;
        const char *v = f + KEY_LEN[r];
        if (KEY_KIND[r] == KEY_ID || KEY_KIND[r] == KEY_MS) {
            if (digits(v, q, KEY_DIGITS[r], &val[r]) != q) return 0;
        } else if (KEY_KIND[r] == KEY_TEXT) {
            kind = v;
            kind_len = q - v;
            if (!kind_len || kind_len > MAX_KIND || memchr(kind, ' ', kind_len)) return 0;
            flags |= HAS_KIND;
        } else {
            flags |= MONO_WORD;
        }
    }
    int32_t code = jobs_code(&o->jobs, &o->heap, &o->job_spans, job, job_len);
    if (code < 0) return -1;
    size_t rows = c->ord.len / 8;
    if (!kind && rows && ord == o->last_ord + 1 && o->markers.len == o->last_markers &&
        o->skips.len == o->last_skips) {
        /* An exact copy of the row just before it, with nothing between (no other record,
         * marker or skipped line): a count on that row, not a row (batch.fold_copies). */
        size_t r = rows - 1;
        int same = ((int64_t *)c->off.data)[r] == off && ((int8_t *)c->event.data)[r] == event &&
                   ((int32_t *)c->job.data)[r] == code && ((uint8_t *)c->flags.data)[r] == flags;
        for (int k = 0; same && k < N_KEYS; k++)
            same = KEY_KIND[k] > KEY_MS || ((int64_t *)c->num[k].data)[r] == val[k];
        if (same) {
            int64_t *last = o->copies.len ? (int64_t *)(o->copies.data + o->copies.len) - 2 : NULL;
            o->last_ord = ord;
            if (last && last[0] == (int64_t)r) {
                last[1]++;
                return 1;
            }
            int64_t rec[2] = {(int64_t)r, 1};
            return vec_put(&o->copies, rec, sizeof rec) ? -1 : 1;
        }
    }
    o->last_ord = ord;
    o->last_markers = o->markers.len;
    o->last_skips = o->skips.len;
    if (kind) {
        int64_t row = (int64_t)(c->ord.len / 8);
        if (put_text_record(&o->kinds, &o->heap, &row, 1, kind, kind_len)) return -1;
    }
    PUT(&c->ord, int64_t, ord);
    PUT(&c->off, int64_t, off);
    PUT(&c->event, int8_t, event);
    PUT(&c->job, int32_t, code);
    for (int k = 0; k < N_KEYS; k++)
        if (KEY_KIND[k] <= KEY_MS) PUT(&c->num[k], int64_t, val[k]);
    PUT(&c->flags, uint8_t, flags);
    return 1;
}

/* "KEY=digits" at p ending at a space or e; the end of the digits or NULL. */
static const char *key_value(const char *p, const char *e, const char *key, int64_t *v) {
    size_t n = strlen(key);
    if (!starts_with(p, e, key, n) || p + n >= e || p[n] != '=') return NULL;
    return digits(p + n + 1, e, MAX_MS_DIGITS, v);
}

/* Parse a CUZK_TIMING text [p, e) (after "TIMING:") in strict form, one of the grammar's
 * CUZK_FORMS (its position is the record's kind): 1 taken, 0 not. */
static int parse_cz(const char *p, const char *e, int64_t ord, CzCols *c) {
    if (p >= e || *p != ' ') return 0;
    p++;
    int64_t a, b = -1, tid;
    const char *q;
    if (starts_with(p, e, GPU_TID, GPU_TID_LEN)) {
        q = digits(p + GPU_TID_LEN, e, MAX_ID_DIGITS, &tid);
        if (!q || q >= e || *q != ' ') return 0;
        p = q + 1;
    }
    for (int k = 0; k < N_CUZK; k++) {
        if (p >= e || *p != CUZK_FIRST[k][0]) continue;
        q = key_value(p, e, CUZK_FIRST[k], &a);
        if (!q) continue;
        if (CUZK_SECOND[k]) {
            if (q >= e || *q != ' ') return 0;
            q = key_value(q + 1, e, CUZK_SECOND[k], &b);
            if (!q) return 0;
        }
        if (q != e) return 0;
        PUT(&c->ord, int64_t, ord);
        PUT(&c->kind, int8_t, k);
        PUT(&c->a, int64_t, a);
        PUT(&c->b, int64_t, b);
        return 1;
    }
    return 0;
}

static int has_byte_outside(const char *p, const char *e) {
#if defined(__SSE2__)
    const __m128i low = _mm_set1_epi8(32), del = _mm_set1_epi8(127);
    for (; p + 16 <= e; p += 16) { /* signed compare: 0..31 and 128..255 are below 32 */
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        __m128i bad = _mm_or_si128(_mm_cmplt_epi8(a, low), _mm_cmpeq_epi8(a, del));
        if (_mm_movemask_epi8(bad)) return 1;
    }
#endif
    for (; p < e; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 32 || ch > 126) return 1;
    }
    return 0;
}

/* Whether [p, e) holds one of our keys, or an escape that may hide one (parse.CUZK_NEEDLES). */
static int has_cuzk_key(const char *p, const char *e) {
    for (int k = 0; k < N_CUZK; k++) {
        if (memmem(p, e - p, CUZK_FIRST[k], strlen(CUZK_FIRST[k]))) return 1;
    }
    return memchr(p, 0x1b, e - p) != NULL;
}

/* ------------------------------------------------------------------ the scan */


/* A line ends at LF, CR (old Mac files) or CRLF, as records.SCAN_RE says. */
static int is_eol(char c) { return c == '\n' || c == '\r'; }

/* The first line end in [p, end), or NULL (two memchr calls would search a CR-only file
 * to its end for LF at every line). */
static const char *find_eol(const char *p, const char *end) {
    return first_of(p, end, '\n', '\r');
}

static const char *line_end(const char *p, const char *end) {
    const char *n = find_eol(p, end);
    return n ? n : end;
}

static int add_marker(Out *o, int kind, const char *text, const char *end, int64_t before) {
    int64_t head[2] = {before, kind};
    return put_text_record(&o->markers, &o->heap, head, 2, text, line_end(text, end) - text);
}

/* One record [q, e) ("TIMELINE,..." or "TIMING:..."): parse it, or hand it to Python. */
static int take_record(Out *o, const char *q, const char *e, int is_tl) {
    int64_t ord = o->matches++;
    if (!has_byte_outside(q, e)) {
        int r = is_tl ? parse_tl(o, q + TL_LEN, e, ord) : parse_cz(q + CZ_TEXT_LEN, e, ord, &o->cz);
        if (r) return r < 0 ? -1 : 0;
    }
    if (!is_tl && !has_cuzk_key(q, e)) return 0; /* a CUZK line we do not use */
    return put_text_record(&o->reject, &o->heap, &ord, 1, q, e - q);
}

/* One matched line [q, eol), q at its first record: each "TIMELINE," or "CUZK_TIMING:"
 * in it starts a record that runs to the next one (a torn write glues records), as
 * records.records cuts it; the markers in it are placed before its records.  One pass
 * over the line's candidates finds both. */
static int take_line(Out *o, const char *lo, const char *q, const char *eol, int is_tl,
                     const char *end, const char **marker_line_end) {
    int64_t first = o->matches;
    for (const char *c = candidate(q + 3, eol); c; c = candidate(c + 1, eol)) {
        const char *text;
        int kind = marker_at(lo, c, end, &text);
        if (kind >= 0) {
            /* One marker of each kind per line, as records.find_records finds them. */
            if (!marker_line_end[kind] || c >= marker_line_end[kind]) {
                if (add_marker(o, kind, text, end, first)) return -1;
                marker_line_end[kind] = eol;
            }
        } else if (starts_with(c, eol, TL, TL_LEN)) { /* the next record: a TIMELINE */
            if (take_record(o, q, c, is_tl)) return -1;
            q = c, is_tl = 1;
        } else if (c - q >= CZ_PREFIX_LEN && !memcmp(c - CZ_PREFIX_LEN, CZ_PREFIX, CZ_PREFIX_LEN) &&
                   starts_with(c, eol, CZ_TEXT, CZ_TEXT_LEN)) { /* ... or a CUZK_TIMING */
            if (take_record(o, q, c - CZ_PREFIX_LEN, is_tl)) return -1;
            q = c, is_tl = 0;
        }
    }
    return take_record(o, q, eol, is_tl);
}

static int scan_region(Out *o, const char *lo, const char *end) {
    const char *p = lo;
    const char *marker_line_end[2] = {NULL, NULL};
    for (const char *q = candidate(p, end); q; q = candidate(p, end)) {
        const char *text;
        int kind = marker_at(lo, q, end, &text);
        if (kind >= 0) {
            /* One marker of each kind per line, as records.find_records finds them. */
            if (!marker_line_end[kind] || q >= marker_line_end[kind]) {
                /* before the records of its line: none of them is found yet */
                if (add_marker(o, kind, text, end, o->matches)) return -1;
                marker_line_end[kind] = line_end(q, end);
            }
            p = q + 1;
            continue;
        }
        int is_tl = starts_with(q, end, TL, TL_LEN);
        if (!is_tl && !(q - lo >= CZ_PREFIX_LEN &&
                        !memcmp(q - CZ_PREFIX_LEN, CZ_PREFIX, CZ_PREFIX_LEN) &&
                        starts_with(q, end, CZ_TEXT, CZ_TEXT_LEN))) {
            p = q + 1;
            continue;
        }
        const char *eol = line_end(q, end);
        if (take_line(o, lo, q, eol, is_tl, end, marker_line_end)) return -1;
        p = eol;
    }
    return 0;
}

/* ------------------------------------------------------------------ reading a file */

enum { BLOCK = 256 << 10 };

/* Whether [p, e) holds one of our records (records.SCAN_RE would find one). */
static int has_record(const char *p, const char *e) {
    return memmem(p, e - p, TL, TL_LEN) ||
           memmem(p, e - p, CZ_PREFIX CZ_TEXT, CZ_PREFIX_LEN + CZ_TEXT_LEN);
}

/* A line dropped before the next record (source.Skip). */
static int add_skip(Out *o, const char *reason) {
    return put_text_record(&o->skips, &o->heap, &o->matches, 1, reason, strlen(reason));
}

/* Drop the first n bytes of buf (file offset *pos moves on). */
static void consume(Vec *buf, int64_t *pos, size_t n) {
    memmove(buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
    *pos += n;
}

/* Scan the file bytes [start, stop) of ``fd`` (``start`` a line start), reading blocks
 * with pread, and cut them into lines as source.whole_lines does: a line of max_line
 * bytes or more is skipped whole ("oversized_line"); the last line without a line end
 * is a line, unless the file ends before ``stop`` (it shrank: truncated or rotated while
 * we read): then it is dropped, its numbers may be cut ("cut_line" when it holds a
 * record).  0, -1 (memory) or -2 (read error, errno set). */
static int scan_fd(Out *o, int fd, int64_t start, int64_t stop, int64_t max_line) {
    Vec buf = {0};
    int64_t pos = start;          /* file offset of buf.data[0] */
    size_t fresh = 0;             /* buf.data[0, fresh) holds no line end */
    int skipping = 0, rc = 0;     /* skipping: inside an oversized line */
    size_t block = max_line < BLOCK ? (size_t)max_line : BLOCK; /* <= max_line: a line */
    if (vec_reserve(&buf, block)) return -1; /* inside one block is shorter than that */
    for (;;) {
        int64_t want = stop - (pos + (int64_t)buf.len);
        if (want > (int64_t)block) want = block;
        ssize_t got = 0;
        if (want > 0) {
            if (vec_reserve(&buf, want)) {
                rc = -1;
                break;
            }
            do {
                got = pread(fd, buf.data + buf.len, want, pos + buf.len);
            } while (got < 0 && errno == EINTR);
            if (got < 0) {
                rc = -2;
                break;
            }
            buf.len += got;
        }
        int eof = got == 0, shrank = eof && want > 0;
        if (skipping && buf.len) {
            const char *k = find_eol(buf.data, buf.data + buf.len);
            consume(&buf, &pos, k ? (size_t)(k + 1 - buf.data) : buf.len);
            skipping = !k;
            fresh = 0;
        }
        if (!buf.len) {
            if (eof) break;
            continue;
        }
        size_t begin = 0;
        if (buf.len >= (size_t)max_line) { /* only the first line can be that long */
            const char *k = find_eol(buf.data + fresh, buf.data + buf.len);
            if (!k || k - buf.data >= max_line) {
                if (add_skip(o, "oversized_line")) {
                    rc = -1;
                    break;
                }
                if (!k) {
                    consume(&buf, &pos, buf.len);
                    skipping = 1;
                    if (eof) break;
                    continue;
                }
                begin = k + 1 - buf.data;
            }
        }
        /* The last line end among the bytes not searched before (linear time on data
         * without line ends). */
        size_t cut = 0, from = fresh > begin ? fresh : begin;
        for (size_t i = buf.len; i > from; i--) {
            if (is_eol(buf.data[i - 1])) {
                cut = i;
                break;
            }
        }
        if (!cut && eof) { /* the last line, without a line end */
            int failed = shrank ? has_record(buf.data + begin, buf.data + buf.len) &&
                                      add_skip(o, "cut_line")
                                : scan_region(o, buf.data + begin, buf.data + buf.len);
            if (failed) rc = -1;
            break;
        }
        if (cut && scan_region(o, buf.data + begin, buf.data + cut)) {
            rc = -1;
            break;
        }
        consume(&buf, &pos, cut ? cut : begin);
        fresh = buf.len;
    }
    free(buf.data);
    return rc;
}

/* ------------------------------------------------------------------ Python glue */

static PyObject *vec_bytes(Vec *v) {
    return PyBytes_FromStringAndSize(v->data ? v->data : "", v->len);
}

static void out_free(Out *o) {
    Vec *all[] = {&o->tl.ord, &o->tl.off,  &o->tl.event, &o->tl.job, &o->tl.flags,
                  &o->kinds,  &o->cz.ord,  &o->cz.kind,  &o->cz.a,   &o->cz.b,
                  &o->reject, &o->markers, &o->skips,    &o->job_spans, &o->copies, &o->heap};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]->data);
    for (int k = 0; k < N_KEYS; k++) free(o->tl.num[k].data);
    jobs_free(&o->jobs);
}

/* Records of ``width`` int64s ending in (heap offset, length), as a list: the text alone
 * (width 2) or a tuple of the leading numbers and the text. */
static PyObject *text_list(Vec *v, int width, const char *heap) {
    const int64_t *r = (const int64_t *)v->data;
    Py_ssize_t n = v->len / (width * 8);
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++, r += width) {
        PyObject *text = PyBytes_FromStringAndSize(heap + r[width - 2], r[width - 1]);
        PyObject *item = text;
        if (text && width == 3) item = Py_BuildValue("(LN)", (long long)r[0], text);
        if (text && width == 4) item = Py_BuildValue("(LLN)", (long long)r[0], (long long)r[1], text);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

/* Set d[key] = value, taking the reference; -1 (with d cleared) on failure. */
static int put_item(PyObject *d, const char *key, PyObject *value) {
    int failed = !value || PyDict_SetItemString(d, key, value) < 0;
    Py_XDECREF(value);
    return failed ? -1 : 0;
}

static PyObject *build_result(Out *o) {
    const char *heap = o->heap.data ? o->heap.data : "";
    PyObject *res = PyDict_New();
    int failed = !res;
    failed = failed || put_item(res, "matches", PyLong_FromLongLong(o->matches));
    failed = failed || put_item(res, "tl_ord", vec_bytes(&o->tl.ord));
    failed = failed || put_item(res, "tl_off", vec_bytes(&o->tl.off));
    failed = failed || put_item(res, "tl_event", vec_bytes(&o->tl.event));
    failed = failed || put_item(res, "tl_job", vec_bytes(&o->tl.job));
    failed = failed || put_item(res, "tl_flags", vec_bytes(&o->tl.flags));
    for (int k = 0; k < N_KEYS && !failed; k++) {
        char name[64];
        if (KEY_KIND[k] > KEY_MS) continue;
        snprintf(name, sizeof name, "tl_%s", KEY_NAME[k]);
        failed = put_item(res, name, vec_bytes(&o->tl.num[k]));
    }
    failed = failed || put_item(res, "cz_ord", vec_bytes(&o->cz.ord));
    failed = failed || put_item(res, "cz_kind", vec_bytes(&o->cz.kind));
    failed = failed || put_item(res, "cz_a", vec_bytes(&o->cz.a));
    failed = failed || put_item(res, "cz_b", vec_bytes(&o->cz.b));
    failed = failed || put_item(res, "copies", vec_bytes(&o->copies));
    failed = failed || put_item(res, "jobs", text_list(&o->job_spans, 2, heap));
    failed = failed || put_item(res, "kinds", text_list(&o->kinds, 3, heap));
    failed = failed || put_item(res, "rejects", text_list(&o->reject, 3, heap));
    failed = failed || put_item(res, "markers", text_list(&o->markers, 4, heap));
    failed = failed || put_item(res, "skips", text_list(&o->skips, 3, heap));
    if (failed) Py_CLEAR(res);
    return res;
}

#define RESULT_DOC                                                                        \
    "A dict: matches (records found, in the order of records.find_records); tl_* packed\n" \
    "columns of the strict TIMELINE records (ord, off int64; event int8; job int32 local\n" \
    "code; tl_<key> int64, -1 absent, for each number key of grammar.DETAIL_KEYS; flags\n" \
    "uint8: 1 the text key (kind=), 2 the flag key (monolithic));\n"                      \
    "jobs: the local job ids; kinds: [(row, kind)]; cz_* columns of the strict\n"         \
    "CUZK_TIMING lines (ord int64, kind int8, a, b int64, b -1 absent); rejects:\n"       \
    "[(ord, line)] for the exact path; markers: [(matches before its line, kind, text)];\n"\
    "skips: [(matches before it, reason)] of the lines dropped whole (scan_file);\n"     \
    "copies: packed int64 (row, n): n exact copies of row folded into it."

PyDoc_STRVAR(SCAN_DOC, "scan(buffer, start, end) -> dict\n\n"
                       "Scan buffer[start:end] (whole lines).  " RESULT_DOC);

static PyObject *scan(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn", &view, &start, &end)) return NULL;
    if (start < 0 || end > view.len || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "scan: start/end outside the buffer");
        return NULL;
    }
    Out o;
    memset(&o, 0, sizeof o);
    const char *base = view.buf;
    int failed;
    Py_BEGIN_ALLOW_THREADS;
    failed = scan_region(&o, base + start, base + end);
    Py_END_ALLOW_THREADS;
    PyObject *res = failed ? PyErr_NoMemory() : build_result(&o);
    out_free(&o);
    PyBuffer_Release(&view);
    return res;
}

PyDoc_STRVAR(SCAN_FILE_DOC, "scan_file(fd, start, stop, max_line) -> dict\n\n"
                            "Scan the bytes [start, stop) of the open file ``fd`` (start at a\n"
                            "line start) with pread, without the GIL; lines of max_line bytes\n"
                            "or more are skipped (source.whole_lines).  " RESULT_DOC);

static PyObject *scan_file(PyObject *self, PyObject *args) {
    (void)self;
    int fd;
    long long start, stop, max_line;
    if (!PyArg_ParseTuple(args, "iLLL", &fd, &start, &stop, &max_line)) return NULL;
    if (start < 0 || stop < start || max_line < 1) {
        PyErr_SetString(PyExc_ValueError, "scan_file: bad range");
        return NULL;
    }
    Out o;
    memset(&o, 0, sizeof o);
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = scan_fd(&o, fd, start, stop, max_line);
    Py_END_ALLOW_THREADS;
    PyObject *res = rc == -1   ? PyErr_NoMemory()
                    : rc == -2 ? PyErr_SetFromErrno(PyExc_OSError)
                               : build_result(&o);
    out_free(&o);
    return res;
}

/* ------------------------------------------------------------------ block matching */

PyDoc_STRVAR(MATCH_DOC,
             "match_blocks(queue, qoff, ends, started, gpu_start, bseq, lock, kernel, low,\n"
             "             high, ids, ambiguous_ms) -> (owner, ambiguous)\n\n"
             "The loop of timing._match (which documents it) over packed arrays: queue /\n"
             "ends int64 per GPU, cut by qoff (n_gpus + 1); started int64 n_gpus x n_blocks;\n"
             "gpu_start float64 per call; bseq int64, lock, kernel, low, high float64 per\n"
             "block; ids int64 per GPU.  owner: packed int64 per block, -1 for none.");

/* A min-heap of queue places ordered by (ends[place], place): the started calls of one
 * GPU, the one that ends first on top. */
static int ends_less(const int64_t *ends, int64_t a, int64_t b) {
    return ends[a] < ends[b] || (ends[a] == ends[b] && a < b);
}

static void ends_push(int64_t *h, int64_t *n, int64_t x, const int64_t *ends) {
    int64_t i = (*n)++;
    while (i > 0 && ends_less(ends, x, h[(i - 1) / 2])) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
    h[i] = x;
}

static void ends_pop(int64_t *h, int64_t *n, const int64_t *ends) {
    int64_t last = h[--(*n)], i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && ends_less(ends, h[c + 1], h[c])) c++;
        if (!ends_less(ends, h[c], last)) break;
        h[i] = h[c], i = c;
    }
    if (*n > 0) h[i] = last;
}

static PyObject *match_blocks(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[11];
    double ambiguous_ms;
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*d", &b[0], &b[1], &b[2], &b[3], &b[4],
                          &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &ambiguous_ms))
        return NULL;
    const int64_t *queue = b[0].buf, *qoff = b[1].buf, *ends = b[2].buf, *started = b[3].buf;
    const double *gpu_start = b[4].buf;
    const int64_t *bseq = b[5].buf;
    const double *lock = b[6].buf, *kernel = b[7].buf, *low = b[8].buf, *high = b[9].buf;
    const int64_t *ids = b[10].buf;
    Py_ssize_t n_gpus = b[10].len / 8, n_blocks = b[5].len / 8;
    PyObject *res = NULL;
    int ok = b[1].len / 8 == n_gpus + 1 && b[3].len / 8 == n_gpus * n_blocks &&
             b[0].len == b[2].len && b[6].len / 8 == n_blocks && b[7].len / 8 == n_blocks &&
             b[8].len / 8 == n_blocks && b[9].len / 8 == n_blocks;
    for (Py_ssize_t k = 0; ok && k < n_gpus; k++)
        ok = qoff[k] >= 0 && qoff[k] <= qoff[k + 1] && qoff[k + 1] <= b[0].len / 8;
    for (Py_ssize_t i = 0; ok && i < b[0].len / 8; i++)
        ok = queue[i] >= 0 && queue[i] < b[4].len / 8;
    for (Py_ssize_t k = 0; ok && k < n_gpus; k++)
        for (Py_ssize_t i = 0; ok && i < n_blocks; i++)
            ok = started[k * n_blocks + i] >= 0 &&
                 started[k * n_blocks + i] <= qoff[k + 1] - qoff[k];
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "match_blocks: inconsistent array sizes");
        goto done;
    }
    PyObject *owner_bytes = PyBytes_FromStringAndSize(NULL, n_blocks * 8);
    Py_ssize_t n_calls = b[0].len / 8;
    /* Per GPU: the oldest call perhaps still open and free (heads), the calls started so
     * far (pushed) in a heap by end in the GPU's part of ``soonest``; calls given a block. */
    int64_t *heads = calloc(n_gpus + 1, sizeof *heads), *pushed = calloc(n_gpus + 1, 8);
    int64_t *size = calloc(n_gpus + 1, sizeof *size), *soonest = malloc((n_calls + 1) * 8);
    char *given = calloc(n_calls + 1, 1);
    int64_t *place = malloc((n_gpus + 1) * sizeof *place);
    double *last_end = malloc((n_gpus + 1) * sizeof *last_end);
    if (!owner_bytes || !heads || !pushed || !size || !soonest || !given || !place || !last_end) {
        Py_XDECREF(owner_bytes);
        free(heads), free(pushed), free(size), free(soonest), free(given), free(place);
        free(last_end);
        PyErr_NoMemory();
        goto done;
    }
    int64_t *owner = (int64_t *)PyBytes_AS_STRING(owner_bytes);
    long long ambiguous = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t k = 0; k < n_gpus; k++)
        heads[k] = pushed[k] = qoff[k], last_end[k] = -INFINITY;
    for (Py_ssize_t blk = 0; blk < n_blocks; blk++) {
        int found = 0, best_k = -1;
        double best[4], second = INFINITY; /* (score, kernel start, gpu id, call) */
        int64_t after = blk + 1 < n_blocks ? bseq[blk + 1] : INT64_MAX;
        for (Py_ssize_t k = 0; k < n_gpus; k++) {
            int64_t *heap = soonest + qoff[k], lim = qoff[k] + started[k * n_blocks + blk];
            while (pushed[k] < lim) ends_push(heap, &size[k], pushed[k]++, ends);
            while (size[k] && (ends[heap[0]] < bseq[blk] || given[heap[0]]))
                ends_pop(heap, &size[k], ends); /* ended before the block, or given */
            int64_t h = heads[k];
            while (h < lim && (ends[h] < bseq[blk] || given[h])) h++;
            heads[k] = h;
            if (!size[k]) continue;
            /* The oldest call, unless one ends before the next block: that one. */
            place[k] = ends[heap[0]] < after ? heap[0] : h;
            int64_t c = queue[place[k]];
            double ks = gpu_start[c] + lock[blk];
            double score = fmax(0.0, low[blk] - ks) + fmax(0.0, ks - high[blk]) +
                           fmax(0.0, last_end[k] - ks);
            double cand[4] = {score, ks, (double)ids[k], (double)c};
            int better = !found;
            for (int j = 0; j < 4 && found; j++) {
                if (cand[j] != best[j]) {
                    better = cand[j] < best[j];
                    break;
                }
            }
            if (better) {
                if (found) second = best[0];
                memcpy(best, cand, sizeof best);
                best_k = (int)k;
            } else if (score < second) {
                second = score;
            }
            found++;
        }
        owner[blk] = -1;
        if (!found) continue;
        if (found > 1) ambiguous += second - best[0] <= ambiguous_ms;
        int64_t c = queue[place[best_k]];
        given[place[best_k]] = 1;
        owner[blk] = c;
        last_end[best_k] = gpu_start[c] + lock[blk] + kernel[blk];
    }
    Py_END_ALLOW_THREADS;
    free(heads), free(pushed), free(size), free(soonest), free(given), free(place);
    free(last_end);
    res = Py_BuildValue("(NL)", owner_bytes, ambiguous);
done:
    for (int i = 0; i < 11; i++)
        if (b[i].obj) PyBuffer_Release(&b[i]);
    return res;
}

/* ------------------------------------------------------------------ row packing */

PyDoc_STRVAR(PACK_DOC,
             "pack_sorted(start, end) -> rows\n\n"
             "The loop of analysis.packing.pack_rows over intervals sorted by (start, end):\n"
             "start / end float64 (end >= start, inf: never freed); each interval takes the\n"
             "lowest row free at its start (a row is free from its last interval's end on).\n"
             "rows: packed int32, one per interval.");

/* A min-heap of (key, row): the rows in use by (end, row), the free rows by (row, row). */
typedef struct {
    double end;
    int32_t row;
} Busy;

static int busy_less(Busy a, Busy b) { return a.end < b.end || (a.end == b.end && a.row < b.row); }

static void busy_push(Busy *h, Py_ssize_t *n, Busy x) {
    Py_ssize_t i = (*n)++;
    while (i > 0 && busy_less(x, h[(i - 1) / 2])) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
    h[i] = x;
}

static Busy busy_pop(Busy *h, Py_ssize_t *n) {
    Busy top = h[0], last = h[--(*n)];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && busy_less(h[c + 1], h[c])) c++;
        if (!busy_less(h[c], last)) break;
        h[i] = h[c], i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

static PyObject *pack_sorted(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bs, be;
    if (!PyArg_ParseTuple(args, "y*y*", &bs, &be)) return NULL;
    PyObject *res = NULL;
    Py_ssize_t n = bs.len / 8;
    if (be.len != bs.len || n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, be.len != bs.len
                                              ? "pack_sorted: start and end differ in length"
                                              : "pack_sorted: over 2^31 intervals");
        goto done;
    }
    const double *start = bs.buf, *end = be.buf;
    res = PyBytes_FromStringAndSize(NULL, n * 4);
    Busy *busy = malloc((n + 1) * sizeof *busy);
    Busy *free_rows = malloc((n + 1) * sizeof *free_rows);
    if (!res || !busy || !free_rows) {
        Py_CLEAR(res);
        free(busy), free(free_rows);
        PyErr_NoMemory();
        goto done;
    }
    int32_t *rows = (int32_t *)PyBytes_AS_STRING(res);
    Py_BEGIN_ALLOW_THREADS;
    Py_ssize_t n_busy = 0, n_free = 0;
    int32_t used = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        while (n_busy && busy[0].end <= start[i]) {
            int32_t freed = busy_pop(busy, &n_busy).row;
            busy_push(free_rows, &n_free, (Busy){freed, freed});
        }
        int32_t r = n_free ? busy_pop(free_rows, &n_free).row : used++;
        rows[i] = r;
        busy_push(busy, &n_busy, (Busy){end[i], r});
    }
    Py_END_ALLOW_THREADS;
    free(busy), free(free_rows);
done:
    PyBuffer_Release(&bs);
    PyBuffer_Release(&be);
    return res;
}

static PyMethodDef METHODS[] = {{"scan", scan, METH_VARARGS, SCAN_DOC},
                                {"scan_file", scan_file, METH_VARARGS, SCAN_FILE_DOC},
                                {"match_blocks", match_blocks, METH_VARARGS, MATCH_DOC},
                                {"pack_sorted", pack_sorted, METH_VARARGS, PACK_DOC},
                                {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_cscan", "The compiled line scanner of viewer.io (optional).", -1,
    METHODS, NULL, NULL, NULL, NULL};

/* The grammar's tables as grammar.tables() spells them (a test holds them equal). */
static PyObject *grammar(void) {
    static const char *const KIND[] = {"id", "ms", "text", "flag"};
    PyObject *events = PyTuple_New(N_EVENTS), *keys = PyTuple_New(N_KEYS);
    PyObject *forms = PyTuple_New(N_CUZK);
    int failed = !events || !keys || !forms;
    for (int i = 0; !failed && i < N_EVENTS; i++) {
        PyObject *x = Py_BuildValue("(yi)", EVENT_NAME[i], EVENT_CODE[i]);
        failed = !x;
        if (x) PyTuple_SET_ITEM(events, i, x);
    }
    for (int k = 0; !failed && k < N_KEYS; k++) {
        PyObject *x = Py_BuildValue("(ysi)", KEY_NAME[k], KIND[KEY_KIND[k]], KEY_DIGITS[k]);
        failed = !x;
        if (x) PyTuple_SET_ITEM(keys, k, x);
    }
    for (int k = 0; !failed && k < N_CUZK; k++) {
        PyObject *x = CUZK_SECOND[k] ? Py_BuildValue("(yy)", CUZK_FIRST[k], CUZK_SECOND[k])
                                     : Py_BuildValue("(yO)", CUZK_FIRST[k], Py_None);
        failed = !x;
        if (x) PyTuple_SET_ITEM(forms, k, x);
    }
    PyObject *res = failed ? NULL
                           : Py_BuildValue("{s(yy)s((yii)(yii))sOsOsOs(iiiii)}", "record_starts",
                                           TL, CZ_PREFIX CZ_TEXT, "markers", DAEMON,
                                           MARK_DAEMON, DAEMON_PROBE, WORKER, MARK_WORKER,
                                           WORKER_PROBE, "events", events, "detail_keys", keys,
                                           "cuzk_forms", forms, "limits", MAX_OFFSET_DIGITS,
                                           MAX_MS_DIGITS, MAX_ID_DIGITS, MAX_JOB, MAX_KIND);
    Py_XDECREF(events);
    Py_XDECREF(keys);
    Py_XDECREF(forms);
    return res;
}

PyMODINIT_FUNC PyInit__cscan(void) {
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    PyObject *module = PyModule_Create(&MODULE);
    PyObject *tables = module ? grammar() : NULL;
    if (!tables || PyModule_AddObjectRef(module, "GRAMMAR", tables) < 0) Py_CLEAR(module);
    Py_XDECREF(tables);
    return module;
}

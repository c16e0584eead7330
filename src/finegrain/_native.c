/* finegrain._native: nested Python mappings to flat columns in one C pass.
 *
 * flatten(data, integral) walks {qid: {doc_id: value}} (exact dicts, exact str document ids) once:
 * it interns every document id through an open-addressing table of (hash, id, code) slots (a str
 * caches its hash, so each lookup hashes nothing new; an id is the slot's when it is the same object
 * or an equal str), in order of first appearance, and copies every value into a column of int64 (integral:
 * exact ints in the int64 range) or float64 (floats, float subclasses such as numpy.float64, and
 * exact ints, converted as float() converts them). It returns
 * (offsets, codes, vocab, values): offsets and codes as int64 bytes, vocab as a tuple of the distinct
 * ids, values as int64 or float64 bytes; or None when the input is anything else (another mapping
 * type, a non-str id, a bool or other value type, an int out of range), and the caller takes its
 * Python path, which accepts or refuses those with its own rules. So this module never decides
 * what an input means: it is the same result, sooner, for the plain case.
 *
 * columns_new(width, more, value_column, integral, doc_column=2, tabs=0) / columns_add(state, block) /
 * columns_finish(state) read the lines of TREC files a block at a time (the blocks of
 * finegrain.io._columns.fast_blocks: valid UTF-8, no NUL byte, whole lines). Each line is split on
 * ASCII whitespace as bytes.split() splits it (tabs: on each tab, fields kept as they are, as in a
 * BEIR qrels.tsv); a blank line (tabs: an empty one) is skipped; any other line must hold exactly
 * `width` fields (`more`: at least `width`). Fields 0 and `doc_column` (the query and document ids)
 * are interned by their bytes, in order
 * of first appearance; field `value_column` is read as a grade [+-]?[0-9]{1,18} (integral) or as a
 * score written as a plain C decimal literal (the bytes 0-9 + - . e E, converted exactly as float()
 * converts it, and finite). columns_add returns False on the first line it does not take as it is,
 * and the caller reads the file with its Python path, which accepts or refuses it with its own
 * rules. columns_finish returns (qids, qcodes, docs, dcodes, values), ids as str.
 *
 * jsonl_add(state, block) reads run.jsonl query lines, exactly as finegrain.io.run_jsonl writes them,
 * {"qid": "Q", "results": [["D", S], ...]} (json's separators, strings without an escape or a control
 * character, scores as JSON numbers read as json reads them), into the same columns: one query code
 * and one count of results per line, one document code and score per result. It returns False on the
 * first line it does not take as it is.
 *
 * index_in(vocab, ids, distinct=False) is the position in `vocab` of each of `ids` (-1 where absent) as
 * int64 bytes, for sequences of exact str (else None: the caller's Python path); equal strings match, as in
 * a dict. With `distinct`, also None when an id repeats in `vocab`.
 *
 * judged_grades(jseg, jdocs, jgrades, block_seg, block_start, entries, docs, n_codes, n_queries) looks each
 * ranked run entry up in its own query's judgements (jseg, jdocs, jgrades: query, document code and grade of
 * each; a query's judgements contiguous). The ranked entries come in blocks, one query's each (block b holds
 * positions block_start[b] up to block_start[b + 1], query block_seg[b]); position i is run entry
 * entries[i], of document docs[entries[i]]. For each block, its query's judgements mark their documents in
 * a table indexed by document code, so each lookup is one read, and no judgement is sorted. Documents are
 * codes below n_codes in one vocabulary (the caller maps the judgements into the run's; a judgement's -1
 * names a document the run never names). It returns each entry's grade (0 when unjudged) as int64 bytes
 * and whether it is judged, a byte each (None for 2^32 - 1 queries or more).
 *
 * rank_rows(out, asc, offsets, values, codes, tie) ranks a run's rows: each row argsorted by score (numpy)
 * is read back in descending order, and only runs of equal scores are ordered again, by document id
 * descending (the rank of the id) and input order, while the row is in the CPU's cache.
 *
 * segments_of(offsets) and positions_of(offsets) are each entry's segment and its position within it, from
 * a table's offsets, in one pass.
 *
 * has_repeats(seg, codes, n_codes) is whether a code repeats within a segment (a run or qrels naming a
 * document twice for one query), in one pass over entries grouped by segment; None when they are not
 * (the caller sorts instead).
 *
 * string_ranks(strings) is the position of each string in ascending code-point order (Python's str
 * order) as int64 bytes, for a sequence of exact str that encode to UTF-8 (else None: the caller's
 * Python path). UTF-8 byte order is code-point order, so the strings are sorted by their bytes: a radix
 * sort on an 8-byte big-endian key read after the prefix they all share, then each run of equal keys
 * on the rest of their bytes and their length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* CPython 3.11 (not PyPy), where its internal header is installed: flatten reads a dict's entries in place,
 * through the layout this very version's header declares. PyDict_Next reads each key's cached hash as it
 * steps, a cache miss per entry (the ids lie anywhere in memory) that no later code can fetch ahead; reading
 * the (key, value) pairs leaves each id untouched until the loop that hashes it, which fetches it AHEAD of its
 * turn. Other versions (3.12's internal headers do not build in an extension), a dict of another kind (split,
 * or keys not all str): PyDict_Next. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(PYPY_VERSION) && \
    !defined(Py_LIMITED_API) && defined(__has_include)
#if __has_include("internal/pycore_dict.h")
#define Py_BUILD_CORE 1
#include "internal/pycore_dict.h"
#undef Py_BUILD_CORE
#define DICT_ENTRIES_IN_PLACE 1
#endif
#endif

/* How many entries ahead a loop asks the CPU to fetch what a later lookup reads. */
#define AHEAD 12

/* ------------------------------------------------------------------ large tables */

/* Lookups land anywhere in a hash table or a table by code, so with 4 KiB pages a table of many MiB misses
 * the TLB at nearly every lookup. On Linux a table of a huge page or more is therefore mapped on its own
 * and advised to use huge pages (transparent huge pages in "madvise" mode, the common default, take only
 * advised memory); elsewhere, or when smaller, it comes from PyMem. Zeroed either way. */
#define HUGE_PAGE ((size_t)1 << 21)

typedef struct {
    void *base; /* the mapping (NULL: from PyMem, this header at its start) */
    size_t len;
} TableHead;

static void *table_alloc(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_PAGE) {
        size_t len = bytes + 2 * HUGE_PAGE;
        void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
            return NULL;
        }
        char *p = (char *)(((uintptr_t)base + sizeof(TableHead) + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: refused, the table keeps small pages */
        ((TableHead *)p)[-1] = (TableHead){base, len};
        return p;
    }
#endif
    TableHead *head = PyMem_Calloc(1, sizeof(TableHead) + bytes);
    return head ? (void *)(head + 1) : NULL;
}

static void table_free(void *p) {
    if (p == NULL) {
        return;
    }
    TableHead *head = (TableHead *)p - 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (head->base != NULL) {
        munmap(head->base, head->len);
        return;
    }
#endif
    PyMem_Free(head);
}

/* The interning table: linear probing over a power-of-two array, at most half full. */
typedef struct {
    PyObject *key;  /* borrowed: the vocab list holds a reference */
    uint32_t hash;  /* the low bits of the key's hash: where it goes, and a first check before comparing */
    int32_t code;   /* codes stay below INT32_MAX: the callers take no more entries than that */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    size_t used;
} Table;

static int table_init(Table *t, size_t expect) {
    size_t size = 16;
    while (size < 2 * expect + 2) {
        size <<= 1;
    }
    t->slots = table_alloc(size * sizeof(Slot));
    t->mask = size - 1;
    t->used = 0;
    return t->slots ? 0 : -1;
}

/* Up to a million slots a table grows fourfold: fewer grows, each of which moves every key to a random slot
 * of the new table, for at most 16 MiB of table; beyond, it doubles. */
#define GROW_FOURFOLD_BELOW ((size_t)1 << 20)

static int table_grow(Table *t) {
    size_t size = (t->mask + 1 < GROW_FOURFOLD_BELOW ? 4 : 2) * (t->mask + 1);
    Slot *slots = table_alloc(size * sizeof(Slot));
    if (slots == NULL) {
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].key != NULL) {
            size_t j = (size_t)t->slots[i].hash & (size - 1);
            while (slots[j].key != NULL) {
                j = (j + 1) & (size - 1);
            }
            slots[j] = t->slots[i];
        }
    }
    table_free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* The code of `key` (hash h), or -2 when absent; -1 with an exception on failure. */
static int64_t table_find(const Table *t, PyObject *key, Py_hash_t h) {
    size_t j = (size_t)h & t->mask;
    for (;;) {
        const Slot *s = &t->slots[j];
        if (s->key == NULL) {
            return -2;
        }
        if (s->key == key) {
            return s->code;
        }
        if (s->hash == (uint32_t)h) {
            int eq = PyObject_RichCompareBool(s->key, key, Py_EQ);
            if (eq < 0) {
                return -1;
            }
            if (eq) {
                return s->code;
            }
        }
        j = (j + 1) & t->mask;
    }
}

/* The code of `key` (whose hash is h), added as `next` when new (*added set to 1); -1 with an exception
 * on failure. */
static int64_t table_code(Table *t, PyObject *key, Py_hash_t h, int64_t next, int *added) {
    int64_t found = table_find(t, key, h);
    *added = 0;
    if (found != -2) {
        return found;
    }
    if (2 * (t->used + 1) > t->mask + 1 && table_grow(t) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    size_t j = (size_t)h & t->mask;
    while (t->slots[j].key != NULL) { /* the end of the chain the search just walked (in the CPU's cache) */
        j = (j + 1) & t->mask;
    }
    t->slots[j].hash = (uint32_t)h;
    t->slots[j].key = key;
    t->slots[j].code = (int32_t)next;
    t->used++;
    *added = 1;
    return next;
}

static PyObject *index_in(PyObject *self, PyObject *args) {
    PyObject *vocab_arg, *ids_arg;
    int distinct = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO|p", &vocab_arg, &ids_arg, &distinct)) {
        return NULL;
    }
    PyObject *vocab = PySequence_Fast(vocab_arg, "index_in: vocab must be a sequence");
    PyObject *ids = vocab ? PySequence_Fast(ids_arg, "index_in: ids must be a sequence") : NULL;
    PyObject *out = NULL;
    Table table = {NULL, 0, 0};
    Py_hash_t *hashes = NULL;
    if (!ids) {
        goto done;
    }
    Py_ssize_t nv = PySequence_Fast_GET_SIZE(vocab), n = PySequence_Fast_GET_SIZE(ids);
    PyObject **v = PySequence_Fast_ITEMS(vocab), **x = PySequence_Fast_ITEMS(ids);
    if (nv >= INT32_MAX) { /* a code is an int32 */
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    if (table_init(&table, (size_t)nv) < 0 || !(hashes = PyMem_Malloc((size_t)(nv > n ? nv : n) * sizeof(Py_hash_t) + 1))) {
        PyErr_NoMemory();
        goto done;
    }
    /* Types and hashes first (each str object read in list order, fetched ahead; a str's hash runs no
     * Python code), then the table, each slot fetched ahead of its use: ids come in no order, and a large
     * table misses the CPU's caches at every step. */
    for (Py_ssize_t i = 0; i < nv; i++) {
        if (i + AHEAD < nv) {
            __builtin_prefetch(v[i + AHEAD]);
        }
        if (!PyUnicode_CheckExact(v[i])) {
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        if ((hashes[i] = PyObject_Hash(v[i])) == -1) {
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < nv; i++) { /* the first of equal ids keeps its position, as a dict would */
        int added;
        if (i + AHEAD < nv) {
            __builtin_prefetch(&table.slots[(size_t)hashes[i + AHEAD] & table.mask]);
        }
        if (table_code(&table, v[i], hashes[i], i, &added) < 0) {
            goto done;
        }
        if (distinct && !added) { /* an id repeats in vocab */
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            __builtin_prefetch(x[i + AHEAD]);
        }
        if (!PyUnicode_CheckExact(x[i])) {
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        if ((hashes[i] = PyObject_Hash(x[i])) == -1) {
            goto done;
        }
    }
    out = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (!out) {
        goto done;
    }
    int64_t *pos = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + 2 * AHEAD < n) {
            __builtin_prefetch(&table.slots[(size_t)hashes[i + 2 * AHEAD] & table.mask]);
        }
        if (i + AHEAD < n) { /* the id its slot holds, fetched before the comparison reads it */
            const Slot *ahead = &table.slots[(size_t)hashes[i + AHEAD] & table.mask];
            if (ahead->key != NULL) {
                __builtin_prefetch(ahead->key);
            }
        }
        int64_t c = table_find(&table, x[i], hashes[i]);
        if (c == -1) {
            Py_CLEAR(out);
            goto done;
        }
        pos[i] = c < 0 ? -1 : c;
    }
done:
    table_free(table.slots);
    PyMem_Free(hashes);
    Py_XDECREF(vocab);
    Py_XDECREF(ids);
    return out;
}

static PyObject *column(Py_ssize_t n) {
    return PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
}

/* flatten reads the entries into chunks of CHUNK (id, value) pairs, then takes each chunk's values and ids,
 * each id fetched AHEAD entries before use (ids lie anywhere in memory). Each id's table slot
 * is fetched when the id is hashed and looked up LAG entries later, so the table's cache misses overlap
 * too (ids come in no order, and a large table misses the CPU's caches at every lookup). */
#define CHUNK 1024
#define LAG 16

typedef struct {
    PyObject *id;
    Py_hash_t hash;
    Py_ssize_t at;
} Pending;

typedef struct {
    Table table;
    PyObject **vocab; /* the distinct ids (new references, taken when the id is hot), made a tuple at the end */
    Py_ssize_t n_vocab, vocab_cap;
    int64_t *code;
    int64_t *grade; /* integral: the values column */
    double *score;  /* else: the same column */
    int integral;
    Py_ssize_t hashed; /* entries hashed so far; the last LAG of them are pending in the ring */
    Pending ring[LAG];
    PyObject *ids[CHUNK], *values[CHUNK];
} Flat;

/* Interns the pending entry `p` (its code written at code[p->at]); -1 with an exception on failure. */
static int intern_pending(Flat *f, const Pending *p) {
    int added;
    int64_t c = table_code(&f->table, p->id, p->hash, f->n_vocab, &added);
    if (c < 0) {
        return -1;
    }
    if (added) {
        if (f->n_vocab == f->vocab_cap) {
            Py_ssize_t cap = f->vocab_cap ? 2 * f->vocab_cap : 1024;
            PyObject **grown = PyMem_Realloc(f->vocab, (size_t)cap * sizeof(PyObject *));
            if (!grown) {
                PyErr_NoMemory();
                return -1;
            }
            f->vocab = grown;
            f->vocab_cap = cap;
        }
        Py_INCREF(p->id);
        f->vocab[f->n_vocab++] = p->id;
    }
    f->code[p->at] = c;
    return 0;
}

/* The ids interned so far, as a tuple that takes over their references. */
static PyObject *vocab_tuple(Flat *f) {
    PyObject *t = PyTuple_New(f->n_vocab);
    if (t) {
        for (Py_ssize_t i = 0; i < f->n_vocab; i++) {
            PyTuple_SET_ITEM(t, i, f->vocab[i]);
        }
        f->n_vocab = 0;
    }
    return t;
}

static void flat_free(Flat *f) {
    if (f) {
        table_free(f->table.slots);
        for (Py_ssize_t i = 0; i < f->n_vocab; i++) {
            Py_DECREF(f->vocab[i]);
        }
        PyMem_Free(f->vocab);
        PyMem_Free(f);
    }
}

/* The chunk's n entries, the first at index `base`: 0, 1 to decline, -1 with an exception on failure. */
static int flatten_chunk(Flat *f, Py_ssize_t base, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        if (k + AHEAD < n) {
            __builtin_prefetch(f->ids[k + AHEAD]);
        }
        PyObject *value = f->values[k], *id = f->ids[k];
        if (f->integral) {
            int overflow = 0;
            long long x;
            if (!PyLong_CheckExact(value)) {
                return 1;
            }
            x = PyLong_AsLongLongAndOverflow(value, &overflow);
            if (overflow) {
                return 1;
            }
            if (x == -1 && PyErr_Occurred()) {
                return -1;
            }
            f->grade[base + k] = (int64_t)x;
        } else if (PyFloat_Check(value)) {
            f->score[base + k] = PyFloat_AS_DOUBLE(value);
        } else if (PyLong_CheckExact(value)) {
            double x = PyLong_AsDouble(value);
            if (x == -1.0 && PyErr_Occurred()) {
                PyErr_Clear(); /* too large for a double: the Python path says so */
                return 1;
            }
            f->score[base + k] = x;
        } else {
            return 1;
        }
        if (!PyUnicode_CheckExact(id)) {
            return 1; /* a non-str id */
        }
        Pending *p = &f->ring[f->hashed % LAG];
        if (f->hashed >= LAG && intern_pending(f, p) < 0) {
            return -1;
        }
        if ((p->hash = PyObject_Hash(id)) == -1) {
            return -1;
        }
        p->id = id;
        p->at = base + k;
        f->hashed++;
        __builtin_prefetch(&f->table.slots[(size_t)p->hash & f->table.mask]);
    }
    return 0;
}

static PyObject *flatten(PyObject *self, PyObject *args) {
    PyObject *outer, *key, *inner, *doc, *value;
    int integral, declined = 0, got = 0;
    Py_ssize_t pos = 0, total = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "Op", &outer, &integral)) {
        return NULL;
    }
    if (!PyDict_CheckExact(outer)) {
        Py_RETURN_NONE;
    }
    while (PyDict_Next(outer, &pos, &key, &inner)) {
        if (!PyDict_CheckExact(inner)) {
            Py_RETURN_NONE;
        }
        total += PyDict_GET_SIZE(inner);
    }
    if (total >= INT32_MAX) { /* a code is an int32 */
        Py_RETURN_NONE;
    }
    PyObject *offsets = column(PyDict_GET_SIZE(outer) + 1);
    PyObject *codes = column(total);
    PyObject *values = column(total);
    Flat *f = PyMem_Calloc(1, sizeof(Flat));
    if (!f) {
        PyErr_NoMemory();
        goto error;
    }
    if (!offsets || !codes || !values) {
        goto error;
    }
    if (table_init(&f->table, 1024) < 0) {
        PyErr_NoMemory();
        goto error;
    }
    int64_t *off = (int64_t *)PyByteArray_AS_STRING(offsets);
    f->code = (int64_t *)PyByteArray_AS_STRING(codes);
    f->grade = (int64_t *)PyByteArray_AS_STRING(values);
    f->score = (double *)PyByteArray_AS_STRING(values);
    f->integral = integral;
    Py_ssize_t i = 0, q = 0, n = 0;
    off[0] = 0;
    pos = 0;
    /* In dict order. No Python code runs from here on (exact str hash and compare, exact number reads), so
     * the borrowed ids and values stay alive and the mappings cannot change under us. */
    while (PyDict_Next(outer, &pos, &key, &inner)) {
        Py_ssize_t at = 0;
#ifdef DICT_ENTRIES_IN_PLACE
        PyDictObject *d = (PyDictObject *)inner;
        PyDictUnicodeEntry *entry = NULL;
        Py_ssize_t end = 0;
        if (d->ma_values == NULL && DK_IS_UNICODE(d->ma_keys)) {
            entry = DK_UNICODE_ENTRIES(d->ma_keys);
            end = d->ma_keys->dk_nentries;
        }
#endif
        for (;;) {
#ifdef DICT_ENTRIES_IN_PLACE
            if (entry != NULL) {
                while (at < end && entry[at].me_value == NULL) {
                    at++; /* a deleted entry */
                }
                if (at == end) {
                    break;
                }
                doc = entry[at].me_key;
                value = entry[at++].me_value;
            } else
#endif
            if (!PyDict_Next(inner, &at, &doc, &value)) {
                break;
            }
            if (i >= total) {
                goto decline; /* a mapping that grew under us */
            }
            f->ids[n] = doc;
            f->values[n++] = value;
            if (++i % CHUNK == 0) {
                if ((got = flatten_chunk(f, i - n, n)) != 0) {
                    goto failed;
                }
                n = 0;
            }
        }
        off[++q] = i;
    }
    if (i != total) {
        goto decline; /* a mapping shrank under us */
    }
    if ((got = flatten_chunk(f, i - n, n)) != 0) {
        goto failed;
    }
    for (Py_ssize_t j = f->hashed > LAG ? f->hashed - LAG : 0; j < f->hashed; j++) {
        if (intern_pending(f, &f->ring[j % LAG]) < 0) {
            goto error;
        }
    }
    PyObject *vocab = vocab_tuple(f);
    if (!vocab) {
        goto error;
    }
    flat_free(f);
    return Py_BuildValue("(NNNN)", offsets, codes, vocab, values);

failed:
    if (got < 0) {
        goto error;
    }
decline: /* the Python path decides what this input means */
    declined = 1;
error:
    flat_free(f);
    Py_XDECREF(offsets);
    Py_XDECREF(codes);
    Py_XDECREF(values);
    if (declined) {
        Py_RETURN_NONE;
    }
    return NULL;
}

/* ------------------------------------------------------------------ TREC lines */

/* Interning of byte strings: each id stored once in an arena; a slot holds what a lookup compares
 * (hash, length, where the id is), so a hit touches the slot and the arena only. */
typedef struct {
    uint64_t hash;
    int64_t start; /* offset of the id in the arena */
    int64_t len;
    int64_t code; /* -1: an empty slot */
} BSlot;

typedef struct {
    BSlot *slots;
    size_t mask;
    char *arena;
    size_t arena_len, arena_cap;
    int64_t *starts; /* per code: offset into the arena; starts[n] is the arena's length */
    size_t n, cap;
    int64_t last; /* the code of the previous id (a run lists a query's lines together), or -1 */
} Bytes;

static uint64_t hash_bytes(const char *p, Py_ssize_t len) {
    uint64_t h = 14695981039346656037ULL; /* FNV-1a, 8 bytes a step, then the tail */
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ULL;
        h ^= h >> 32;
    }
    for (; i < len; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static BSlot *new_slots(size_t size) {
    BSlot *slots = table_alloc(size * sizeof(BSlot));
    if (slots) {
        for (size_t i = 0; i < size; i++) {
            slots[i].code = -1;
        }
    }
    return slots;
}

static int bytes_init(Bytes *b) {
    memset(b, 0, sizeof(*b));
    b->last = -1;
    b->mask = 1023;
    b->slots = new_slots(b->mask + 1);
    b->cap = 1024;
    b->starts = PyMem_Malloc((b->cap + 1) * sizeof(int64_t));
    b->arena_cap = 1 << 16;
    b->arena = PyMem_Malloc(b->arena_cap);
    if (!b->slots || !b->starts || !b->arena) {
        return -1;
    }
    b->starts[0] = 0;
    return 0;
}

static void bytes_free(Bytes *b) {
    table_free(b->slots);
    PyMem_Free(b->starts);
    PyMem_Free(b->arena);
    memset(b, 0, sizeof(*b));
}

static int bytes_grow(Bytes *b) {
    size_t size = 2 * (b->mask + 1);
    BSlot *slots = new_slots(size);
    if (!slots) {
        return -1;
    }
    for (size_t i = 0; i <= b->mask; i++) {
        if (b->slots[i].code >= 0) {
            size_t j = b->slots[i].hash & (size - 1);
            while (slots[j].code >= 0) {
                j = (j + 1) & (size - 1);
            }
            slots[j] = b->slots[i];
        }
    }
    table_free(b->slots);
    b->slots = slots;
    b->mask = size - 1;
    return 0;
}

/* The code of the id p[0:len] whose hash_bytes is h, added when new; -1 when out of memory. */
static int64_t bytes_code_hashed(Bytes *b, const char *p, Py_ssize_t len, uint64_t h) {
    size_t j = h & b->mask;
    while (b->slots[j].code >= 0) {
        BSlot *s = &b->slots[j];
        if (s->hash == h && s->len == len && memcmp(b->arena + s->start, p, len) == 0) {
            return b->last = s->code;
        }
        j = (j + 1) & b->mask;
    }
    if (2 * (b->n + 1) > b->mask + 1) {
        if (bytes_grow(b) < 0) {
            return -1;
        }
        j = h & b->mask;
        while (b->slots[j].code >= 0) {
            j = (j + 1) & b->mask;
        }
    }
    if (b->n == b->cap) {
        int64_t *starts = PyMem_Realloc(b->starts, (2 * b->cap + 1) * sizeof(int64_t));
        if (!starts) {
            return -1;
        }
        b->starts = starts;
        b->cap *= 2;
    }
    while (b->arena_len + (size_t)len > b->arena_cap) {
        char *arena = PyMem_Realloc(b->arena, 2 * b->arena_cap);
        if (!arena) {
            return -1;
        }
        b->arena = arena;
        b->arena_cap *= 2;
    }
    memcpy(b->arena + b->arena_len, p, len);
    int64_t c = (int64_t)b->n++;
    b->slots[j].hash = h;
    b->slots[j].start = (int64_t)b->arena_len;
    b->slots[j].len = len;
    b->slots[j].code = c;
    b->arena_len += len;
    b->starts[c + 1] = (int64_t)b->arena_len;
    return b->last = c;
}

/* The code of the id p[0:len]: the previous id's when it is the same (no lookup), else looked up. */
static int64_t bytes_code(Bytes *b, const char *p, Py_ssize_t len) {
    if (b->last >= 0 && b->starts[b->last + 1] - b->starts[b->last] == len &&
        memcmp(b->arena + b->starts[b->last], p, len) == 0) {
        return b->last;
    }
    return bytes_code_hashed(b, p, len, hash_bytes(p, len));
}

/* A growable column of 8-byte cells. */
typedef struct {
    char *data;
    size_t n, cap;
} Column;

static int column_push(Column *c, const void *cell) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1 << 16;
        char *data = PyMem_Realloc(c->data, cap * 8);
        if (!data) {
            return -1;
        }
        c->data = data;
        c->cap = cap;
    }
    memcpy(c->data + 8 * c->n++, cell, 8);
    return 0;
}

typedef struct {
    int width, more, value_column, integral, doc_column, tabs;
    Bytes queries, docs;
    Column qcodes, dcodes, values, counts; /* counts: results per line (run.jsonl) */
    /* the block's document fields, looked up after the block is split: where, how long, their hashes */
    const char **doc_at;
    int64_t *doc_len;
    uint64_t *doc_hash;
    size_t doc_cap;
} Lines;

static const char *CAPSULE = "finegrain._native.columns";

static void lines_free(PyObject *capsule) {
    Lines *t = PyCapsule_GetPointer(capsule, CAPSULE);
    if (t) {
        bytes_free(&t->queries);
        bytes_free(&t->docs);
        PyMem_Free(t->qcodes.data);
        PyMem_Free(t->dcodes.data);
        PyMem_Free(t->values.data);
        PyMem_Free(t->counts.data);
        PyMem_Free(t->doc_at);
        PyMem_Free(t->doc_len);
        PyMem_Free(t->doc_hash);
        PyMem_Free(t);
    }
}

/* Room for n document fields of a block. */
static int doc_room(Lines *t, size_t n) {
    if (n <= t->doc_cap) {
        return 0;
    }
    size_t cap = t->doc_cap ? t->doc_cap : 1 << 14;
    while (cap < n) {
        cap *= 2;
    }
    const char **at = PyMem_Realloc(t->doc_at, cap * sizeof(char *));
    if (at) {
        t->doc_at = at;
    }
    int64_t *len = PyMem_Realloc(t->doc_len, cap * sizeof(int64_t));
    if (len) {
        t->doc_len = len;
    }
    uint64_t *hash = PyMem_Realloc(t->doc_hash, cap * sizeof(uint64_t));
    if (hash) {
        t->doc_hash = hash;
    }
    if (!at || !len || !hash) {
        return -1;
    }
    t->doc_cap = cap;
    return 0;
}

/* Intern the block's n document fields: hashed first, then looked up a little behind, each slot fetched
 * ahead of its lookup (a document column is in no order: most lookups miss the CPU's caches). */
static int lookup_docs(Lines *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        t->doc_hash[i] = hash_bytes(t->doc_at[i], t->doc_len[i]);
    }
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            __builtin_prefetch(&t->docs.slots[t->doc_hash[i + AHEAD] & t->docs.mask]);
        }
        int64_t d = bytes_code_hashed(&t->docs, t->doc_at[i], t->doc_len[i], t->doc_hash[i]);
        if (d < 0 || column_push(&t->dcodes, &d) < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *columns_new(PyObject *self, PyObject *args) {
    int width, more, value_column, integral, doc_column = 2, tabs = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "ipip|ip", &width, &more, &value_column, &integral, &doc_column, &tabs)) {
        return NULL;
    }
    if (width < 3 || width > 64 || doc_column < 1 || doc_column >= width || value_column < 1 ||
        value_column >= width || value_column == doc_column || (tabs && more)) {
        PyErr_SetString(PyExc_ValueError, "columns_new: field 0 and doc_column are ids, value_column another "
                                          "field of width <= 64; tabs reads exactly width fields");
        return NULL;
    }
    Lines *t = PyMem_Calloc(1, sizeof(Lines));
    if (!t) {
        return PyErr_NoMemory();
    }
    t->width = width;
    t->more = more;
    t->value_column = value_column;
    t->integral = integral;
    t->doc_column = doc_column;
    t->tabs = tabs;
    if (bytes_init(&t->queries) < 0 || bytes_init(&t->docs) < 0) {
        bytes_free(&t->queries);
        bytes_free(&t->docs);
        PyMem_Free(t);
        return PyErr_NoMemory();
    }
    PyObject *capsule = PyCapsule_New(t, CAPSULE, lines_free);
    if (!capsule) {
        bytes_free(&t->queries);
        bytes_free(&t->docs);
        PyMem_Free(t);
    }
    return capsule;
}

/* What each byte is to the line splitter: part of a field, bytes.split()'s whitespace but the line end,
 * or the line end. */
enum { FIELD = 0, SPACE = 1, LINE_END = 2 };
static const unsigned char BYTE_CLASS[256] = {
    ['\t'] = SPACE, ['\n'] = LINE_END, ['\x0b'] = SPACE, ['\x0c'] = SPACE, ['\r'] = SPACE, [' '] = SPACE,
};

static const double POW10[20] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};

/* A grade [+-]?[0-9]{1,18}; 0 when the field is not one. */
static int read_grade(const char *p, Py_ssize_t len, int64_t *out) {
    Py_ssize_t i = 0;
    int neg = 0;
    if (len && (p[0] == '+' || p[0] == '-')) {
        neg = p[0] == '-';
        i = 1;
    }
    if (len - i < 1 || len - i > 18) {
        return 0;
    }
    int64_t v = 0;
    for (; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return 0;
        }
        v = 10 * v + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

/* A finite score written as a plain C decimal literal, as float() reads it; 0 when it is not one. */
static int read_score(const char *p, Py_ssize_t len, double *out) {
    if (len < 1 || len > 64) {
        return 0;
    }
    /* [+-]?digits with at most one dot, <= 18 bytes, mantissa <= 2**53: one exact division (Clinger) */
    if (len <= 18) {
        Py_ssize_t k = (p[0] == '+' || p[0] == '-') ? 1 : 0;
        uint64_t mant = 0;
        int digits = 0, dots = 0, frac = 0;
        for (; k < len; k++) {
            unsigned d = (unsigned)((unsigned char)p[k] - '0');
            if (d <= 9) {
                mant = 10 * mant + d;
                digits++;
                frac += dots;
            } else if (p[k] == '.' && !dots) {
                dots = 1;
            } else {
                break;
            }
        }
        if (k == len && digits >= 1 && mant <= (1ULL << 53)) {
            double v = (double)mant / POW10[frac];
            *out = p[0] == '-' ? -v : v;
            return 1;
        }
    }
    for (Py_ssize_t i = 0; i < len; i++) { /* anything else float() would take that a C literal has */
        char c = p[i];
        if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E')) {
            return 0;
        }
    }
    char buf[65];
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *end = NULL;
    double v = PyOS_string_to_double(buf, &end, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (end != buf + len || !isfinite(v)) {
        return 0;
    }
    *out = v;
    return 1;
}

static PyObject *columns_add(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer view;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oy*", &capsule, &view)) {
        return NULL;
    }
    Lines *t = PyCapsule_GetPointer(capsule, CAPSULE);
    if (!t) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const char *p = view.buf, *end = p + view.len;
    const char *fs[64], *fe[64];
    int ok = 1;
    size_t n_docs = 0;
    while (p < end && ok) {
        int nf = 0;
        if (t->tabs) { /* fields between tabs, kept as they are (spaces and all); an empty line is blank */
            const char *line_end = memchr(p, '\n', (size_t)(end - p));
            line_end = line_end ? line_end : end;
            if (line_end > p) {
                for (;;) {
                    const char *tab = memchr(p, '\t', (size_t)(line_end - p));
                    const char *e = tab ? tab : line_end;
                    if (nf < t->width) {
                        fs[nf] = p;
                        fe[nf] = e;
                    }
                    nf++;
                    p = e;
                    if (!tab) {
                        break;
                    }
                    p++;
                }
            }
            p = line_end;
        } else {
            for (;;) {
                while (p < end && BYTE_CLASS[(unsigned char)*p] == SPACE) {
                    p++;
                }
                if (p >= end || *p == '\n') {
                    break;
                }
                const char *s = p;
                while (p < end && BYTE_CLASS[(unsigned char)*p] == FIELD) {
                    p++;
                }
                if (nf < t->width) {
                    fs[nf] = s;
                    fe[nf] = p;
                }
                nf++;
            }
        }
        if (p < end) {
            p++; /* the line end */
        }
        if (nf == 0) {
            continue;
        }
        if (nf < t->width || (nf > t->width && !t->more)) {
            ok = 0;
            break;
        }
        int64_t q = bytes_code(&t->queries, fs[0], fe[0] - fs[0]);
        if (q < 0 || doc_room(t, n_docs + 1) < 0) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
        t->doc_at[n_docs] = fs[t->doc_column];
        t->doc_len[n_docs++] = fe[t->doc_column] - fs[t->doc_column];
        union {
            int64_t grade;
            double score;
        } v;
        const char *vs = fs[t->value_column];
        Py_ssize_t vl = fe[t->value_column] - vs;
        if (!(t->integral ? read_grade(vs, vl, &v.grade) : read_score(vs, vl, &v.score))) {
            ok = 0;
            break;
        }
        if (column_push(&t->qcodes, &q) < 0 || column_push(&t->values, &v) < 0) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
    }
    if (ok && lookup_docs(t, n_docs) < 0) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

/* ------------------------------------------------------------------ run.jsonl query lines */

/* p[0:n] is the literal s (n = strlen(s)), within end. */
static int literal(const char *p, const char *end, const char *s, size_t n) {
    return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

/* The end of a JSON string's text starting at p (the closing quote), or NULL when the text holds an escape
 * or a control character (json's, not this reader's) or the line ends first. */
static const char *string_end(const char *p, const char *end) {
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            return p;
        }
        if (c == '\\' || c < 0x20) {
            return NULL;
        }
    }
    return NULL;
}

/* A JSON number -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at p, read as json reads it (an integer literal
 * through int: -0 is 0.0); the byte after it, or NULL when it is not one or not finite. */
static const char *json_number(const char *p, const char *end, double *out) {
    const char *s = p;
    int integer = 1;
    if (p < end && *p == '-') {
        p++;
    }
    if (p >= end || *p < '0' || *p > '9') {
        return NULL;
    }
    if (*p == '0') {
        p++;
    } else {
        while (p < end && *p >= '0' && *p <= '9') {
            p++;
        }
    }
    if (p < end && *p == '.') {
        integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9') {
            return NULL;
        }
        while (p < end && *p >= '0' && *p <= '9') {
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) {
            p++;
        }
        if (p >= end || *p < '0' || *p > '9') {
            return NULL;
        }
        while (p < end && *p >= '0' && *p <= '9') {
            p++;
        }
    }
    if (!read_score(s, p - s, out)) {
        return NULL;
    }
    if (integer) {
        *out += 0.0;
    }
    return p;
}

static PyObject *jsonl_add(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_buffer view;
    (void)self;
    if (!PyArg_ParseTuple(args, "Oy*", &capsule, &view)) {
        return NULL;
    }
    Lines *t = PyCapsule_GetPointer(capsule, CAPSULE);
    if (!t) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const char *p = view.buf, *end = p + view.len;
    int ok = 1;
    size_t n_docs = 0;
    while (p < end && ok) {
        const char *line_end = memchr(p, '\n', (size_t)(end - p));
        line_end = line_end ? line_end : end;
        ok = 0;
        if (!literal(p, line_end, "{\"qid\": \"", 9)) {
            break;
        }
        const char *q0 = p + 9, *q1 = string_end(q0, line_end);
        if (!q1 || !literal(q1, line_end, "\", \"results\": [", 15)) {
            break;
        }
        p = q1 + 15;
        int64_t count = 0;
        if (literal(p, line_end, "]}", 2)) {
            p += 2;
        } else {
            for (;;) {
                if (!literal(p, line_end, "[\"", 2)) {
                    goto stop;
                }
                const char *d0 = p + 2, *d1 = string_end(d0, line_end);
                if (!d1 || !literal(d1, line_end, "\", ", 3)) {
                    goto stop;
                }
                double score;
                p = json_number(d1 + 3, line_end, &score);
                if (!p) {
                    goto stop;
                }
                if (doc_room(t, n_docs + 1) < 0) {
                    PyBuffer_Release(&view);
                    return PyErr_NoMemory();
                }
                t->doc_at[n_docs] = d0;
                t->doc_len[n_docs++] = d1 - d0;
                if (column_push(&t->values, &score) < 0) {
                    PyBuffer_Release(&view);
                    return PyErr_NoMemory();
                }
                count++;
                if (literal(p, line_end, "], ", 3)) {
                    p += 3;
                } else if (literal(p, line_end, "]]}", 3)) {
                    p += 3;
                    break;
                } else {
                    goto stop;
                }
            }
        }
        if (p != line_end) {
            break;
        }
        int64_t q = bytes_code(&t->queries, q0, q1 - q0);
        if (q < 0 || column_push(&t->qcodes, &q) < 0 || column_push(&t->counts, &count) < 0) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
        ok = 1;
        p = line_end < end ? line_end + 1 : end;
    }
stop:
    if (ok && lookup_docs(t, n_docs) < 0) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(ok);
}

static PyObject *decoded(const Bytes *b) {
    PyObject *list = PyList_New((Py_ssize_t)b->n);
    if (!list) {
        return NULL;
    }
    for (size_t c = 0; c < b->n; c++) {
        PyObject *s = PyUnicode_DecodeUTF8(b->arena + b->starts[c], b->starts[c + 1] - b->starts[c], "strict");
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)c, s);
    }
    return list;
}

static PyObject *as_bytes(const Column *c) {
    return PyByteArray_FromStringAndSize(c->data ? c->data : "", (Py_ssize_t)(8 * c->n));
}

static PyObject *columns_finish(PyObject *self, PyObject *capsule) {
    (void)self;
    Lines *t = PyCapsule_GetPointer(capsule, CAPSULE);
    if (!t) {
        return NULL;
    }
    return Py_BuildValue("(NNNNNN)", decoded(&t->queries), as_bytes(&t->qcodes), decoded(&t->docs),
                         as_bytes(&t->dcodes), as_bytes(&t->values), as_bytes(&t->counts));
}

/* ------------------------------------------------------------------ the qrels lookup of a run */

static PyObject *judged_grades(PyObject *self, PyObject *args) {
    Py_buffer jseg, jdocs, jgrades, bseg, bstart, entries, docs;
    long long n_codes, n_queries;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*LL", &jseg, &jdocs, &jgrades, &bseg, &bstart, &entries, &docs,
                          &n_codes, &n_queries)) {
        return NULL;
    }
    PyObject *grade_out = NULL, *judged_out = NULL, *out = NULL;
    /* The marks: the query (plus one; 0: none yet) whose judgements last named each document, a 4-byte cell
     * each so the table stays in the CPU's cache, and the grade they gave it, read on a match only. */
    uint32_t *marked = NULL;
    int64_t *marked_grade = NULL;
    int64_t *lo = NULL, *hi = NULL;
    Py_ssize_t m = jseg.len / 8, n = entries.len / 8, nb = bseg.len / 8, nd = docs.len / 8;
    const int64_t *js = jseg.buf, *jd = jdocs.buf, *jg = jgrades.buf, *bs = bseg.buf, *start = bstart.buf;
    const int64_t *e = entries.buf, *d = docs.buf;
    if (jdocs.len != jseg.len || jgrades.len != jseg.len || bstart.len != bseg.len + 8 || n_codes < 0 ||
        n_queries < 0) {
        PyErr_SetString(PyExc_ValueError, "judged_grades: the judgement columns must have one length, and "
                                          "block_start one more than block_seg");
        goto done;
    }
    if (n_queries >= (long long)UINT32_MAX) { /* a query's mark is 4 bytes: the caller's Python path */
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    if (start[0] != 0 || start[nb] != n) {
        PyErr_SetString(PyExc_ValueError, "judged_grades: the blocks must cover the entries from 0");
        goto done;
    }
    for (Py_ssize_t b = 0; b < nb; b++) {
        if (start[b + 1] < start[b] || bs[b] < 0 || bs[b] >= n_queries) {
            PyErr_SetString(PyExc_ValueError, "judged_grades: a block's start decreases, or its query is outside "
                                              "the queries");
            goto done;
        }
    }
    grade_out = column(n);
    judged_out = PyByteArray_FromStringAndSize(NULL, n);
    marked = table_alloc(((size_t)n_codes + 1) * sizeof(uint32_t));
    marked_grade = table_alloc(((size_t)n_codes + 1) * sizeof(int64_t));
    lo = PyMem_Malloc(((size_t)n_queries + 1) * sizeof(int64_t));
    hi = PyMem_Calloc((size_t)n_queries + 1, sizeof(int64_t));
    if (!grade_out || !judged_out) {
        goto done;
    }
    if (!marked || !marked_grade || !lo || !hi) {
        PyErr_NoMemory();
        goto done;
    }
    /* Each query's judgements are contiguous (a table's segment): its range. */
    for (int64_t q = 0; q < n_queries; q++) {
        lo[q] = -1;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        if (js[i] < 0 || js[i] >= n_queries || jd[i] < -1 || jd[i] >= n_codes ||
            (lo[js[i]] >= 0 && hi[js[i]] != i)) {
            PyErr_SetString(PyExc_ValueError, "judged_grades: a judgement outside the queries or the codes, or a "
                                              "query's judgements apart");
            goto done;
        }
        if (lo[js[i]] < 0) {
            lo[js[i]] = i;
        }
        hi[js[i]] = i + 1;
    }
    int64_t *grade = (int64_t *)PyByteArray_AS_STRING(grade_out);
    char *judged = PyByteArray_AS_STRING(judged_out);
    for (Py_ssize_t b = 0; b < nb; b++) {
        int64_t q = bs[b];
        for (int64_t j = lo[q]; j >= 0 && j < hi[q]; j++) { /* the block's query's judgements mark their documents */
            if (jd[j] >= 0) { /* -1: the run never names the document */
                marked[jd[j]] = (uint32_t)(q + 1);
                marked_grade[jd[j]] = jg[j];
            }
        }
        for (int64_t i = start[b]; i < start[b + 1]; i++) {
            int64_t doc = e[i] >= 0 && e[i] < nd ? d[e[i]] : -1;
            if (doc < 0 || doc >= n_codes) {
                PyErr_SetString(PyExc_ValueError, "judged_grades: an entry outside the documents or the codes");
                goto done;
            }
            /* Documents come in no order, so most reads miss the CPU's caches: each mark is fetched AHEAD
             * entries before it is read (its entry's document is near: the same query's). */
            if (i + AHEAD < n && e[i + AHEAD] >= 0 && e[i + AHEAD] < nd && d[e[i + AHEAD]] >= 0 &&
                d[e[i + AHEAD]] < n_codes) {
                __builtin_prefetch(&marked[d[e[i + AHEAD]]]);
            }
            int hit = marked[doc] == (uint32_t)(q + 1);
            grade[i] = hit ? marked_grade[doc] : 0;
            judged[i] = (char)hit;
        }
    }
    out = PyTuple_Pack(2, grade_out, judged_out);
done:
    Py_XDECREF(grade_out);
    Py_XDECREF(judged_out);
    table_free(marked);
    table_free(marked_grade);
    PyMem_Free(lo);
    PyMem_Free(hi);
    PyBuffer_Release(&jseg);
    PyBuffer_Release(&jdocs);
    PyBuffer_Release(&jgrades);
    PyBuffer_Release(&bseg);
    PyBuffer_Release(&bstart);
    PyBuffer_Release(&entries);
    PyBuffer_Release(&docs);
    return out;
}

/* ------------------------------------------------------------------ segments of a table */

/* Each entry's segment (within = 0) or its position within its segment (within = 1), from int64 offsets
 * (non-decreasing, from 0): one pass writing one column, where numpy makes several of that size. */
static PyObject *spread(PyObject *args, int within) {
    Py_buffer offsets;
    if (!PyArg_ParseTuple(args, "y*", &offsets)) {
        return NULL;
    }
    PyObject *out = NULL;
    const int64_t *o = offsets.buf;
    Py_ssize_t m = offsets.len / 8;
    if (m < 1 || o[0] != 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must start at 0");
        goto done;
    }
    for (Py_ssize_t q = 1; q < m; q++) {
        if (o[q] < o[q - 1]) {
            PyErr_SetString(PyExc_ValueError, "offsets must not decrease");
            goto done;
        }
    }
    out = column((Py_ssize_t)o[m - 1]);
    if (!out) {
        goto done;
    }
    int64_t *v = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t q = 0; q + 1 < m; q++) {
        for (int64_t j = o[q]; j < o[q + 1]; j++) {
            v[j] = within ? j - o[q] : (int64_t)q;
        }
    }
done:
    PyBuffer_Release(&offsets);
    return out;
}

static PyObject *segments_of(PyObject *self, PyObject *args) {
    (void)self;
    return spread(args, 0);
}

static PyObject *positions_of(PyObject *self, PyObject *args) {
    (void)self;
    return spread(args, 1);
}

/* ------------------------------------------------------------------ repeated pairs */

static PyObject *has_repeats(PyObject *self, PyObject *args) {
    Py_buffer seg, codes;
    Py_ssize_t n_codes;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*n", &seg, &codes, &n_codes)) {
        return NULL;
    }
    PyObject *out = NULL;
    Py_ssize_t n = seg.len / 8;
    int64_t *last = NULL;
    if (codes.len != seg.len || n_codes < 0) {
        PyErr_SetString(PyExc_ValueError, "has_repeats: seg and codes must have one length");
        goto done;
    }
    last = PyMem_Malloc((size_t)(n_codes ? n_codes : 1) * sizeof(int64_t));
    if (!last) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0; c < n_codes; c++) {
        last[c] = -1;
    }
    const int64_t *sg = seg.buf, *cd = codes.buf;
    int repeat = 0;
    for (Py_ssize_t i = 0; i < n && !repeat; i++) {
        int64_t q = sg[i], c = cd[i];
        if (c < 0 || c >= n_codes || q < 0 || (i && q < sg[i - 1])) { /* not grouped: the caller's numpy path */
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        repeat = last[c] == q;
        last[c] = q;
    }
    out = PyBool_FromLong(repeat);
done:
    PyMem_Free(last);
    PyBuffer_Release(&seg);
    PyBuffer_Release(&codes);
    return out;
}

/* ------------------------------------------------------------------ the order of strings */

typedef struct {
    uint64_t key; /* bytes [common, common + 8) big-endian, zero-padded */
    int64_t index;
} Keyed;

typedef struct {
    const unsigned char **bytes;
    const Py_ssize_t *len;
    Py_ssize_t from; /* compare from this byte on: the prefix every string shares and the key's bytes */
} Rest;

static Rest rest; /* for one qsort call (the GIL is held) */

static int compare_rest(const void *pa, const void *pb) {
    int64_t a = ((const Keyed *)pa)->index, b = ((const Keyed *)pb)->index;
    Py_ssize_t la = rest.len[a], lb = rest.len[b], n = la < lb ? la : lb;
    int c = n > rest.from ? memcmp(rest.bytes[a] + rest.from, rest.bytes[b] + rest.from, (size_t)(n - rest.from)) : 0;
    if (c) {
        return c;
    }
    if (la != lb) {
        return la < lb ? -1 : 1;
    }
    return a < b ? -1 : (a > b); /* equal strings: input order */
}

/* Stable LSD radix sort on the key, a byte at a time; the result in e. One pass counts every byte's
 * values; a byte all keys share is skipped. */
static int radix_sort(Keyed *e, Py_ssize_t n) {
    Keyed *tmp = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Keyed)), *src = e, *dst = tmp;
    Py_ssize_t(*count)[257] = PyMem_Calloc(8, sizeof(*count));
    if (!tmp || !count) {
        PyMem_Free(tmp);
        PyMem_Free(count);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = e[i].key;
        for (int d = 0; d < 8; d++) {
            count[d][((key >> (8 * d)) & 0xff) + 1]++;
        }
    }
    for (int d = 0; d < 8; d++) {
        Py_ssize_t *c = count[d];
        int shift = 8 * d;
        if (n == 0 || c[((src[0].key >> shift) & 0xff) + 1] == n) {
            continue;
        }
        for (int b = 0; b < 256; b++) {
            c[b + 1] += c[b];
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            dst[c[(src[i].key >> shift) & 0xff]++] = src[i];
        }
        Keyed *t = src;
        src = dst;
        dst = t;
    }
    if (src != e) {
        memcpy(e, src, (size_t)n * sizeof(Keyed));
    }
    PyMem_Free(tmp);
    PyMem_Free(count);
    return 0;
}

static PyObject *string_ranks(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *seq = PySequence_Fast(arg, "string_ranks: a sequence of str");
    if (!seq) {
        return NULL;
    }
    PyObject *out = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), common = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    size_t cells = (size_t)(n ? n : 1);
    Keyed *e = PyMem_Malloc(cells * sizeof(Keyed));
    const unsigned char **bytes = PyMem_Malloc(cells * sizeof(*bytes));
    Py_ssize_t *len = PyMem_Malloc(cells * sizeof(*len));
    if (!e || !bytes || !len) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) { /* the strings lie anywhere in memory: each fetched AHEAD of its turn */
        if (i + AHEAD < n) {
            __builtin_prefetch(items[i + AHEAD]);
        }
        const char *b = PyUnicode_CheckExact(items[i]) ? PyUnicode_AsUTF8AndSize(items[i], &len[i]) : NULL;
        if (!b) { /* not an exact str, or a lone surrogate (not UTF-8): the Python path */
            PyErr_Clear();
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        bytes[i] = (const unsigned char *)b;
        if (i == 0) {
            common = len[0];
        } else {
            Py_ssize_t j = 0, m = common < len[i] ? common : len[i];
            while (j < m && bytes[0][j] == bytes[i][j]) {
                j++;
            }
            common = j;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = 0;
        if (i + AHEAD < n) {
            __builtin_prefetch(bytes[i + AHEAD] + common);
        }
        for (Py_ssize_t j = common; j < common + 8; j++) {
            key = (key << 8) | (j < len[i] ? bytes[i][j] : 0);
        }
        e[i].key = key;
        e[i].index = i;
    }
    if (radix_sort(e, n) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    /* Equal keys: the strings may still differ past the key, or by trailing NUL bytes the padding hides. */
    rest.bytes = bytes;
    rest.len = len;
    rest.from = common;
    for (Py_ssize_t a = 0; a < n;) {
        Py_ssize_t b = a + 1;
        while (b < n && e[b].key == e[a].key) {
            b++;
        }
        if (b - a > 1) {
            qsort(e + a, (size_t)(b - a), sizeof(Keyed), compare_rest);
        }
        a = b;
    }
    out = column(n);
    if (!out) {
        goto done;
    }
    int64_t *ranks = (int64_t *)PyByteArray_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        ranks[e[i].index] = i;
    }
done:
    PyMem_Free(e);
    PyMem_Free(bytes);
    PyMem_Free(len);
    Py_DECREF(seq);
    return out;
}

/* ------------------------------------------------------------------ rows ranked by score */

typedef struct {
    int64_t tie;
    int64_t entry;
} Tied;

/* Runs of equal scores up to this long are ordered by counting, longer ones by qsort. */
#define SHORT_RUN 16

static int tied_before(const Tied *x, const Tied *y) {
    /* document id descending (its rank among the ids), then input order */
    return x->tie > y->tie || (x->tie == y->tie && x->entry < y->entry);
}

static int compare_tied(const void *a, const void *b) {
    const Tied *x = a, *y = b;
    return tied_before(x, y) ? -1 : tied_before(y, x) ? 1 : 0;
}

/* Orders at[0..m) (entries of one row with equal scores; the row's last entry is `end` - 1 and it holds
 * `count` entries) by tie[code[entry]] descending, then entry ascending. 0, or -1 with an exception.
 * rank_limit is INT64_MAX / (count + 1), computed once per row. */
static int order_tied(int64_t *at, int64_t m, Tied *run, const int64_t *code, const int64_t *rank, Py_ssize_t nt,
                      int64_t end, int64_t count, int64_t rank_limit) {
    int small = m <= SHORT_RUN; /* and every key below fits in int64: ranks below rank_limit */
    for (int64_t k = 0; k < m; k++) {
        int64_t c = code[at[k]];
        if (c < 0 || c >= nt) {
            PyErr_SetString(PyExc_ValueError, "rank_rows: a code outside tie");
            return -1;
        }
        run[k].tie = rank[c];
        run[k].entry = at[k];
        small &= rank[c] >= 0 && rank[c] < rank_limit;
    }
    if (small) {
        /* Each entry's place is the number of entries before it, from one key (the id's rank, then the
         * entry's position in the row, reversed): no branch to mispredict, where a comparison sort of a few
         * random keys mispredicts about every other comparison. */
        int64_t key[SHORT_RUN];
        for (int64_t k = 0; k < m; k++) {
            key[k] = run[k].tie * (count + 1) + (end - run[k].entry);
        }
        for (int64_t k = 0; k < m; k++) {
            int64_t place = 0;
            for (int64_t q = 0; q < m; q++) {
                place += key[q] > key[k];
            }
            at[place] = run[k].entry;
        }
    } else {
        qsort(run, (size_t)m, sizeof(Tied), compare_tied);
        for (int64_t k = 0; k < m; k++) {
            at[k] = run[k].entry;
        }
    }
    return 0;
}

/* rank_rows(out, asc, offsets, values, codes, tie): rows of entries (row r: entries offsets[r]..offsets[r+1]),
 * each laid out as a row of `width` columns (padding past the row's count) and argsorted ascending by score
 * (asc, int64 columns, a permutation of each row). Writes each row's entries into out in the ranking rule's
 * order: descending score (asc read backwards, padding skipped), each run of equal scores by
 * tie[codes[entry]] descending (the rank of the entry's document id), then entry ascending. Returns True; or
 * False, out unfinished, at the first run of equal scores when tie is empty (the caller computes the
 * ranks and calls again). One pass, each row's runs put in order while the row is in the CPU's cache. */
static PyObject *rank_rows(PyObject *self, PyObject *args) {
    Py_buffer out, asc, offsets, values, codes, tie;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*y*y*y*y*", &out, &asc, &offsets, &values, &codes, &tie)) {
        return NULL;
    }
    PyObject *result = NULL;
    Tied *run = NULL;
    int64_t *o = out.buf;
    const int64_t *a = asc.buf, *off = offsets.buf, *code = codes.buf, *rank = tie.buf;
    const double *v = values.buf;
    Py_ssize_t rows = offsets.len / 8 - 1, nv = values.len / 8, no = out.len / 8, nt = tie.len / 8;
    Py_ssize_t width = rows > 0 ? (asc.len / 8) / rows : 0;
    if (rows < 0 || (rows > 0 && width * rows * 8 != asc.len) || off[0] < 0 || off[rows] > nv ||
        off[rows] - off[0] != no || (nt > 0 && codes.len != values.len)) {
        PyErr_SetString(PyExc_ValueError, "rank_rows: asc must hold rows x width cells, offsets lie within values "
                                          "(and codes, of one length), and out hold their entries");
        goto done;
    }
    run = PyMem_Malloc((size_t)(width ? width : 1) * sizeof(Tied));
    if (!run) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *at = o; /* the row's entries in order */
    for (Py_ssize_t r = 0; r < rows; r++) {
        int64_t lo = off[r], count = off[r + 1] - off[r];
        if (count < 0 || count > width) {
            PyErr_SetString(PyExc_ValueError, "rank_rows: a row's count outside 0..width");
            goto done;
        }
        if (nt > 0 && r + 1 < rows) { /* document codes come in no order: the next row's ranks, a row ahead */
            for (int64_t e = off[r + 1]; e < off[r + 2]; e++) {
                if (code[e] >= 0 && code[e] < nt) {
                    __builtin_prefetch(&rank[code[e]]);
                }
            }
        }
        const int64_t *row = a + r * width;
        const int64_t rank_limit = INT64_MAX / (count + 1); /* a rank below it makes a key that fits */
        int64_t w = 0;
        for (Py_ssize_t c = width - 1; c >= 0; c--) {
            int64_t col = row[c];
            if (col < 0 || col >= width) {
                PyErr_SetString(PyExc_ValueError, "rank_rows: a column outside the row");
                goto done;
            }
            if (col >= count) {
                continue; /* padding */
            }
            if (w == count) {
                PyErr_SetString(PyExc_ValueError, "rank_rows: a row's columns repeat");
                goto done;
            }
            at[w++] = lo + col;
        }
        if (w != count) {
            PyErr_SetString(PyExc_ValueError, "rank_rows: a row's columns repeat");
            goto done;
        }
        for (int64_t i = 0; i < count;) {
            int64_t j = i + 1;
            double s = v[at[i]];
            while (j < count && v[at[j]] == s) {
                j++;
            }
            if (j - i > 1) {
                if (nt == 0) { /* the ranks are needed */
                    result = Py_False;
                    Py_INCREF(result);
                    goto done;
                }
                if (order_tied(at + i, j - i, run, code, rank, nt, lo + count, count, rank_limit) < 0) {
                    goto done;
                }
            }
            i = j;
        }
        at += count;
    }
    result = Py_True;
    Py_INCREF(result);
done:
    PyMem_Free(run);
    PyBuffer_Release(&out);
    PyBuffer_Release(&asc);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&values);
    PyBuffer_Release(&codes);
    PyBuffer_Release(&tie);
    return result;
}

static PyMethodDef methods[] = {
    {"flatten", flatten, METH_VARARGS,
     "flatten(data, integral) -> (offsets, codes, vocab, values) or None: {qid: {doc_id: value}} as "
     "int64 offsets and document codes (first appearance), the distinct ids (a tuple), and int64 or float64 "
     "values."},
    {"columns_new", columns_new, METH_VARARGS,
     "columns_new(width, more, value_column, integral, doc_column=2, tabs=False) -> state for columns_add / "
     "columns_finish."},
    {"columns_add", columns_add, METH_VARARGS,
     "columns_add(state, block) -> False on the first line not taken as it is (the caller's Python path reads the file)."},
    {"columns_finish", columns_finish, METH_O,
     "columns_finish(state) -> (qids, qcodes, docs, dcodes, values, counts): ids as str, the rest as 8-byte "
     "cells."},
    {"jsonl_add", jsonl_add, METH_VARARGS,
     "jsonl_add(state, block) -> False on the first run.jsonl query line not taken as it is."},
    {"index_in", index_in, METH_VARARGS,
     "index_in(vocab, ids, distinct=False) -> int64 positions in vocab (-1 where absent), or None unless both "
     "hold exact str (and, with distinct, no id repeats in vocab)."},
    {"judged_grades", judged_grades, METH_VARARGS,
     "judged_grades(jseg, jdocs, jgrades, block_seg, block_start, entries, docs, n_codes, n_queries) -> (int64 "
     "grades, bool judged): for each ranked entry i (block b: block_start[b] <= i < block_start[b + 1]), the "
     "grade that query block_seg[b]'s judgements give document docs[entries[i]], 0 where they do not name it "
     "(documents as codes below n_codes; a judgement's -1 names a document no entry has); None for 2^32 - 1 "
     "queries or more."},
    {"segments_of", segments_of, METH_VARARGS,
     "segments_of(offsets) -> int64 segment of every entry, from int64 offsets (non-decreasing, from 0)."},
    {"positions_of", positions_of, METH_VARARGS,
     "positions_of(offsets) -> int64 position of every entry within its segment."},
    {"has_repeats", has_repeats, METH_VARARGS,
     "has_repeats(seg, codes, n_codes) -> whether a code repeats within a segment, or None unless the int64 segments "
     "are non-negative and non-decreasing and the codes in [0, n_codes)."},
    {"rank_rows", rank_rows, METH_VARARGS,
     "rank_rows(out, asc, offsets, values, codes, tie) -> True: each row's entries (offsets) written to out by "
     "descending score, from its ascending argsort asc (rows x width int64 columns, padding past the row's count "
     "skipped), runs of equal scores by tie[codes[entry]] descending, then entry; False when a run needs the "
     "ranks and tie is empty."},
    {"string_ranks", string_ranks, METH_O,
     "string_ranks(strings) -> int64 position of each str in ascending code-point order, or None unless all are "
     "exact str that encode to UTF-8."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_native", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__native(void) {
    return PyModule_Create(&module);
}

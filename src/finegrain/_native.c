/* finegrain._native: nested Python mappings to flat columns in one C pass.
 *
 * flatten(data, integral) walks {qid: {doc_id: value}} (exact dicts, exact str document ids) once:
 * it interns every document id through an open-addressing table of (hash, id, code) slots (a str
 * caches its hash, so each lookup hashes nothing new; an id is the slot's when it is the same object
 * or an equal str), in order of first appearance, and copies every value into a column of int64 (integral:
 * exact ints in the int64 range) or float64 (floats, float subclasses such as numpy.float64, and
 * exact ints, converted as float() converts them). It returns
 * (offsets, codes, vocab, values): offsets and codes as int64 bytes, vocab as a list of the distinct
 * ids, values as int64 or float64 bytes; or None when the input is anything else (another mapping
 * type, a non-str id, a bool or other value type, an int out of range), and the caller takes its
 * Python path, which accepts or refuses those with its own rules. So this module never decides
 * what an input means: it is the same result, sooner, for the plain case.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The interning table: linear probing over a power-of-two array, at most half full. */
typedef struct {
    Py_hash_t hash;
    PyObject *key; /* borrowed: the vocab list holds a reference */
    int64_t code;
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
    t->slots = PyMem_Calloc(size, sizeof(Slot));
    t->mask = size - 1;
    t->used = 0;
    return t->slots ? 0 : -1;
}

static int table_grow(Table *t) {
    size_t size = 2 * (t->mask + 1);
    Slot *slots = PyMem_Calloc(size, sizeof(Slot));
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
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* The code of `key`, added as `next` when new (*added set to 1); -1 with an exception on failure. */
static int64_t table_code(Table *t, PyObject *key, int64_t next, int *added) {
    Py_hash_t h = PyObject_Hash(key);
    if (h == -1) {
        return -1;
    }
    size_t j = (size_t)h & t->mask;
    *added = 0;
    for (;;) {
        Slot *s = &t->slots[j];
        if (s->key == NULL) {
            break;
        }
        if (s->key == key) {
            return s->code;
        }
        if (s->hash == h) {
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
    if (2 * (t->used + 1) > t->mask + 1) {
        if (table_grow(t) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        j = (size_t)h & t->mask;
        while (t->slots[j].key != NULL) {
            j = (j + 1) & t->mask;
        }
    }
    t->slots[j].hash = h;
    t->slots[j].key = key;
    t->slots[j].code = next;
    t->used++;
    *added = 1;
    return next;
}

static PyObject *column(Py_ssize_t n) {
    return PyByteArray_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
}

static PyObject *flatten(PyObject *self, PyObject *args) {
    PyObject *outer, *key, *inner, *doc, *value;
    int integral;
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
    PyObject *offsets = column(PyDict_GET_SIZE(outer) + 1);
    PyObject *codes = column(total);
    PyObject *values = column(total);
    PyObject *vocab = PyList_New(0);
    Table table = {NULL, 0, 0};
    if (!offsets || !codes || !values || !vocab || table_init(&table, 1024) < 0) {
        if (table.slots == NULL && offsets && codes && values && vocab) {
            PyErr_NoMemory();
        }
        goto error;
    }
    int64_t *off = (int64_t *)PyByteArray_AS_STRING(offsets);
    int64_t *code = (int64_t *)PyByteArray_AS_STRING(codes);
    int64_t *grade = (int64_t *)PyByteArray_AS_STRING(values);
    double *score = (double *)PyByteArray_AS_STRING(values);
    Py_ssize_t i = 0, q = 0;
    off[0] = 0;
    pos = 0;
    while (PyDict_Next(outer, &pos, &key, &inner)) {
        Py_ssize_t at = 0;
        while (PyDict_Next(inner, &at, &doc, &value)) {
            if (i >= total || !PyUnicode_CheckExact(doc)) {
                goto decline;  /* a non-str id, or a mapping that grew under us */
            }
            int added;
            int64_t c = table_code(&table, doc, PyList_GET_SIZE(vocab), &added);
            if (c < 0) {
                goto error;
            }
            if (added && PyList_Append(vocab, doc) < 0) {
                goto error;
            }
            code[i] = c;
            if (integral) {
                int overflow = 0;
                long long x;
                if (!PyLong_CheckExact(value)) {
                    goto decline;
                }
                x = PyLong_AsLongLongAndOverflow(value, &overflow);
                if (overflow) {
                    goto decline;
                }
                if (x == -1 && PyErr_Occurred()) {
                    goto error;
                }
                grade[i] = (int64_t)x;
            } else if (PyFloat_Check(value)) {
                score[i] = PyFloat_AS_DOUBLE(value);
            } else if (PyLong_CheckExact(value)) {
                double x = PyLong_AsDouble(value);
                if (x == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();  /* too large for a double: the Python path says so */
                    goto decline;
                }
                score[i] = x;
            } else {
                goto decline;
            }
            i++;
        }
        off[++q] = i;
    }
    if (i != total) {
        goto decline;  /* a mapping shrank under us */
    }
    PyMem_Free(table.slots);
    return Py_BuildValue("(NNNN)", offsets, codes, vocab, values);

decline:
    PyMem_Free(table.slots);
    Py_XDECREF(offsets);
    Py_XDECREF(codes);
    Py_XDECREF(values);
    Py_XDECREF(vocab);
    Py_RETURN_NONE;

error:
    PyMem_Free(table.slots);
    Py_XDECREF(offsets);
    Py_XDECREF(codes);
    Py_XDECREF(values);
    Py_XDECREF(vocab);
    return NULL;
}

static PyMethodDef methods[] = {
    {"flatten", flatten, METH_VARARGS,
     "flatten(data, integral) -> (offsets, codes, vocab, values) or None: {qid: {doc_id: value}} as "
     "int64 offsets and document codes (first appearance), the distinct ids, and int64 or float64 values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_native", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__native(void) {
    return PyModule_Create(&module);
}

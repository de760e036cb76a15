/* The cached read's per-name work in C: a table's live partition frames by name, and the names of a
 * serialized request read in place.
 *
 * Why native code: a cached GetPartitionsByNames(100) in pure Python made 100 str objects from the
 * request, hashed each, looked each up in a dict and joined the frames found; that was most of the
 * distance between the gateway and the grpc.aio echo floor (docs/benchmarks.md, "Step by step").
 * Here a hit reads the names where they lie in the request's bytes, finds each in an open-addressing
 * table keyed by the name's UTF-8 bytes, and copies the frames into one bytes object.
 *
 * The rules are the Python path's (store/cache/sharded.py, `_from_live`): every name must be present
 * in its stored spelling, else the answer is None (the caller's general path decides); a name
 * repeated in the request answers once, where it first appears.
 *
 * Keys are hashed with CPython's keyed hash (SipHash-1-3 with the process's random key), so a
 * writer cannot choose partition names that collide.
 *
 * Everything here runs under the GIL and calls no Python code while it holds a slot pointer. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static inline Py_hash_t
hash_utf8(const char *s, Py_ssize_t n)
{
#if PY_VERSION_HEX >= 0x030E0000
    return Py_HashBuffer(s, n);
#else
    return _Py_HashBytes(s, n);
#endif
}

/* ---- EncodedNames: a repeated string field of a serialized protobuf message, read in place ---- */

typedef struct {
    PyObject_HEAD
    PyObject *message;   /* bytes, owned */
    Py_ssize_t count;
    Py_ssize_t *spans;   /* offset, length pairs into message */
} EncodedNames;

static int
read_varint(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, uint64_t *out)
{
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*pos >= end)
            return -1;
        unsigned char b = p[(*pos)++];
        value |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = value;
            return 0;
        }
    }
    return -1;
}

static void
EncodedNames_dealloc(EncodedNames *self)
{
    Py_XDECREF(self->message);
    PyMem_Free(self->spans);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
EncodedNames_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"message", "field", NULL};
    PyObject *message;
    int field;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Si", kwlist, &message, &field))
        return NULL;
    if (field < 1) {
        PyErr_SetString(PyExc_ValueError, "a protobuf field number is 1 or more");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(message);
    Py_ssize_t end = PyBytes_GET_SIZE(message), pos = 0, count = 0, capacity = 0;
    Py_ssize_t *spans = NULL;
    while (pos < end) {
        uint64_t tag, length;
        if (read_varint(p, end, &pos, &tag) < 0)
            goto malformed;
        switch (tag & 7) {
        case 0:
            if (read_varint(p, end, &pos, &length) < 0)
                goto malformed;
            break;
        case 1:
            pos += 8;
            break;
        case 5:
            pos += 4;
            break;
        case 2:
            if (read_varint(p, end, &pos, &length) < 0 || length > (uint64_t)(end - pos))
                goto malformed;
            if ((tag >> 3) == (uint64_t)field) {
                if (count == capacity) {
                    capacity = capacity ? capacity * 2 : 64;
                    Py_ssize_t *grown = PyMem_Realloc(spans, sizeof(Py_ssize_t) * 2 * capacity);
                    if (grown == NULL) {
                        PyMem_Free(spans);
                        return PyErr_NoMemory();
                    }
                    spans = grown;
                }
                spans[2 * count] = pos;
                spans[2 * count + 1] = (Py_ssize_t)length;
                count++;
            }
            pos += (Py_ssize_t)length;
            break;
        default: /* groups (3, 4) and unused wire types: not in a proto3 message */
            goto malformed;
        }
    }
    if (pos != end)
        goto malformed;
    EncodedNames *self = (EncodedNames *)type->tp_alloc(type, 0);
    if (self == NULL) {
        PyMem_Free(spans);
        return NULL;
    }
    Py_INCREF(message);
    self->message = message;
    self->count = count;
    self->spans = spans;
    return (PyObject *)self;
malformed:
    PyMem_Free(spans);
    PyErr_SetString(PyExc_ValueError, "not a serialized protobuf message (a field runs past its end, or a proto2 group)");
    return NULL;
}

static Py_ssize_t
EncodedNames_len(EncodedNames *self)
{
    return self->count;
}

static PyObject *
EncodedNames_item(EncodedNames *self, Py_ssize_t i)
{
    if (i < 0 || i >= self->count) {
        PyErr_SetString(PyExc_IndexError, "EncodedNames index out of range");
        return NULL;
    }
    return PyUnicode_DecodeUTF8(PyBytes_AS_STRING(self->message) + self->spans[2 * i], self->spans[2 * i + 1],
                                "strict");
}

/* names[i] and names[a:b:c] (a list), as a Sequence answers them. */
static PyObject *
EncodedNames_subscript(EncodedNames *self, PyObject *key)
{
    if (PyIndex_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        return EncodedNames_item(self, i < 0 ? i + self->count : i);
    }
    if (!PySlice_Check(key)) {
        PyErr_Format(PyExc_TypeError, "EncodedNames indices are integers or slices, not %.80s",
                     Py_TYPE(key)->tp_name);
        return NULL;
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0)
        return NULL;
    Py_ssize_t length = PySlice_AdjustIndices(self->count, &start, &stop, step);
    PyObject *items = PyList_New(length);
    if (items == NULL)
        return NULL;
    for (Py_ssize_t k = 0, i = start; k < length; k++, i += step) {
        PyObject *name = EncodedNames_item(self, i);
        if (name == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        PyList_SET_ITEM(items, k, name);
    }
    return items;
}

static PySequenceMethods EncodedNames_as_sequence = {
    .sq_length = (lenfunc)EncodedNames_len,
    .sq_item = (ssizeargfunc)EncodedNames_item,
};

static PyMappingMethods EncodedNames_as_mapping = {
    .mp_length = (lenfunc)EncodedNames_len,
    .mp_subscript = (binaryfunc)EncodedNames_subscript,
};

static PyTypeObject EncodedNamesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "store.cache._frames.EncodedNames",
    .tp_basicsize = sizeof(EncodedNames),
    .tp_dealloc = (destructor)EncodedNames_dealloc,
    .tp_as_sequence = &EncodedNames_as_sequence,
    .tp_as_mapping = &EncodedNames_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_SEQUENCE,
    .tp_doc = "EncodedNames(message, field): the strings of a repeated string field of a serialized "
              "protobuf message, as a sequence of str, read in place (FrameMap.join reads them without "
              "making a str of each).",
    .tp_new = EncodedNames_new,
};

/* ---- FrameMap: partition name -> frame, an open-addressing table (linear probing) ----
 *
 * A slot is one 64-byte cache line, aligned, holding the name's UTF-8 bytes inline when they fit (most
 * partition names do), so finding a name reads one line of the table and no other object: under load
 * the table does not stay in the CPU's caches, and each extra object read is a miss. A join looks its
 * names up in passes, prefetching the slots and then the frames, so that the misses overlap. */

#define INLINE_KEY 40

typedef struct {
    Py_hash_t hash;
    PyObject *frame;     /* bytes, owned; NULL marks an empty slot */
    union {
        char bytes[INLINE_KEY];   /* key_len <= INLINE_KEY */
        char *heap;               /* longer: PyMem_Malloc'd, owned */
    } key;
    uint32_t key_len;
    uint32_t stamp;      /* the join that last took this slot: a repeated name answers once */
} Slot;

_Static_assert(sizeof(Slot) == 64, "a slot is one cache line");

typedef struct {
    PyObject_HEAD
    Slot *slots;         /* 64-byte aligned */
    Py_ssize_t mask;     /* capacity - 1; capacity is a power of two */
    Py_ssize_t used;
    uint32_t stamp;
} FrameMap;

#define MIN_CAPACITY 8
#define STACK_NAMES 256
#define MAX_KEY UINT32_MAX

static inline const char *
slot_key(const Slot *s)
{
    return s->key_len <= INLINE_KEY ? s->key.bytes : s->key.heap;
}

static Slot *
new_slots(Py_ssize_t capacity)
{
    size_t size = sizeof(Slot) * (size_t)capacity;
    Slot *slots = aligned_alloc(64, size);
    if (slots == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memset(slots, 0, size);
    return slots;
}

static inline Slot *
probe(FrameMap *m, Py_hash_t hash, const char *key, Py_ssize_t len)
{
    Py_ssize_t i = (Py_ssize_t)((size_t)hash & (size_t)m->mask);
    for (;;) {
        Slot *s = &m->slots[i];
        if (s->frame == NULL)
            return s;
        if (s->hash == hash && s->key_len == (size_t)len && memcmp(slot_key(s), key, (size_t)len) == 0)
            return s;
        i = (i + 1) & m->mask;
    }
}

static int
utf8_of(PyObject *name, const char **key, Py_ssize_t *len)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "a partition name is a str, not %.80s", Py_TYPE(name)->tp_name);
        return -1;
    }
    *key = PyUnicode_AsUTF8AndSize(name, len);
    return *key == NULL ? -1 : 0;
}

static int
grow(FrameMap *m)
{
    Py_ssize_t old_capacity = m->mask + 1;
    Slot *old = m->slots, *slots = new_slots(old_capacity * 2);
    if (slots == NULL)
        return -1;
    m->slots = slots;
    m->mask = old_capacity * 2 - 1;
    for (Py_ssize_t i = 0; i < old_capacity; i++) {
        if (old[i].frame != NULL)
            *probe(m, old[i].hash, slot_key(&old[i]), old[i].key_len) = old[i];
    }
    free(old);
    return 0;
}

static int
framemap_set(FrameMap *m, PyObject *name, PyObject *frame)
{
    const char *key;
    Py_ssize_t len;
    if (utf8_of(name, &key, &len) < 0)
        return -1;
    if (!PyBytes_CheckExact(frame)) {
        PyErr_Format(PyExc_TypeError, "a frame is bytes, not %.80s", Py_TYPE(frame)->tp_name);
        return -1;
    }
    if ((size_t)len > MAX_KEY) {
        PyErr_SetString(PyExc_ValueError, "a partition name of 4 GiB or more");
        return -1;
    }
    Py_hash_t hash = hash_utf8(key, len);
    Slot *s = probe(m, hash, key, len);
    if (s->frame != NULL) {
        Py_INCREF(frame);
        Py_SETREF(s->frame, frame);
        return 0;
    }
    char *heap = NULL;
    if (len > INLINE_KEY) {
        heap = PyMem_Malloc((size_t)len);
        if (heap == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(heap, key, (size_t)len);
    }
    if ((m->used + 1) * 2 > m->mask + 1) {
        if (grow(m) < 0) {
            PyMem_Free(heap);
            return -1;
        }
        s = probe(m, hash, key, len);
    }
    s->hash = hash;
    s->frame = Py_NewRef(frame);
    s->key_len = (uint32_t)len;
    s->stamp = 0;
    if (heap != NULL)
        s->key.heap = heap;
    else
        memcpy(s->key.bytes, key, (size_t)len);
    m->used++;
    return 0;
}

static void
clear_slot(Slot *s)
{
    if (s->key_len > INLINE_KEY)
        PyMem_Free(s->key.heap);
    Py_CLEAR(s->frame);
}

/* Empties slot `s` and closes the gap (backward-shift deletion), so no tombstones accumulate. */
static void
framemap_remove(FrameMap *m, Slot *s)
{
    clear_slot(s);
    Py_ssize_t i = s - m->slots, j = i;
    for (;;) {
        m->slots[i].frame = NULL;
        for (;;) {
            j = (j + 1) & m->mask;
            if (m->slots[j].frame == NULL) {
                m->used--;
                return;
            }
            Py_ssize_t home = (Py_ssize_t)((size_t)m->slots[j].hash & (size_t)m->mask);
            /* Slot j may move to i when its home is not cyclically within (i, j]. */
            int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays)
                break;
        }
        m->slots[i] = m->slots[j];
        i = j;
    }
}

static Slot *
framemap_find(FrameMap *m, PyObject *name)
{
    const char *key;
    Py_ssize_t len;
    if (utf8_of(name, &key, &len) < 0)
        return NULL;
    Slot *s = probe(m, hash_utf8(key, len), key, len);
    return s->frame == NULL ? NULL : s;
}

static PyObject *
slot_name(const Slot *s)
{
    return PyUnicode_DecodeUTF8(slot_key(s), s->key_len, "strict");
}

static PyObject *
FrameMap_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_SetString(PyExc_TypeError, "FrameMap() takes no arguments");
        return NULL;
    }
    FrameMap *self = (FrameMap *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->slots = new_slots(MIN_CAPACITY);
    if (self->slots == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->mask = MIN_CAPACITY - 1;
    return (PyObject *)self;
}

static void
FrameMap_dealloc(FrameMap *self)
{
    if (self->slots != NULL) {
        for (Py_ssize_t i = 0; i <= self->mask; i++) {
            if (self->slots[i].frame != NULL)
                clear_slot(&self->slots[i]);
        }
        free(self->slots);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
FrameMap_len(FrameMap *self)
{
    return self->used;
}

static PyObject *
FrameMap_subscript(FrameMap *self, PyObject *name)
{
    Slot *s = framemap_find(self, name);
    if (s == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
    return Py_NewRef(s->frame);
}

static int
FrameMap_ass_subscript(FrameMap *self, PyObject *name, PyObject *frame)
{
    if (frame != NULL)
        return framemap_set(self, name, frame);
    Slot *s = framemap_find(self, name);
    if (s == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, name);
        return -1;
    }
    framemap_remove(self, s);
    return 0;
}

static int
FrameMap_contains(FrameMap *self, PyObject *name)
{
    Slot *s = framemap_find(self, name);
    return s != NULL ? 1 : (PyErr_Occurred() ? -1 : 0);
}

static PyObject *
FrameMap_get(FrameMap *self, PyObject *args)
{
    PyObject *name, *fallback = NULL;
    if (!PyArg_UnpackTuple(args, "get", 1, 2, &name, &fallback))
        return NULL;
    Slot *s = framemap_find(self, name);
    if (s != NULL)
        return Py_NewRef(s->frame);
    if (PyErr_Occurred())
        return NULL;
    return Py_NewRef(fallback != NULL ? fallback : Py_None);
}

static PyObject *
FrameMap_pop(FrameMap *self, PyObject *args)
{
    PyObject *name, *fallback = NULL;
    if (!PyArg_UnpackTuple(args, "pop", 1, 2, &name, &fallback))
        return NULL;
    Slot *s = framemap_find(self, name);
    if (s == NULL) {
        if (PyErr_Occurred())
            return NULL;
        if (fallback != NULL)
            return Py_NewRef(fallback);
        PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
    PyObject *frame = Py_NewRef(s->frame);
    framemap_remove(self, s);
    return frame;
}

static PyObject *
FrameMap_as_dict(FrameMap *self)
{
    PyObject *dict = PyDict_New();
    if (dict == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i <= self->mask; i++) {
        Slot *s = &self->slots[i];
        if (s->frame == NULL)
            continue;
        PyObject *name = slot_name(s);
        if (name == NULL || PyDict_SetItem(dict, name, s->frame) < 0) {
            Py_XDECREF(name);
            Py_DECREF(dict);
            return NULL;
        }
        Py_DECREF(name);
    }
    return dict;
}

static PyObject *
FrameMap_items(FrameMap *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *dict = FrameMap_as_dict(self);
    if (dict == NULL)
        return NULL;
    PyObject *items = PyDict_Items(dict);
    Py_DECREF(dict);
    return items;
}

static PyTypeObject FrameMapType;

/* Equal to another FrameMap or a dict of the same names and frames (tests compare a live view with one
 * built afresh). */
static PyObject *
FrameMap_richcompare(PyObject *self, PyObject *other, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !(PyDict_Check(other) || PyObject_TypeCheck(other, &FrameMapType)))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *mine = FrameMap_as_dict((FrameMap *)self);
    if (mine == NULL)
        return NULL;
    PyObject *theirs = PyDict_Check(other) ? Py_NewRef(other) : FrameMap_as_dict((FrameMap *)other);
    if (theirs == NULL) {
        Py_DECREF(mine);
        return NULL;
    }
    PyObject *result = PyObject_RichCompare(mine, theirs, op);
    Py_DECREF(mine);
    Py_DECREF(theirs);
    return result;
}

typedef struct {
    const char *key;
    Py_ssize_t len;
    Py_hash_t hash;
} Wanted;

/* Passes 2 and 3 of a join, over names already hashed: each found (its slot is in the cache by now), a
 * repeated name answered once, the frames fetched ahead, then copied into one bytes object. None when a
 * name is absent: the caller's general path answers. No Python code runs here, so the slots stay put. */
static PyObject *
join_wanted(FrameMap *self, const Wanted *wanted, Py_ssize_t count, Slot **found)
{
    if (++self->stamp == 0) { /* wrapped: forget every earlier join's marks */
        for (Py_ssize_t i = 0; i <= self->mask; i++)
            self->slots[i].stamp = 0;
        self->stamp = 1;
    }
    Py_ssize_t taken = 0, total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Slot *s = probe(self, wanted[i].hash, wanted[i].key, wanted[i].len);
        if (s->frame == NULL)
            Py_RETURN_NONE;
        if (s->stamp == self->stamp)
            continue;
        s->stamp = self->stamp;
        found[taken++] = s;
        __builtin_prefetch(s->frame);
    }
    for (Py_ssize_t i = 0; i < taken; i++)
        total += PyBytes_GET_SIZE(found[i]->frame);
    PyObject *result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL)
        return NULL;
    char *out = PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < taken; i++) {
        Py_ssize_t size = PyBytes_GET_SIZE(found[i]->frame);
        memcpy(out, PyBytes_AS_STRING(found[i]->frame), (size_t)size);
        out += size;
    }
    return result;
}

static PyObject *
FrameMap_join(FrameMap *self, PyObject *names)
{
    PyObject *sequence = NULL, *result = NULL;
    Py_ssize_t count;
    int encoded = PyObject_TypeCheck(names, &EncodedNamesType);
    if (encoded) {
        count = ((EncodedNames *)names)->count;
    }
    else {
        sequence = PySequence_Fast(names, "FrameMap.join takes a sequence of partition names");
        if (sequence == NULL)
            return NULL;
        count = PySequence_Fast_GET_SIZE(sequence);
    }
    Wanted wanted_stack[STACK_NAMES];
    Slot *found_stack[STACK_NAMES];
    Wanted *wanted = wanted_stack;
    Slot **found = found_stack;
    if (count > STACK_NAMES) {
        wanted = PyMem_Malloc(sizeof(Wanted) * (size_t)count);
        found = PyMem_Malloc(sizeof(Slot *) * (size_t)count);
        if (wanted == NULL || found == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    /* Pass 1: each name's hash, and its home slot fetched ahead. */
    for (Py_ssize_t i = 0; i < count; i++) {
        Wanted *w = &wanted[i];
        if (encoded) {
            EncodedNames *en = (EncodedNames *)names;
            w->key = PyBytes_AS_STRING(en->message) + en->spans[2 * i];
            w->len = en->spans[2 * i + 1];
        }
        else if (utf8_of(PySequence_Fast_GET_ITEM(sequence, i), &w->key, &w->len) < 0) {
            goto done;
        }
        w->hash = hash_utf8(w->key, w->len);
        __builtin_prefetch(&self->slots[(size_t)w->hash & (size_t)self->mask]);
    }
    result = join_wanted(self, wanted, count, found);
done:
    if (wanted != wanted_stack) {
        PyMem_Free(wanted);
        PyMem_Free(found);
    }
    Py_XDECREF(sequence);
    return result;
}

static PyMethodDef FrameMap_methods[] = {
    {"get", (PyCFunction)FrameMap_get, METH_VARARGS,
     "get(name, default=None): the frame of this name, or default."},
    {"pop", (PyCFunction)FrameMap_pop, METH_VARARGS,
     "pop(name[, default]): remove the name and answer its frame (default, or KeyError, when absent)."},
    {"items", (PyCFunction)FrameMap_items, METH_NOARGS, "items(): a list of (name, frame) pairs, in no order."},
    {"join", (PyCFunction)FrameMap_join, METH_O,
     "join(names): the frames of these names (a sequence of str, or EncodedNames) joined in the order first "
     "named, each once; None when a name is absent."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods FrameMap_as_mapping = {
    .mp_length = (lenfunc)FrameMap_len,
    .mp_subscript = (binaryfunc)FrameMap_subscript,
    .mp_ass_subscript = (objobjargproc)FrameMap_ass_subscript,
};

static PySequenceMethods FrameMap_as_sequence = {
    .sq_contains = (objobjproc)FrameMap_contains,
};

static PyTypeObject FrameMapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "store.cache._frames.FrameMap",
    .tp_basicsize = sizeof(FrameMap),
    .tp_dealloc = (destructor)FrameMap_dealloc,
    .tp_as_mapping = &FrameMap_as_mapping,
    .tp_as_sequence = &FrameMap_as_sequence,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_richcompare = FrameMap_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "FrameMap(): partition name (str) -> frame (bytes); join() answers a cached read's frames.",
    .tp_methods = FrameMap_methods,
    .tp_new = FrameMap_new,
};

static struct PyModuleDef frames_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "store.cache._frames",
    .m_doc = "The cached partition read's per-name work: FrameMap and EncodedNames (see _frames.c).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__frames(void)
{
    if (PyType_Ready(&EncodedNamesType) < 0 || PyType_Ready(&FrameMapType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&frames_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "EncodedNames", (PyObject *)&EncodedNamesType) < 0 ||
        PyModule_AddObjectRef(module, "FrameMap", (PyObject *)&FrameMapType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    /* isinstance(names, collections.abc.Sequence), as the stub declares. */
    PyObject *abc = PyImport_ImportModule("collections.abc");
    PyObject *sequence = abc == NULL ? NULL : PyObject_GetAttrString(abc, "Sequence");
    PyObject *registered = sequence == NULL ? NULL
        : PyObject_CallMethod(sequence, "register", "O", (PyObject *)&EncodedNamesType);
    Py_XDECREF(sequence);
    Py_XDECREF(abc);
    if (registered == NULL) {
        Py_DECREF(module);
        return NULL;
    }
    Py_DECREF(registered);
    return module;
}

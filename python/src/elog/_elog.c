/*
 * _elog.c: the C half of the Python package elog, over libelog.
 *
 * Three types (Writer, Reader, Record) and the functions that take a
 * directory (consumers, retention, compaction, verification, summary).
 * The package's __init__.py builds the Python API (Log) on them; the
 * exceptions live in elog/_errors.py, which make_error() calls so that the
 * mapping from the library's codes is written once, in Python.
 *
 * Built against the stable ABI (Py_LIMITED_API 3.9): one build serves
 * every Python 3 from 3.9 on.  Every call that may wait (fdatasync, a lock,
 * a follower's wait, a disk read) runs with the GIL released.
 */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elog.h"

/* ---- errors --------------------------------------------------------- */

static PyObject *make_error_fn; /* elog._errors.make_error */

/* Raise the exception elog._errors maps code to, with the library's
 * message; extra (may be NULL) becomes keyword arguments.  Returns NULL. */
static PyObject *raise_code(int code, const char *msg, const char *dir, PyObject *extra)
{
	if (msg == NULL || msg[0] == '\0')
		msg = elog_strerror(code);
	PyObject *args = Py_BuildValue("(iss)", code, msg, dir ? dir : "");
	if (args == NULL)
		return NULL;
	PyObject *exc = PyObject_Call(make_error_fn, args, extra);
	Py_DECREF(args);
	if (exc == NULL)
		return NULL;
	PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
	Py_DECREF(exc);
	return NULL;
}

/* ---- argument helpers ----------------------------------------------- */

/* bytes, or str as UTF-8, or any object bytes() accepts: a new bytes
 * object in *out.  None gives NULL when none_ok. */
static int to_bytes(PyObject *o, PyObject **out, int none_ok, const char *what)
{
	if (o == Py_None && none_ok) {
		*out = NULL;
		return 0;
	}
	if (Py_IS_TYPE(o, &PyBytes_Type) || PyBytes_Check(o)) {
		Py_INCREF(o);
		*out = o;
		return 0;
	}
	if (PyUnicode_Check(o)) {
		*out = PyUnicode_AsUTF8String(o);
		return *out ? 0 : -1;
	}
	if (PyLong_Check(o) || o == Py_None) {
		PyErr_Format(PyExc_TypeError, "%s must be bytes or str, not %s", what,
		             o == Py_None ? "None" : "int");
		return -1;
	}
	*out = PyBytes_FromObject(o);
	if (*out == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError, "%s must be bytes or str", what);
	}
	return *out ? 0 : -1;
}

/* An int in [lo, hi] (unsigned 64-bit range at most) into *v. */
static int to_u64(PyObject *o, uint64_t *v, const char *what)
{
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int", what);
		return -1;
	}
	*v = PyLong_AsUnsignedLongLong(o);
	if (*v == (uint64_t)-1 && PyErr_Occurred()) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "%s must be an int from 0 to 2**64-1", what);
		return -1;
	}
	return 0;
}

static int to_i64(PyObject *o, int64_t *v, const char *what)
{
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int", what);
		return -1;
	}
	*v = PyLong_AsLongLong(o);
	if (*v == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "%s is out of range", what);
		return -1;
	}
	return 0;
}

static PyObject *u64(uint64_t v)
{
	return PyLong_FromUnsignedLongLong(v);
}

/* Set key to value in dict d, stealing value.  -1 on failure. */
static int dset(PyObject *d, const char *key, PyObject *value)
{
	if (value == NULL)
		return -1;
	int rc = PyDict_SetItemString(d, key, value);
	Py_DECREF(value);
	return rc;
}

/* A time in ms, or None for INT64_MIN ("never", "unknown"). */
static PyObject *ms_or_none(int64_t ms)
{
	if (ms == INT64_MIN)
		Py_RETURN_NONE;
	return PyLong_FromLongLong(ms);
}

/* ---- Record --------------------------------------------------------- */

typedef struct {
	PyObject ob_base; /* PyObject_HEAD */
	unsigned long long offset;
	long long ts_ms;
	unsigned short schema;
	PyObject *key;   /* bytes or None */
	PyObject *value; /* bytes */
} RecordObject;

static PyTypeObject *Record_Type;
static allocfunc record_alloc;
static freefunc record_free;
static PyObject *json_loads; /* json.loads, imported on first use */

static PyObject *record_new_from(const struct elog_record *rec)
{
	RecordObject *r = (RecordObject *)record_alloc(Record_Type, 0);
	if (r == NULL)
		return NULL;
	r->offset = rec->offset;
	r->ts_ms = rec->ts_ms;
	r->schema = rec->schema;
	r->value = PyBytes_FromStringAndSize(rec->value_len ? rec->value : "",
	                                     (Py_ssize_t)rec->value_len);
	if (rec->key_len) {
		r->key = PyBytes_FromStringAndSize(rec->key, (Py_ssize_t)rec->key_len);
	} else {
		Py_INCREF(Py_None);
		r->key = Py_None;
	}
	if (r->value == NULL || r->key == NULL) {
		Py_DECREF(r);
		return NULL;
	}
	return (PyObject *)r;
}

static PyObject *Record_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "offset", "ts_ms", "schema", "key", "value", NULL };
	unsigned long long offset;
	long long ts;
	int schema;
	PyObject *key, *value, *kb, *vb;
	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "KLiOO:Record", kwlist, &offset, &ts, &schema,
	                                 &key, &value))
		return NULL;
	if (schema < 0 || schema > 65535) {
		PyErr_SetString(PyExc_ValueError, "schema must be from 0 to 65535");
		return NULL;
	}
	if (to_bytes(key, &kb, 1, "key") < 0)
		return NULL;
	if (to_bytes(value, &vb, 0, "value") < 0) {
		Py_XDECREF(kb);
		return NULL;
	}
	char *k = NULL, *v = NULL;
	Py_ssize_t kl = 0, vl = 0;
	if (kb)
		PyBytes_AsStringAndSize(kb, &k, &kl);
	PyBytes_AsStringAndSize(vb, &v, &vl);
	struct elog_record rec = { .offset = offset,
		                   .ts_ms = ts,
		                   .schema = (uint16_t)schema,
		                   .key = k,
		                   .key_len = (size_t)kl,
		                   .value = v,
		                   .value_len = (size_t)vl };
	PyObject *r = record_new_from(&rec);
	Py_XDECREF(kb);
	Py_DECREF(vb);
	return r;
}

static void Record_dealloc(PyObject *self)
{
	RecordObject *r = (RecordObject *)self;
	PyTypeObject *tp = Py_TYPE(self);
	Py_XDECREF(r->key);
	Py_XDECREF(r->value);
	record_free(self);
	Py_DECREF(tp);
}

static PyObject *Record_json(PyObject *self, PyObject *noargs)
{
	(void)noargs;
	if (json_loads == NULL) {
		PyObject *m = PyImport_ImportModule("json");
		if (m == NULL)
			return NULL;
		json_loads = PyObject_GetAttrString(m, "loads");
		Py_DECREF(m);
		if (json_loads == NULL)
			return NULL;
	}
	return PyObject_CallFunctionObjArgs(json_loads, ((RecordObject *)self)->value, NULL);
}

static PyObject *Record_repr(PyObject *self)
{
	RecordObject *r = (RecordObject *)self;
	return PyUnicode_FromFormat("Record(offset=%llu, ts_ms=%lld, schema=%u, key=%R, value=%R)",
	                            r->offset, r->ts_ms, (unsigned)r->schema, r->key, r->value);
}

static PyObject *Record_richcompare(PyObject *a, PyObject *b, int op)
{
	if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, Record_Type))
		Py_RETURN_NOTIMPLEMENTED;
	RecordObject *x = (RecordObject *)a, *y = (RecordObject *)b;
	int eq = x->offset == y->offset && x->ts_ms == y->ts_ms && x->schema == y->schema;
	if (eq) {
		int k = PyObject_RichCompareBool(x->key, y->key, Py_EQ);
		int v = k > 0 ? PyObject_RichCompareBool(x->value, y->value, Py_EQ) : k;
		if (k < 0 || v < 0)
			return NULL;
		eq = k && v;
	}
	return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t Record_hash(PyObject *self)
{
	RecordObject *r = (RecordObject *)self;
	PyObject *t = Py_BuildValue("(KLIOO)", r->offset, r->ts_ms, (unsigned)r->schema, r->key,
	                            r->value);
	if (t == NULL)
		return -1;
	Py_hash_t h = PyObject_Hash(t);
	Py_DECREF(t);
	return h;
}

/* Pickling (multiprocessing): Record(offset, ts_ms, schema, key, value). */
static PyObject *Record_reduce(PyObject *self, PyObject *noargs)
{
	RecordObject *r = (RecordObject *)self;
	(void)noargs;
	return Py_BuildValue("(O(KLIOO))", (PyObject *)Record_Type, r->offset, r->ts_ms,
	                     (unsigned)r->schema, r->key, r->value);
}

static PyMemberDef Record_members[] = {
	{ "offset", T_ULONGLONG, offsetof(RecordObject, offset), READONLY,
	  "The record's offset: its place in the log, given by the writer." },
	{ "ts_ms", T_LONGLONG, offsetof(RecordObject, ts_ms), READONLY,
	  "Its timestamp, milliseconds since the epoch (the time of append unless the "
	  "writer gave one)." },
	{ "schema", T_USHORT, offsetof(RecordObject, schema), READONLY,
	  "The application's payload format id, 0 to 65535; 0 means none." },
	{ "key", T_OBJECT, offsetof(RecordObject, key), READONLY,
	  "The key as bytes, or None for an unkeyed record." },
	{ "value", T_OBJECT, offsetof(RecordObject, value), READONLY,
	  "The value as bytes (empty with a key: a tombstone)." },
	{ NULL, 0, 0, 0, NULL },
};

static PyMethodDef Record_methods[] = {
	{ "__reduce__", Record_reduce, METH_NOARGS, NULL },
	{ "json", Record_json, METH_NOARGS,
	  "json() -> object\n\nThe value parsed as JSON (json.loads(record.value)); raises "
	  "json.JSONDecodeError when it is not JSON." },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot Record_slots[] = {
	{ Py_tp_doc, "Record(offset, ts_ms, schema, key, value)\n--\n\n"
	             "One record of a log, as Log.read() yields it.  Immutable.\n\n"
	             "offset, ts_ms and schema are ints, key is bytes or None, value is "
	             "bytes; json() parses the value." },
	{ Py_tp_new, Record_new },
	{ Py_tp_dealloc, Record_dealloc },
	{ Py_tp_members, Record_members },
	{ Py_tp_methods, Record_methods },
	{ Py_tp_repr, Record_repr },
	{ Py_tp_richcompare, Record_richcompare },
	{ Py_tp_hash, Record_hash },
	{ 0, NULL },
};

static PyType_Spec Record_spec = {
	.name = "elog.Record",
	.basicsize = sizeof(RecordObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = Record_slots,
};

/* ---- Writer --------------------------------------------------------- */

/* Offsets a shared writer's failed sync may still write later (a batch the
 * library keeps): they stay allocated until the handle is closed. */
struct slot {
	struct slot *next;
	uint64_t off;
};

typedef struct {
	PyObject ob_base; /* PyObject_HEAD */
	elog *w;
	char *dir;
	int exclusive;
	int busy;                /* calls running with the GIL released */
	int closing;             /* close() started: no new calls */
	PyThread_type_lock lock; /* an exclusive writer's offsets: append order */
	struct slot *orphans;
} WriterObject;

static PyTypeObject *Writer_Type;

static int writer_enter(WriterObject *self)
{
	if (self->w == NULL || self->closing) {
		PyErr_SetString(PyExc_ValueError, "I/O operation on a closed log");
		return -1;
	}
	self->busy++;
	return 0;
}

static void writer_leave(WriterObject *self)
{
	self->busy--;
}

/* Take the append-order lock; the GIL is released only while waiting. */
static void order_lock(WriterObject *self)
{
	if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS;
		PyThread_acquire_lock(self->lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS;
	}
}

static PyObject *writer_error(WriterObject *self, int rc)
{
	return raise_code(rc, elog_errmsg(self->w), self->dir, NULL);
}

static PyObject *Writer_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path",          "create",           "exclusive",
		                  "segment_bytes", "index_interval",   "retain_ms",
		                  "retain_bytes",  "compression",      "compression_level",
		                  "no_dictionary", "retain_consumers", "cleanup",
		                  "batch_bytes",   "wait_ms",          NULL };
	PyObject *pathb = NULL;
	int create = 1, exclusive = 1, compression = 0, level = 0, no_dict = 0, retain_cons = 0,
	    cleanup = 0;
	unsigned long long seg = 0, retain_ms = 0, retain_bytes = 0, batch = 0;
	unsigned int interval = 0;
	long long wait_ms = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|$ppKIKKiipiiKL:Writer", kwlist,
	                                 PyUnicode_FSConverter, &pathb, &create, &exclusive, &seg,
	                                 &interval, &retain_ms, &retain_bytes, &compression, &level,
	                                 &no_dict, &retain_cons, &cleanup, &batch, &wait_ms))
		return NULL;
	WriterObject *self = (WriterObject *)PyType_GenericAlloc(type, 0);
	if (self == NULL) {
		Py_DECREF(pathb);
		return NULL;
	}
	self->dir = strdup(PyBytes_AsString(pathb));
	Py_DECREF(pathb);
	self->lock = PyThread_allocate_lock();
	if (self->dir == NULL || self->lock == NULL) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	self->exclusive = exclusive;
	struct elog_options o = { .create = create,
		                  .segment_bytes = seg,
		                  .index_interval = interval,
		                  .retain_ms = retain_ms,
		                  .retain_bytes = retain_bytes,
		                  .compression = compression,
		                  .compression_level = level,
		                  .no_dictionary = no_dict,
		                  .retain_consumers = retain_cons,
		                  .cleanup = cleanup,
		                  .batch_bytes = (size_t)batch,
		                  .wait_ms = wait_ms,
		                  .exclusive = exclusive };
	elog *w = NULL;
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_open(&w, self->dir, &o);
	Py_END_ALLOW_THREADS;
	if (rc != 0) {
		char msg[ELOG_MSG_MAX];
		snprintf(msg, sizeof msg, "%s", w ? elog_errmsg(w) : elog_strerror(rc));
		Py_BEGIN_ALLOW_THREADS;
		elog_close(w);
		Py_END_ALLOW_THREADS;
		raise_code(rc, msg, self->dir, NULL);
		Py_DECREF(self);
		return NULL;
	}
	self->w = w;
	return (PyObject *)self;
}

static int writer_close(WriterObject *self)
{
	if (self->w == NULL)
		return 0;
	self->closing = 1;
	/* Calls of other threads finish first: the handle outlives them. */
	while (self->busy > 0) {
		Py_BEGIN_ALLOW_THREADS;
		usleep(1000);
		Py_END_ALLOW_THREADS;
	}
	elog *w = self->w;
	int rc;
	char msg[ELOG_MSG_MAX] = "";
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_close(w);
	Py_END_ALLOW_THREADS;
	/* elog_close() frees w whatever it returns: its message is gone. */
	if (rc)
		snprintf(msg, sizeof msg, "closing the log: %s", elog_strerror(rc));
	self->w = NULL;
	while (self->orphans) {
		struct slot *s = self->orphans;
		self->orphans = s->next;
		free(s);
	}
	if (rc) {
		raise_code(rc, msg, self->dir, NULL);
		return -1;
	}
	return 0;
}

static void Writer_dealloc(PyObject *obj)
{
	WriterObject *self = (WriterObject *)obj;
	PyTypeObject *tp = Py_TYPE(obj);
	if (self->w) {
		PyObject *et, *ev, *tb;
		PyErr_Fetch(&et, &ev, &tb);
		if (writer_close(self) < 0)
			PyErr_WriteUnraisable(obj);
		PyErr_Restore(et, ev, tb);
	}
	if (self->lock)
		PyThread_free_lock(self->lock);
	free(self->dir);
	freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
	f(obj);
	Py_DECREF(tp);
}

/* Fill rec from Python objects; kb and vb receive new references that the
 * caller releases after the append. */
static int record_from(PyObject *value, PyObject *key, int schema, PyObject *ts,
                       struct elog_record *rec, PyObject **kb, PyObject **vb)
{
	*kb = *vb = NULL;
	if (schema < 0 || schema > 65535) {
		PyErr_SetString(PyExc_ValueError, "schema must be from 0 to 65535");
		return -1;
	}
	memset(rec, 0, sizeof *rec);
	rec->schema = (uint16_t)schema;
	rec->ts_ms = ELOG_TS_NOW;
	if (ts && ts != Py_None) {
		if (to_i64(ts, &rec->ts_ms, "ts_ms") < 0)
			return -1;
		if (rec->ts_ms == ELOG_TS_NOW) {
			PyErr_SetString(PyExc_ValueError, "ts_ms is out of range");
			return -1;
		}
	}
	if (to_bytes(value, vb, 0, "value") < 0)
		return -1;
	if (key && to_bytes(key, kb, 1, "key") < 0) {
		Py_CLEAR(*vb);
		return -1;
	}
	char *p;
	Py_ssize_t n;
	PyBytes_AsStringAndSize(*vb, &p, &n);
	rec->value = p;
	rec->value_len = (size_t)n;
	if (*kb) {
		PyBytes_AsStringAndSize(*kb, &p, &n);
		if (n == 0) {
			Py_CLEAR(*kb);
			Py_CLEAR(*vb);
			PyErr_SetString(PyExc_ValueError,
			                "key must not be empty: give None for an unkeyed record");
			return -1;
		}
		rec->key = p;
		rec->key_len = (size_t)n;
	}
	return 0;
}

/* elog_sync() with the GIL released; 0 or the code. */
static int writer_sync(WriterObject *self)
{
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_sync(self->w);
	Py_END_ALLOW_THREADS;
	return rc;
}

static PyObject *Writer_append(PyObject *obj, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "value", "key", "schema", "ts_ms", "sync", NULL };
	WriterObject *self = (WriterObject *)obj;
	PyObject *value, *key = Py_None, *ts = Py_None, *kb, *vb;
	int schema = 0, sync = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$iOp:append", kwlist, &value, &key, &schema,
	                                 &ts, &sync))
		return NULL;
	struct elog_record rec;
	if (record_from(value, key, schema, ts, &rec, &kb, &vb) < 0)
		return NULL;
	if (writer_enter(self) < 0) {
		Py_XDECREF(kb);
		Py_DECREF(vb);
		return NULL;
	}
	int rc = 0;
	uint64_t off = 0;
	struct slot *slot = NULL;
	if (self->exclusive) {
		/* The only writer: a record's offset is the next one when it
		 * is buffered, in the order of the lock. */
		order_lock(self);
		off = elog_next_offset(self->w);
	} else if (sync && (slot = calloc(1, sizeof *slot)) == NULL) {
		rc = ENOMEM;
	}
	if (rc == 0) {
		/* The append and its sync in one release of the GIL: a
		 * durable append takes it back once. */
		Py_BEGIN_ALLOW_THREADS;
		rc = elog_append(self->w, &rec, slot ? &slot->off : NULL);
		if (self->exclusive)
			PyThread_release_lock(self->lock);
		if (rc == 0 && sync)
			rc = elog_sync(self->w);
		Py_END_ALLOW_THREADS;
	}
	Py_XDECREF(kb);
	Py_DECREF(vb);
	if (slot) {
		if (rc == 0) {
			off = slot->off;
			free(slot);
		} else {
			/* A batch kept after a failed sync may still write it. */
			slot->next = self->orphans;
			self->orphans = slot;
		}
	}
	writer_leave(self);
	if (rc)
		return writer_error(self, rc);
	if (!self->exclusive && !sync)
		Py_RETURN_NONE;
	return u64(off);
}

/* One item of append_many(): a value, or a tuple (key, value[, schema[,
 * ts_ms]]). */
static int item_record(PyObject *item, struct elog_record *rec, PyObject **kb, PyObject **vb)
{
	if (!PyTuple_Check(item))
		return record_from(item, NULL, 0, NULL, rec, kb, vb);
	Py_ssize_t n = PyTuple_Size(item);
	if (n < 2 || n > 4) {
		PyErr_SetString(PyExc_TypeError,
		                "append_many: a tuple item is (key, value[, schema[, ts_ms]])");
		return -1;
	}
	int schema = 0;
	if (n >= 3) {
		schema = (int)PyLong_AsLong(PyTuple_GetItem(item, 2));
		if (schema == -1 && PyErr_Occurred())
			return -1;
	}
	return record_from(PyTuple_GetItem(item, 1), PyTuple_GetItem(item, 0), schema,
	                   n == 4 ? PyTuple_GetItem(item, 3) : NULL, rec, kb, vb);
}

#define CHUNK 256

static PyObject *Writer_append_many(PyObject *obj, PyObject *items)
{
	WriterObject *self = (WriterObject *)obj;
	PyObject *it = PyObject_GetIter(items);
	if (it == NULL)
		return NULL;
	if (writer_enter(self) < 0) {
		Py_DECREF(it);
		return NULL;
	}
	struct elog_record recs[CHUNK];
	PyObject *keep[2 * CHUNK];
	int n = 0, rc = 0, failed = 0;
	uint64_t first = 0, count = 0;
	/* An exclusive writer's records take consecutive offsets: no other
	 * thread of this handle appends in between. */
	if (self->exclusive) {
		order_lock(self);
		first = elog_next_offset(self->w);
	}
	for (;;) {
		PyObject *item = PyIter_Next(it);
		if (item == NULL && PyErr_Occurred())
			failed = 1;
		if (item != NULL) {
			int bad = item_record(item, &recs[n], &keep[2 * n], &keep[2 * n + 1]);
			Py_DECREF(item);
			if (bad < 0)
				failed = 1;
			else
				n++;
		}
		if (n > 0 && (n == CHUNK || item == NULL || failed)) {
			/* The chunk read so far goes in even when an item
			 * failed: what was given before it is appended. */
			int done = 0;
			Py_BEGIN_ALLOW_THREADS;
			/* One clock for the chunk's records that give no time:
			 * the time of their append, read once. */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			int64_t t = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
			for (; done < n; done++) {
				if (recs[done].ts_ms == ELOG_TS_NOW)
					recs[done].ts_ms = t;
				if ((rc = elog_append(self->w, &recs[done], NULL)) != 0)
					break;
			}
			Py_END_ALLOW_THREADS;
			count += (uint64_t)done;
			for (int i = 0; i < 2 * n; i++)
				Py_XDECREF(keep[i]);
			n = 0;
			if (rc)
				break;
		}
		if (item == NULL || failed)
			break;
	}
	if (self->exclusive)
		PyThread_release_lock(self->lock);
	Py_DECREF(it);
	writer_leave(self);
	if (rc) {
		if (failed)
			PyErr_Clear();
		return writer_error(self, rc);
	}
	if (failed)
		return NULL;
	if (!self->exclusive)
		return u64(count);
	return PyObject_CallFunction((PyObject *)&PyRange_Type, "KK", (unsigned long long)first,
	                             (unsigned long long)(first + count));
}

static PyObject *Writer_flush(PyObject *obj, PyObject *noargs)
{
	WriterObject *self = (WriterObject *)obj;
	(void)noargs;
	if (writer_enter(self) < 0)
		return NULL;
	int rc = writer_sync(self);
	uint64_t end = rc ? 0 : elog_durable_end(self->w);
	writer_leave(self);
	if (rc)
		return writer_error(self, rc);
	return u64(end);
}

static PyObject *Writer_close(PyObject *obj, PyObject *noargs)
{
	(void)noargs;
	if (writer_close((WriterObject *)obj) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *Writer_notice(PyObject *obj, PyObject *noargs)
{
	WriterObject *self = (WriterObject *)obj;
	(void)noargs;
	if (writer_enter(self) < 0)
		return NULL;
	const char *n = elog_notice(self->w);
	PyObject *r = n ? PyUnicode_DecodeUTF8(n, (Py_ssize_t)strlen(n), "replace") : NULL;
	writer_leave(self);
	if (n == NULL)
		Py_RETURN_NONE;
	return r;
}

static PyObject *settings_dict(const struct elog_settings *s);

/* A figure of the handle, read under writer_enter(). */
static PyObject *writer_figure(PyObject *obj, uint64_t (*get)(elog *))
{
	WriterObject *self = (WriterObject *)obj;
	if (writer_enter(self) < 0)
		return NULL;
	uint64_t v = get(self->w);
	writer_leave(self);
	return u64(v);
}

static PyObject *Writer_get_durable_end(PyObject *obj, void *c)
{
	(void)c;
	return writer_figure(obj, elog_durable_end);
}

static PyObject *Writer_get_next_offset(PyObject *obj, void *c)
{
	(void)c;
	return writer_figure(obj, elog_next_offset);
}

static PyObject *Writer_get_settings(PyObject *obj, void *c)
{
	WriterObject *self = (WriterObject *)obj;
	(void)c;
	if (writer_enter(self) < 0)
		return NULL;
	PyObject *d = settings_dict(elog_settings_of(self->w));
	writer_leave(self);
	return d;
}

static PyObject *Writer_get_closed(PyObject *obj, void *c)
{
	(void)c;
	return PyBool_FromLong(((WriterObject *)obj)->w == NULL);
}

static PyObject *Writer_get_exclusive(PyObject *obj, void *c)
{
	(void)c;
	return PyBool_FromLong(((WriterObject *)obj)->exclusive);
}

static PyMethodDef Writer_methods[] = {
	{ "append", (PyCFunction)(void (*)(void))Writer_append, METH_VARARGS | METH_KEYWORDS,
	  "append(value, key=None, *, schema=0, ts_ms=None, sync=False) -> int | None" },
	{ "append_many", Writer_append_many, METH_O, "append_many(items) -> range | int" },
	{ "flush", Writer_flush, METH_NOARGS, "flush() -> int: elog_sync(), the durable end" },
	{ "close", Writer_close, METH_NOARGS, "close(): elog_close()" },
	{ "notice", Writer_notice, METH_NOARGS, "notice() -> str | None: elog_notice()" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Writer_getset[] = {
	{ "durable_end", Writer_get_durable_end, NULL, "elog_durable_end()", NULL },
	{ "next_offset", Writer_get_next_offset, NULL, "elog_next_offset()", NULL },
	{ "settings", Writer_get_settings, NULL, "elog_settings_of(), as a dict", NULL },
	{ "closed", Writer_get_closed, NULL, "True after close()", NULL },
	{ "exclusive", Writer_get_exclusive, NULL, "True for the log's only writer", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot Writer_slots[] = {
	{ Py_tp_doc, "The low-level writer handle of elog.Log (elog_open()).  Use elog.Log." },
	{ Py_tp_new, Writer_new },
	{ Py_tp_dealloc, Writer_dealloc },
	{ Py_tp_methods, Writer_methods },
	{ Py_tp_getset, Writer_getset },
	{ 0, NULL },
};

static PyType_Spec Writer_spec = {
	.name = "elog._elog.Writer",
	.basicsize = sizeof(WriterObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = Writer_slots,
};

/* ---- Reader --------------------------------------------------------- */

typedef struct {
	PyObject ob_base; /* PyObject_HEAD */
	elog_reader *r;
	char *dir;
	int busy;
	int follow, reverse, strict, interrupted;
	int64_t idle_ms;    /* follow: end after this long without a record; <0 none */
	int64_t last_ms;    /* monotonic time of the last record returned */
	uint64_t lo;        /* reverse: stop below this offset */
	int64_t until;      /* reverse with a window: INT64_MAX when none */
	PyObject *key;      /* bytes to match, or NULL */
	uint64_t remaining; /* records still to return (limit); UINT64_MAX none */
	PyObject *gaps;     /* list of (first, last, cause) */
	PyObject *on_gap;   /* callable(first, last, cause, message) or NULL */
} ReaderObject;

static PyTypeObject *Reader_Type;

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static PyObject *reader_error(ReaderObject *self, int rc)
{
	return raise_code(rc, elog_reader_errmsg(self->r), self->dir, NULL);
}

static void reader_close(ReaderObject *self)
{
	if (self->r) {
		elog_reader *r = self->r;
		self->r = NULL;
		Py_BEGIN_ALLOW_THREADS;
		elog_reader_close(r);
		Py_END_ALLOW_THREADS;
	}
}

static PyObject *Reader_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path",  "from_offset", "follow", "key",  "since",
		                  "until", "reverse",     "group",  "idle", "last",
		                  "limit", "strict",      "on_gap", NULL };
	PyObject *pathb = NULL, *from = Py_None, *key = Py_None, *since = Py_None, *until = Py_None,
	         *group = Py_None, *idle = Py_None, *last = Py_None, *limit = Py_None,
	         *on_gap = Py_None;
	int follow = 0, reverse = 0, strict = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|$OpOOOpOOOOpO:Reader", kwlist,
	                                 PyUnicode_FSConverter, &pathb, &from, &follow, &key,
	                                 &since, &until, &reverse, &group, &idle, &last, &limit,
	                                 &strict, &on_gap))
		return NULL;
	ReaderObject *self = (ReaderObject *)PyType_GenericAlloc(type, 0);
	if (self == NULL) {
		Py_DECREF(pathb);
		return NULL;
	}
	self->dir = strdup(PyBytes_AsString(pathb));
	Py_DECREF(pathb);
	if (self->dir == NULL) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	self->follow = follow;
	self->reverse = reverse;
	self->strict = strict;
	self->idle_ms = -1;
	self->remaining = UINT64_MAX;
	self->until = INT64_MAX;
	self->gaps = PyList_New(0);
	if (self->gaps == NULL)
		goto fail;
	if (on_gap != Py_None) {
		Py_INCREF(on_gap);
		self->on_gap = on_gap;
	}

	uint64_t from_off = 0, nlast = 0;
	int64_t s = INT64_MIN, u = INT64_MAX;
	PyObject *gname = NULL;
	if (from != Py_None && to_u64(from, &from_off, "from_offset") < 0)
		goto fail;
	if (since != Py_None && to_i64(since, &s, "since") < 0)
		goto fail;
	if (until != Py_None && to_i64(until, &u, "until") < 0)
		goto fail;
	if (last != Py_None && to_u64(last, &nlast, "last") < 0)
		goto fail;
	if (limit != Py_None && to_u64(limit, &self->remaining, "limit") < 0)
		goto fail;
	if (key != Py_None && to_bytes(key, &self->key, 0, "key") < 0)
		goto fail;
	if (idle != Py_None) {
		double secs = PyFloat_AsDouble(idle);
		if (secs == -1.0 && PyErr_Occurred())
			goto fail;
		if (!(secs >= 0) || secs > 1e12) {
			PyErr_SetString(PyExc_ValueError, "idle must be a number of seconds >= 0");
			goto fail;
		}
		self->idle_ms = (int64_t)(secs * 1000 + 0.5);
	}
	if (group != Py_None) {
		if (!PyUnicode_Check(group)) {
			PyErr_SetString(PyExc_TypeError, "group must be a str");
			goto fail;
		}
		gname = PyUnicode_AsUTF8String(group);
		if (gname == NULL)
			goto fail;
	}
	if (reverse && follow) {
		PyErr_SetString(PyExc_ValueError, "read: follow and reverse cannot go together");
		goto fail;
	}
	int starts = (from != Py_None) + (group != Py_None) + (last != Py_None);
	if (starts > 1) {
		PyErr_SetString(PyExc_ValueError,
		                "read: give one of from_offset, group and last, not several");
		goto fail;
	}
	if (s > u) {
		PyErr_SetString(PyExc_ValueError, "read: since is after until");
		goto fail;
	}

	int rc;
	char msg[ELOG_MSG_MAX] = "";
	const char *gn = gname ? PyBytes_AsString(gname) : NULL;
	int window = s != INT64_MIN || u != INT64_MAX;
	elog_reader *r = NULL;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_reader_open(&r, self->dir);
	if (rc == 0 && window)
		rc = elog_reader_window(r, s, u);
	if (rc == 0) {
		if (reverse) {
			/* Newest first: from just below from_offset + 1, or
			 * the end, down to the first record (or the group's
			 * next one). */
			if (from != Py_None)
				rc = from_off == UINT64_MAX ? elog_reader_seek_end(r)
				                            : elog_reader_seek(r, from_off + 1);
			else
				rc = elog_reader_seek_end(r);
			if (rc == 0 && gn) {
				struct elog_consumer c;
				rc = elog_consumer_get(self->dir, gn, &c, msg);
				if (rc == 0)
					self->lo = c.offset + 1;
				else if (rc == ELOG_NOCONSUMER)
					rc = 0; /* it never committed: from the first */
			}
			if (rc == 0 && last != Py_None)
				self->remaining = nlast < self->remaining ? nlast : self->remaining;
		} else if (gn) {
			rc = elog_consumer_seek(r, self->dir, gn, msg);
		} else if (from != Py_None) {
			rc = elog_reader_seek(r, from_off);
		} else if (last != Py_None) {
			rc = elog_reader_seek_last(r, nlast);
		} else if (s != INT64_MIN) {
			rc = elog_reader_seek_time(r, s);
		}
	}
	Py_END_ALLOW_THREADS;
	self->r = r;
	Py_XDECREF(gname);
	if (rc) {
		if (msg[0] == '\0' && r)
			snprintf(msg, sizeof msg, "%s", elog_reader_errmsg(r));
		raise_code(rc, msg, self->dir, NULL);
		goto fail;
	}
	self->last_ms = mono_ms();
	return (PyObject *)self;
fail:
	Py_DECREF(self);
	return NULL;
}

static void Reader_dealloc(PyObject *obj)
{
	ReaderObject *self = (ReaderObject *)obj;
	PyTypeObject *tp = Py_TYPE(obj);
	reader_close(self);
	Py_XDECREF(self->key);
	Py_XDECREF(self->gaps);
	Py_XDECREF(self->on_gap);
	free(self->dir);
	freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
	f(obj);
	Py_DECREF(tp);
}

static int key_matches(ReaderObject *self, const struct elog_record *rec)
{
	char *k;
	Py_ssize_t n;
	PyBytes_AsStringAndSize(self->key, &k, &n);
	return rec->key_len == (size_t)n && memcmp(rec->key, k, (size_t)n) == 0;
}

/* A gap: noted, then reported (on_gap) or raised (strict).  -1 raised. */
static int reader_gap(ReaderObject *self)
{
	uint64_t first, last;
	elog_reader_gap(self->r, &first, &last);
	const char *cause = elog_reader_gap_cause(self->r) == ELOG_GAP_DAMAGE ? "damage"
	                                                                      : "retention";
	PyObject *t = Py_BuildValue("(KKs)", (unsigned long long)first, (unsigned long long)last,
	                            cause);
	if (t == NULL || PyList_Append(self->gaps, t) < 0) {
		Py_XDECREF(t);
		return -1;
	}
	Py_DECREF(t);
	char msg[ELOG_MSG_MAX];
	const char *why = strcmp(cause, "damage") == 0
	                          ? "lost to damage (see elog-verify --salvage)"
	                          : "removed by retention";
	if (first == last)
		snprintf(msg, sizeof msg, "offset %llu was %s", (unsigned long long)first, why);
	else
		snprintf(msg, sizeof msg, "offsets %llu-%llu were %s", (unsigned long long)first,
		         (unsigned long long)last, why);
	if (self->strict) {
		PyObject *extra = Py_BuildValue("{s:K,s:K,s:s}", "first", (unsigned long long)first,
		                                "last", (unsigned long long)last, "cause", cause);
		if (extra == NULL)
			return -1;
		raise_code(ELOG_GAP, msg, self->dir, extra);
		Py_DECREF(extra);
		return -1;
	}
	if (self->on_gap) {
		PyObject *r = PyObject_CallFunction(self->on_gap, "KKss", (unsigned long long)first,
		                                    (unsigned long long)last, cause, msg);
		if (r == NULL)
			return -1;
		Py_DECREF(r);
	}
	return 0;
}

/* How long a follower waits for the log to move before it checks for
 * signals (KeyboardInterrupt) again. */
#define WAIT_SLICE_MS 200

static PyObject *Reader_next(PyObject *obj)
{
	ReaderObject *self = (ReaderObject *)obj;
	if (self->r == NULL)
		return NULL; /* closed or ended: StopIteration */
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError,
		                "a reader is used by one thread at a time: open one per thread");
		return NULL;
	}
	if (self->remaining == 0)
		goto end;
	self->busy = 1;
	struct elog_record rec;
	for (;;) {
		int rc;
		Py_BEGIN_ALLOW_THREADS;
		rc = self->reverse ? elog_reader_prev(self->r, &rec)
		                   : elog_reader_next(self->r, &rec);
		Py_END_ALLOW_THREADS;
		if (rc == 0) {
			if (self->reverse && rec.offset < self->lo)
				break;
			if (self->key && !key_matches(self, &rec))
				continue;
			if (self->idle_ms >= 0)
				self->last_ms = mono_ms();
			if (self->remaining != UINT64_MAX)
				self->remaining--;
			self->busy = 0;
			return record_new_from(&rec);
		}
		if (rc == ELOG_GAP) {
			if (reader_gap(self) < 0) {
				self->busy = 0;
				return NULL;
			}
			continue;
		}
		if (rc != ELOG_END) {
			self->busy = 0;
			return reader_error(self, rc);
		}
		if (!self->follow)
			break;
		int64_t slice = WAIT_SLICE_MS;
		if (self->idle_ms >= 0) {
			int64_t left = self->last_ms + self->idle_ms - mono_ms();
			if (left <= 0)
				break;
			if (left < slice)
				slice = left;
		}
		Py_BEGIN_ALLOW_THREADS;
		rc = elog_reader_wait(self->r, slice);
		Py_END_ALLOW_THREADS;
		if (rc != 0 && rc != ELOG_TIMEOUT && rc != EINTR) {
			self->busy = 0;
			return reader_error(self, rc);
		}
		if (PyErr_CheckSignals() < 0) {
			self->busy = 0;
			if (!PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
				return NULL;
			/* Ctrl-C ends a follow cleanly: the loop ends. */
			PyErr_Clear();
			self->interrupted = 1;
			goto end;
		}
	}
	self->busy = 0;
end:
	reader_close(self);
	return NULL;
}

static PyObject *Reader_close(PyObject *obj, PyObject *noargs)
{
	ReaderObject *self = (ReaderObject *)obj;
	(void)noargs;
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError, "the reader is in use by another thread");
		return NULL;
	}
	reader_close(self);
	Py_RETURN_NONE;
}

static PyObject *Reader_enter(PyObject *obj, PyObject *noargs)
{
	(void)noargs;
	Py_INCREF(obj);
	return obj;
}

static PyObject *Reader_exit(PyObject *obj, PyObject *args)
{
	(void)args;
	return Reader_close(obj, NULL);
}

static PyObject *Reader_iter(PyObject *obj)
{
	Py_INCREF(obj);
	return obj;
}

static PyObject *Reader_get_position(PyObject *obj, void *c)
{
	ReaderObject *self = (ReaderObject *)obj;
	(void)c;
	if (self->r == NULL)
		Py_RETURN_NONE;
	return u64(elog_reader_position(self->r));
}

static PyObject *Reader_get_durable_end(PyObject *obj, void *c)
{
	ReaderObject *self = (ReaderObject *)obj;
	(void)c;
	if (self->r == NULL)
		Py_RETURN_NONE;
	return u64(elog_reader_durable_end(self->r));
}

static PyObject *Reader_get_gaps(PyObject *obj, void *c)
{
	(void)c;
	return PyList_GetSlice(((ReaderObject *)obj)->gaps, 0, PY_SSIZE_T_MAX);
}

static PyObject *Reader_get_interrupted(PyObject *obj, void *c)
{
	(void)c;
	return PyBool_FromLong(((ReaderObject *)obj)->interrupted);
}

static PyObject *Reader_get_closed(PyObject *obj, void *c)
{
	(void)c;
	return PyBool_FromLong(((ReaderObject *)obj)->r == NULL);
}

static PyMethodDef Reader_methods[] = {
	{ "close", Reader_close, METH_NOARGS,
	  "close()\n\nClose the reader; the iteration ends.  A reader closes itself when "
	  "it ends." },
	{ "__enter__", Reader_enter, METH_NOARGS, NULL },
	{ "__exit__", Reader_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef Reader_getset[] = {
	{ "position", Reader_get_position, NULL,
	  "The offset the next record will have at least (None once closed).", NULL },
	{ "durable_end", Reader_get_durable_end, NULL,
	  "The durable end as the reader last read it (None once closed).", NULL },
	{ "gaps", Reader_get_gaps, NULL,
	  "The gaps met so far: a list of (first, last, cause) with cause 'retention' or "
	  "'damage'.",
	  NULL },
	{ "interrupted", Reader_get_interrupted, NULL,
	  "True when a follow ended on KeyboardInterrupt (Ctrl-C).", NULL },
	{ "closed", Reader_get_closed, NULL, "True once the reader is closed or has ended.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot Reader_slots[] = {
	{ Py_tp_doc,
	  "An iterator of Record objects over a log, as Log.read() returns it.\n\n"
	  "It takes no lock.  One thread at a time uses it; it is a context manager, and it "
	  "closes itself when the iteration ends." },
	{ Py_tp_new, Reader_new },
	{ Py_tp_dealloc, Reader_dealloc },
	{ Py_tp_iter, Reader_iter },
	{ Py_tp_iternext, Reader_next },
	{ Py_tp_methods, Reader_methods },
	{ Py_tp_getset, Reader_getset },
	{ 0, NULL },
};

static PyType_Spec Reader_spec = {
	.name = "elog.Reader",
	.basicsize = sizeof(ReaderObject),
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = Reader_slots,
};

/* ---- functions of a directory --------------------------------------- */

static PyObject *settings_dict(const struct elog_settings *s)
{
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	if (dset(d, "id", PyUnicode_FromString(s->id)) < 0 ||
	    dset(d, "created_ms", PyLong_FromLongLong(s->created_ms)) < 0 ||
	    dset(d, "segment_bytes", u64(s->segment_bytes)) < 0 ||
	    dset(d, "index_interval", u64(s->index_interval)) < 0 ||
	    dset(d, "retain_ms", u64(s->retain_ms)) < 0 ||
	    dset(d, "retain_bytes", u64(s->retain_bytes)) < 0 ||
	    dset(d, "compression",
	         PyUnicode_FromString(s->compression == ELOG_COMPRESS_ZSTD ? "zstd" : "none")) <
	            0 ||
	    dset(d, "compression_level", PyLong_FromLong(s->compression_level)) < 0 ||
	    dset(d, "no_dictionary", PyBool_FromLong(s->no_dictionary)) < 0 ||
	    dset(d, "retain_consumers",
	         PyUnicode_FromString(s->retain_consumers == ELOG_RETAIN_CONSUMERS_PROTECT
	                                      ? "protect"
	                                      : "report")) < 0 ||
	    dset(d, "cleanup",
	         PyUnicode_FromString(s->cleanup == ELOG_CLEANUP_COMPACT ? "compact" : "delete")) <
	            0 ||
	    dset(d, "format", PyLong_FromUnsignedLong(s->format)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* Parse one path argument (str, bytes or os.PathLike) into a new bytes. */
#define PATH_ARG(fmt, ...) \
	PyObject *pathb = NULL; \
	if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, PyUnicode_FSConverter, &pathb, \
	                                 __VA_ARGS__)) \
		return NULL; \
	const char *dir = PyBytes_AsString(pathb);

/* The one argument path of fmt ("O&:name") into a new bytes *pathb. */
static int path_only(PyObject *args, PyObject *kw, const char *fmt, PyObject **pathb)
{
	static char *kwlist[] = { "path", NULL };
	*pathb = NULL;
	return PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, PyUnicode_FSConverter, pathb)
	               ? 0
	               : -1;
}

/* The end of a call on the directory pathb (released here): the error of
 * rc raised, or ok returned (None when NULL). */
static PyObject *finish(PyObject *pathb, int rc, const char *msg, PyObject *ok)
{
	if (rc) {
		raise_code(rc, msg, PyBytes_AsString(pathb), NULL);
		Py_XDECREF(ok);
		ok = NULL;
	} else if (ok == NULL && !PyErr_Occurred()) {
		Py_INCREF(Py_None);
		ok = Py_None;
	}
	Py_DECREF(pathb);
	return ok;
}

static PyObject *fn_settings_read(PyObject *m, PyObject *args, PyObject *kw)
{
	PyObject *pathb;
	(void)m;
	if (path_only(args, kw, "O&:settings_read", &pathb) < 0)
		return NULL;
	struct elog_settings s;
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_settings_read(PyBytes_AsString(pathb), &s, msg);
	Py_END_ALLOW_THREADS;
	return finish(pathb, rc, msg, rc ? NULL : settings_dict(&s));
}

static PyObject *consumer_dict(const struct elog_consumer *c)
{
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	if (dset(d, "name", PyUnicode_FromString(c->name)) < 0 ||
	    dset(d, "offset", u64(c->offset)) < 0 ||
	    dset(d, "committed_ms", PyLong_FromLongLong(c->committed_ms)) < 0 ||
	    dset(d, "lag", u64(c->lag)) < 0 || dset(d, "lost", u64(c->lost)) < 0 ||
	    dset(d, "lost_first", u64(c->lost_first)) < 0 ||
	    dset(d, "lost_last", u64(c->lost_last)) < 0 || dset(d, "next", u64(c->next)) < 0 ||
	    dset(d, "uncommitted", PyBool_FromLong(c->uncommitted)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *fn_consumer_commit(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", "name", "offset", NULL };
	const char *name;
	unsigned long long off;
	(void)m;
	PATH_ARG("O&sK:commit", &name, &off);
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_consumer_commit(dir, name, off, msg);
	Py_END_ALLOW_THREADS;
	return finish(pathb, rc, msg, NULL);
}

/* get(path, name) -> dict or None (no such consumer). */
static PyObject *fn_consumer_get(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", "name", NULL };
	const char *name;
	(void)m;
	PATH_ARG("O&s:committed", &name);
	char msg[ELOG_MSG_MAX] = "";
	struct elog_consumer c;
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_consumer_get(dir, name, &c, msg);
	Py_END_ALLOW_THREADS;
	if (rc == ELOG_NOCONSUMER)
		return finish(pathb, 0, msg, NULL);
	return finish(pathb, rc, msg, rc ? NULL : consumer_dict(&c));
}

static PyObject *fn_consumer_list(PyObject *m, PyObject *args, PyObject *kw)
{
	PyObject *pathb;
	(void)m;
	if (path_only(args, kw, "O&:consumers", &pathb) < 0)
		return NULL;
	char msg[ELOG_MSG_MAX] = "";
	struct elog_consumer *c = NULL;
	size_t n = 0;
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_consumer_list(PyBytes_AsString(pathb), &c, &n, msg);
	Py_END_ALLOW_THREADS;
	PyObject *r = NULL;
	if (rc == 0 && (r = PyList_New(0)) != NULL) {
		for (size_t i = 0; i < n; i++) {
			PyObject *d = consumer_dict(&c[i]);
			if (d == NULL || PyList_Append(r, d) < 0) {
				Py_XDECREF(d);
				Py_CLEAR(r);
				break;
			}
			Py_DECREF(d);
		}
	}
	free(c);
	return finish(pathb, rc, msg, r);
}

/* delete(path, name) and ack_loss(path, name). */
static PyObject *consumer_op(PyObject *args, PyObject *kw, const char *fmt,
                             int (*op)(const char *, const char *, char *))
{
	static char *kwlist[] = { "path", "name", NULL };
	const char *name;
	PATH_ARG(fmt, &name);
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = op(dir, name, msg);
	Py_END_ALLOW_THREADS;
	return finish(pathb, rc, msg, NULL);
}

static PyObject *fn_consumer_delete(PyObject *m, PyObject *args, PyObject *kw)
{
	(void)m;
	return consumer_op(args, kw, "O&s:delete_consumer", elog_consumer_delete);
}

static PyObject *fn_consumer_create(PyObject *m, PyObject *args, PyObject *kw)
{
	(void)m;
	return consumer_op(args, kw, "O&s:create_consumer", elog_consumer_create);
}

static PyObject *fn_consumer_ack_loss(PyObject *m, PyObject *args, PyObject *kw)
{
	(void)m;
	return consumer_op(args, kw, "O&s:ack_loss", elog_consumer_ack_loss);
}

/* Callbacks of the maintenance calls run in the calling thread while it
 * has released the GIL: each takes it back to add a dict to a list.  A
 * failure is kept and raised after the call. */
struct collect {
	PyObject *a, *b, *c; /* lists */
	int failed;
};

static void collect_add(struct collect *k, PyObject *list, PyObject *d)
{
	if (d == NULL || PyList_Append(list, d) < 0)
		k->failed = 1;
	Py_XDECREF(d);
}

static void on_segment(void *arg, const struct elog_segment_report *s)
{
	struct collect *k = arg;
	PyGILState_STATE g = PyGILState_Ensure();
	static const char *actions[] = { "?", "removed", "rewritten", "emptied", "merged" };
	PyObject *d = Py_BuildValue("{s:s,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:N,s:O}", "action",
	                            actions[s->action >= 1 && s->action <= 4 ? s->action : 0],
	                            "base", (unsigned long long)s->base, "end",
	                            (unsigned long long)s->end, "into", (unsigned long long)s->into,
	                            "records_before", (unsigned long long)s->records_before,
	                            "records_after", (unsigned long long)s->records_after,
	                            "bytes_before", (unsigned long long)s->bytes_before,
	                            "bytes_after", (unsigned long long)s->bytes_after, "newest_ms",
	                            ms_or_none(s->newest_ms), "damaged",
	                            s->damaged ? Py_True : Py_False);
	collect_add(k, k->a, d);
	PyGILState_Release(g);
}

static void on_loss(void *arg, const struct elog_consumer_loss *l)
{
	struct collect *k = arg;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *d = Py_BuildValue("{s:s,s:K,s:K,s:K,s:O,s:O}", "name", l->name, "first",
	                            (unsigned long long)l->first, "last",
	                            (unsigned long long)l->last, "records",
	                            (unsigned long long)l->records, "forced",
	                            l->forced ? Py_True : Py_False, "recorded",
	                            l->recorded ? Py_True : Py_False);
	collect_add(k, k->b, d);
	PyGILState_Release(g);
}

static int collect_init(struct collect *k)
{
	k->failed = 0;
	k->a = PyList_New(0);
	k->b = PyList_New(0);
	k->c = PyList_New(0);
	return k->a && k->b && k->c ? 0 : -1;
}

static void collect_free(struct collect *k)
{
	Py_XDECREF(k->a);
	Py_XDECREF(k->b);
	Py_XDECREF(k->c);
}

/* A limit: None = the log's policy (0), -1 = off, else the value. */
static int limit_arg(PyObject *o, uint64_t *v, const char *what)
{
	if (o == Py_None) {
		*v = 0;
		return 0;
	}
	if (PyLong_Check(o) && PyLong_AsLongLong(o) == -1) {
		*v = ELOG_RETAIN_OFF;
		return 0;
	}
	if (to_u64(o, v, what) < 0)
		return -1;
	if (*v == 0) {
		PyErr_Format(PyExc_ValueError,
		             "%s must be above 0 (None: the log's policy, -1: off)", what);
		return -1;
	}
	return 0;
}

static PyObject *fn_retain(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path",    "max_age_ms", "max_bytes", "dry_run",
		                  "wait_ms", "now_ms",     NULL };
	PyObject *age = Py_None, *bytes = Py_None;
	int dry = 0;
	long long wait_ms = 0, now_ms = 0;
	(void)m;
	PATH_ARG("O&|$OOpLL:retain", &age, &bytes, &dry, &wait_ms, &now_ms);
	struct elog_retain_opts o = { .dry_run = dry, .wait_ms = wait_ms, .now_ms = now_ms };
	struct collect k = { 0 };
	PyObject *r = NULL;
	if (limit_arg(age, &o.max_age_ms, "max_age_ms") < 0 ||
	    limit_arg(bytes, &o.max_bytes, "max_bytes") < 0 || collect_init(&k) < 0)
		goto out;
	o.each = on_segment;
	o.lost = on_loss;
	o.arg = &k;
	struct elog_retain_result res;
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_retain(dir, &o, &res, msg);
	Py_END_ALLOW_THREADS;
	if (rc) {
		raise_code(rc, msg, dir, NULL);
		goto out;
	}
	if (k.failed) {
		PyErr_SetString(PyExc_MemoryError, "retain: could not gather the report");
		goto out;
	}
	static const char *why[] = { "none", "young", "untrusted", "consumer", "damaged" };
	r = Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:s,s:K,s:K,s:N,s:N,s:O,s:s,s:K,s:O,s:O,s:K,"
	                  "s:K,s:K,s:O,s:O,s:O}",
	                  "segments", (unsigned long long)res.segments, "bytes",
	                  (unsigned long long)res.bytes, "start_before",
	                  (unsigned long long)res.start_before, "start_after",
	                  (unsigned long long)res.start_after, "total_bytes",
	                  (unsigned long long)res.total_bytes, "leftovers",
	                  (unsigned long long)res.leftovers, "kept_why",
	                  why[res.kept_why >= 0 && res.kept_why <= 4 ? res.kept_why : 0],
	                  "kept_base", (unsigned long long)res.kept_base, "kept_end",
	                  (unsigned long long)res.kept_end, "kept_newest_ms",
	                  ms_or_none(res.kept_why ? res.kept_newest_ms : INT64_MIN),
	                  "kept_judged_ms",
	                  ms_or_none(res.kept_why ? res.kept_judged_ms : INT64_MIN), "kept_damaged",
	                  res.kept_damaged ? Py_True : Py_False, "kept_consumer", res.kept_consumer,
	                  "losers", (unsigned long long)res.losers, "losses_unrecorded",
	                  res.losses_unrecorded ? Py_True : Py_False, "consumers_unknown",
	                  res.consumers_unknown ? Py_True : Py_False, "unjudged",
	                  (unsigned long long)res.unjudged, "unjudged_base",
	                  (unsigned long long)res.unjudged_base, "damaged",
	                  (unsigned long long)res.damaged, "removed", k.a, "losses", k.b, "dry_run",
	                  dry ? Py_True : Py_False);
out:
	collect_free(&k);
	Py_DECREF(pathb);
	return r;
}

static PyObject *fn_compact(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path",    "grace_ms", "min_lag_ms", "dry_run",
		                  "wait_ms", "now_ms",   NULL };
	PyObject *grace = Py_None;
	unsigned long long min_lag = 0;
	int dry = 0;
	long long wait_ms = 0, now_ms = 0;
	(void)m;
	PATH_ARG("O&|$OKpLL:compact", &grace, &min_lag, &dry, &wait_ms, &now_ms);
	struct elog_compact_opts o = { .min_lag_ms = min_lag,
		                       .dry_run = dry,
		                       .wait_ms = wait_ms,
		                       .now_ms = now_ms };
	struct collect k = { 0 };
	PyObject *r = NULL;
	if (grace != Py_None) {
		if (to_u64(grace, &o.grace_ms, "grace_ms") < 0)
			goto out;
		if (o.grace_ms == 0)
			o.grace_ms = ELOG_COMPACT_GRACE_NONE;
	}
	if (collect_init(&k) < 0)
		goto out;
	o.each = on_segment;
	o.arg = &k;
	struct elog_compact_result res;
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_compact(dir, &o, &res, msg);
	Py_END_ALLOW_THREADS;
	if (rc) {
		raise_code(rc, msg, dir, NULL);
		goto out;
	}
	if (k.failed) {
		PyErr_SetString(PyExc_MemoryError, "compact: could not gather the report");
		goto out;
	}
	r = Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:O,s:O}",
	                  "segments_before", (unsigned long long)res.segments_before,
	                  "segments_after", (unsigned long long)res.segments_after,
	                  "segments_rewritten", (unsigned long long)res.segments_rewritten,
	                  "records_before", (unsigned long long)res.records_before, "records_after",
	                  (unsigned long long)res.records_after, "bytes_before",
	                  (unsigned long long)res.bytes_before, "bytes_after",
	                  (unsigned long long)res.bytes_after, "keys", (unsigned long long)res.keys,
	                  "tombstones_kept", (unsigned long long)res.tombstones_kept,
	                  "tombstones_removed", (unsigned long long)res.tombstones_removed,
	                  "leftovers", (unsigned long long)res.leftovers, "memory",
	                  (unsigned long long)res.memory, "changed", k.a, "dry_run",
	                  dry ? Py_True : Py_False);
out:
	collect_free(&k);
	Py_DECREF(pathb);
	return r;
}

static void on_problem(void *arg, const struct elog_problem *p)
{
	struct collect *k = arg;
	PyGILState_STATE g = PyGILState_Ensure();
	static const char *kinds[] = { "?", "damage", "warning", "repaired", "loss", "unreadable" };
	static const char *hints[] = { "none",    "cut",  "retain", "foreign", "compact_copy",
		                       "compact", "loss", "reseal", "salvage", "no_salvage" };
	PyObject *pos;
	if (p->pos == ELOG_NOPOS) {
		Py_INCREF(Py_None);
		pos = Py_None;
	} else {
		pos = u64(p->pos);
	}
	PyObject *d = Py_BuildValue("{s:s,s:s,s:N,s:s,s:s,s:s}", "kind",
	                            kinds[p->kind >= 1 && p->kind <= 5 ? p->kind : 0], "file",
	                            p->file, "pos", pos, "text", p->text, "hint",
	                            hints[p->hint >= 0 && p->hint <= 9 ? p->hint : 0], "detail",
	                            p->detail ? p->detail : "");
	collect_add(k, k->a, d);
	PyGILState_Release(g);
}

static void on_segment_info(void *arg, const struct elog_segment_info *s)
{
	struct collect *k = arg;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *d = Py_BuildValue("{s:K,s:K,s:K,s:N,s:N,s:N,s:N,s:O,s:O}", "base",
	                            (unsigned long long)s->base, "bytes",
	                            (unsigned long long)s->bytes, "records",
	                            (unsigned long long)s->records, "first",
	                            s->records ? u64(s->first) : (Py_INCREF(Py_None), Py_None),
	                            "last",
	                            s->records ? u64(s->last) : (Py_INCREF(Py_None), Py_None),
	                            "ts_min", ms_or_none(s->records ? s->ts_min : INT64_MIN),
	                            "ts_max", ms_or_none(s->records ? s->ts_max : INT64_MIN),
	                            "active", s->active ? Py_True : Py_False, "damaged",
	                            s->damaged ? Py_True : Py_False);
	collect_add(k, k->b, d);
	PyGILState_Release(g);
}

static PyObject *fn_verify(PyObject *m, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", "repair", "salvage", "wait_ms", NULL };
	int repair = 0, salvage = 0;
	long long wait_ms = 0;
	(void)m;
	PATH_ARG("O&|$ppL:verify", &repair, &salvage, &wait_ms);
	struct collect k = { 0 };
	PyObject *r = NULL;
	if (salvage && !repair) {
		PyErr_SetString(PyExc_ValueError, "verify: salvage=True needs repair=True");
		goto out;
	}
	if (collect_init(&k) < 0)
		goto out;
	struct elog_verify_opts o = {
		.flags = (repair ? ELOG_VERIFY_REPAIR : 0) | (salvage ? ELOG_VERIFY_SALVAGE : 0),
		.wait_ms = wait_ms,
		.problem = on_problem,
		.segment = on_segment_info,
		.arg = &k,
	};
	struct elog_verify_result res;
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_verify(dir, &o, &res, msg);
	Py_END_ALLOW_THREADS;
	if (rc) {
		raise_code(rc, msg, dir, NULL);
		goto out;
	}
	if (k.failed) {
		PyErr_SetString(PyExc_MemoryError, "verify: could not gather the report");
		goto out;
	}
	r = Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:O,s:O}", "damage",
	                  (unsigned long long)res.damage, "warnings",
	                  (unsigned long long)res.warnings, "repaired",
	                  (unsigned long long)res.repaired, "remaining",
	                  (unsigned long long)res.remaining, "segments",
	                  (unsigned long long)res.segments, "records",
	                  (unsigned long long)res.records, "bytes", (unsigned long long)res.bytes,
	                  "losses", (unsigned long long)res.losses, "unreadable",
	                  (unsigned long long)res.unreadable, "salvageable",
	                  (unsigned long long)res.salvageable, "problems", k.a, "segment_list",
	                  k.b);
out:
	collect_free(&k);
	Py_DECREF(pathb);
	return r;
}

static PyObject *fn_summary(PyObject *m, PyObject *args, PyObject *kw)
{
	PyObject *pathb;
	(void)m;
	if (path_only(args, kw, "O&:summary", &pathb) < 0)
		return NULL;
	struct elog_summary s;
	char msg[ELOG_MSG_MAX] = "";
	int rc;
	Py_BEGIN_ALLOW_THREADS;
	rc = elog_summary_read(PyBytes_AsString(pathb), &s, msg);
	Py_END_ALLOW_THREADS;
	if (rc)
		return finish(pathb, rc, msg, NULL);
	Py_DECREF(pathb);
	PyObject *writers = Py_None;
	if (s.writers_known) {
		writers = PyList_New(0);
		for (size_t i = 0; writers && i < s.nwriters; i++) {
			PyObject *p = PyLong_FromLong((long)s.writers[i]);
			if (p == NULL || PyList_Append(writers, p) < 0)
				Py_CLEAR(writers);
			Py_XDECREF(p);
		}
	} else {
		Py_INCREF(writers);
	}
	PyObject *settings = settings_dict(&s.settings);
	PyObject *r = NULL;
	if (writers && settings)
		r = Py_BuildValue(
		        "{s:O,s:K,s:K,s:O,s:O,s:K,s:K,s:K,s:O,s:N,s:N,s:K,s:K,s:K,s:K,s:K,s:K,"
		        "s:K,s:O,s:O,s:O,s:i,s:i,s:N,s:N,s:N,s:O,s:K,s:K,s:O,s:I,s:I}",
		        "settings", settings, "start", (unsigned long long)s.start, "durable_end",
		        (unsigned long long)s.durable_end, "have_first",
		        s.have_first ? Py_True : Py_False, "have_last",
		        s.have_last ? Py_True : Py_False, "first", (unsigned long long)s.first,
		        "last", (unsigned long long)s.last, "records",
		        (unsigned long long)s.records, "records_exact",
		        s.records_exact ? Py_True : Py_False, "oldest_ms",
		        ms_or_none(s.records ? s.oldest_ms : INT64_MIN), "newest_ms",
		        ms_or_none(s.records ? s.newest_ms : INT64_MIN), "segments",
		        (unsigned long long)s.segments, "active_base",
		        (unsigned long long)s.active_base, "log_bytes",
		        (unsigned long long)s.log_bytes, "dir_bytes",
		        (unsigned long long)s.dir_bytes, "disk_bytes",
		        (unsigned long long)s.disk_bytes, "sample_stored",
		        (unsigned long long)s.sample_stored, "sample_raw",
		        (unsigned long long)s.sample_raw, "sample_unknown",
		        s.sample_unknown ? Py_True : Py_False, "writers", writers,
		        "writers_exclusive", s.writers_exclusive ? Py_True : Py_False, "batch_pid",
		        (int)s.batch_pid, "maint_pid", (int)s.maint_pid, "retain_last_ms",
		        ms_or_none(s.retain_last_ms), "compact_last_ms",
		        ms_or_none(s.compact_last_ms), "copy_last_ms", ms_or_none(s.copy_last_ms),
		        "damaged", s.damaged ? Py_True : Py_False, "lost",
		        (unsigned long long)s.lost, "pending", (unsigned long long)s.pending,
		        "pending_cut", s.pending_cut ? Py_True : Py_False, "segment_versions",
		        s.segment_versions, "index_versions", s.index_versions);
	Py_XDECREF(writers);
	Py_XDECREF(settings);
	elog_summary_free(&s);
	return r;
}

static PyObject *fn_strerror(PyObject *m, PyObject *arg)
{
	(void)m;
	int code = (int)PyLong_AsLong(arg);
	if (code == -1 && PyErr_Occurred())
		return NULL;
	return PyUnicode_FromString(elog_strerror(code));
}

static PyObject *fn_have_zstd(PyObject *m, PyObject *noargs)
{
	(void)m;
	(void)noargs;
	return PyBool_FromLong(elog_have_zstd());
}

#define KW(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS

static PyMethodDef module_methods[] = {
	{ "settings_read", KW(fn_settings_read), "settings_read(path) -> dict" },
	{ "consumer_commit", KW(fn_consumer_commit), "consumer_commit(path, name, offset)" },
	{ "consumer_get", KW(fn_consumer_get), "consumer_get(path, name) -> dict | None" },
	{ "consumer_list", KW(fn_consumer_list), "consumer_list(path) -> list[dict]" },
	{ "consumer_delete", KW(fn_consumer_delete), "consumer_delete(path, name)" },
	{ "consumer_create", KW(fn_consumer_create), "consumer_create(path, name)" },
	{ "consumer_ack_loss", KW(fn_consumer_ack_loss), "consumer_ack_loss(path, name)" },
	{ "retain", KW(fn_retain), "retain(path, *, ...) -> dict" },
	{ "compact", KW(fn_compact), "compact(path, *, ...) -> dict" },
	{ "verify", KW(fn_verify), "verify(path, *, ...) -> dict" },
	{ "summary", KW(fn_summary), "summary(path) -> dict" },
	{ "strerror", fn_strerror, METH_O, "strerror(code) -> str" },
	{ "have_zstd", fn_have_zstd, METH_NOARGS, "have_zstd() -> bool" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "elog._elog",
	.m_doc = "The C half of elog: libelog's calls, used by the package elog.",
	.m_size = -1,
	.m_methods = module_methods,
};

static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **out, const char *name)
{
	*out = (PyTypeObject *)PyType_FromSpec(spec);
	if (*out == NULL)
		return -1;
	Py_INCREF(*out);
	if (PyModule_AddObject(m, name, (PyObject *)*out) < 0) {
		Py_DECREF(*out);
		return -1;
	}
	return 0;
}

PyMODINIT_FUNC PyInit__elog(void);

PyMODINIT_FUNC PyInit__elog(void)
{
	PyObject *errors = PyImport_ImportModule("elog._errors");
	if (errors == NULL)
		return NULL;
	make_error_fn = PyObject_GetAttrString(errors, "make_error");
	Py_DECREF(errors);
	if (make_error_fn == NULL)
		return NULL;
	PyObject *m = PyModule_Create(&module_def);
	if (m == NULL)
		return NULL;
	if (add_type(m, &Record_spec, &Record_Type, "Record") < 0 ||
	    add_type(m, &Writer_spec, &Writer_Type, "Writer") < 0 ||
	    add_type(m, &Reader_spec, &Reader_Type, "Reader") < 0)
		goto fail;
	record_alloc = (allocfunc)PyType_GetSlot(Record_Type, Py_tp_alloc);
	record_free = (freefunc)PyType_GetSlot(Record_Type, Py_tp_free);
	if (PyModule_AddStringConstant(m, "LIB_VERSION", elog_version()) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_RECORD", ELOG_MAX_RECORD) < 0 ||
	    PyModule_AddIntConstant(m, "MAX_KEY", ELOG_MAX_KEY) < 0 ||
	    PyModule_AddIntConstant(m, "CONSUMER_NAME_MAX", ELOG_CONSUMER_NAME_MAX) < 0 ||
	    PyModule_AddIntConstant(m, "WAIT_FOREVER", (long)ELOG_WAIT_FOREVER) < 0 ||
	    PyModule_AddIntConstant(m, "WAIT_NONE", (long)ELOG_WAIT_NONE) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}

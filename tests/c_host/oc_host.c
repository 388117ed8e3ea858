/*
 * oc_host.c -- runs an ONNX model through ONNX Runtime's C API, with no Python in the process.
 *
 * The tests use it to show that our custom-op libraries load into plain ORT the way C++, C#,
 * Java or Triton hosts load them (RegisterCustomOpsLibrary_V2), and that they do not drag
 * libpython in. It is compiled at test time (tests/c_host.py) against our own declarations of
 * ORT's ABI (ort_abi.h) and dlopen()s the libonnxruntime.so.* that the onnxruntime wheel ships.
 *
 *   oc_host LIBONNXRUNTIME MODEL [--library PATH]... [--input NAME=FILE]... [--out DIR]
 *           [--threads N] [--repeat K] [--intra-op N] [--cycles C]
 *
 * --cycles C first makes and drops C session options with the libraries and a session (ORT unloads
 * the libraries each time), printing "RSS <cycle> <bytes>" after the first and every C/8th.
 * --threads N runs the one session from N threads at once, each --repeat K times; every run
 * must give bit-identical outputs. --intra-op sets ORT's intra-op thread count (default: ORT's).
 *
 * Tensor files ("raw format", inputs and outputs alike): one ASCII header line
 *     <dtype> <rank> <d0> <d1> ... <d(rank-1)>\n
 * (dtype a numpy name: float32, float64, float16, bfloat16, int8..int64, uint8..uint64, bool; or
 * string), then exactly d0*...*d(rank-1) elements, C order, little-endian (a string element: its
 * byte count as a uint64, then its bytes). Output NAME is written to DIR/NAME.bin ('/' in a name
 * becomes '_'). String inputs go to ORT with FillStringTensor (each element up to its first NUL).
 *
 * Prints "ERROR: <message>" on stdout and exits with: 1 runtime unusable (dlopen, GetApi(17),
 * CreateEnv), 2 usage or file error, 3 library registration, 4 session creation, 5 run,
 * 6 outputs differ ("MISMATCH"). On success prints "LIBPYTHON: yes|no" then "OK".
 */
#define _POSIX_C_SOURCE 200809L   /* strict -std=c11 hides POSIX: dlopen, pthreads, strdup */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ort_abi.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_REGISTER = 3, EXIT_SESSION = 4, EXIT_RUN = 5,
       EXIT_MISMATCH = 6 };
enum { MAX_RANK = 32, MAX_ITEMS = 64 };

static const OrtApi* ort;

typedef struct DType { const char* name; ONNXTensorElementDataType type; size_t size; } DType;
static const DType dtypes[] = {
    {"float32", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 4},   {"float64", ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, 8},
    {"float16", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, 2}, {"bfloat16", ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, 2},
    {"int8", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, 1},       {"uint8", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, 1},
    {"int16", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, 2},     {"uint16", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, 2},
    {"int32", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, 4},     {"uint32", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, 4},
    {"int64", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 8},     {"uint64", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, 8},
    {"bool", ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, 1},
    {"string", ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING, 0},   /* size 0: elements of their own length */
};
enum { N_DTYPES = sizeof dtypes / sizeof dtypes[0] };

/* A tensor in our own memory: what a raw file holds, and what a run's output is copied to. */
typedef struct Tensor {
    const DType* dtype;
    size_t rank;
    int64_t dims[MAX_RANK];
    size_t bytes;
    void* data;        /* a string tensor: its elements as the raw file holds them */
    char** strings;    /* a string input: each element, NUL-terminated (FillStringTensor's form) */
    size_t count;
} Tensor;

/* Everything the threads share (read-only while they run) plus each thread's own results. */
typedef struct Job {
    OrtSession* session;
    size_t n_in, n_out;
    const char* const* in_names;
    const OrtValue* const* in_values;
    const char* const* out_names;
    int repeat;
    Tensor* results;   /* n_out tensors of this thread's first run */
    char* error;       /* malloc'ed message of the first failure, NULL if none */
    int mismatch;      /* a later run of this thread differed from its first */
} Job;

static void fail(int code, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("ERROR: ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    fflush(stdout);
    exit(code);   /* no cleanup: the process ends, and ORT need not be torn down in order */
}

/* ORT's message, as a malloc'ed string; releases the status. */
static char* take_message(OrtStatus* status) {
    char* msg = strdup(ort->GetErrorMessage(status));
    ort->ReleaseStatus(status);
    for (size_t n = strlen(msg); n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '); n--) msg[n - 1] = '\0';
    return msg;   /* trailing newlines trimmed: "ERROR: ..." stays one line where ORT allows */
}

static void check(OrtStatus* status, int code) {
    if (status) fail(code, "%s", take_message(status));
}

static const DType* dtype_named(const char* name) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (strcmp(dtypes[i].name, name) == 0) return &dtypes[i];
    return NULL;
}

static const DType* dtype_of(ONNXTensorElementDataType type) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtypes[i].type == type) return &dtypes[i];
    return NULL;
}

/* ------------------------------------------------------------------ raw files */
/* The rest of f: t->count elements, each a uint64 byte count then the bytes. */
static void read_strings(const char* path, FILE* f, Tensor* t) {
    size_t cap = 4096, used = 0, got;
    char* blob = malloc(cap);
    while (blob && (got = fread(blob + used, 1, cap - used, f)) > 0)
        if ((used += got) == cap) blob = realloc(blob, cap *= 2);
    fclose(f);
    if (!blob || !(t->strings = calloc(t->count ? t->count : 1, sizeof *t->strings)))
        fail(EXIT_USAGE, "%s: out of memory", path);
    size_t at = 0;
    for (size_t k = 0; k < t->count; k++) {
        uint64_t n;
        if (used - at < sizeof n) fail(EXIT_USAGE, "%s: element %zu: no byte count", path, k);
        memcpy(&n, blob + at, sizeof n);
        at += sizeof n;
        if (used - at < n) fail(EXIT_USAGE, "%s: element %zu: want %llu bytes", path, k, (unsigned long long)n);
        t->strings[k] = strndup(blob + at, (size_t)n);
        at += (size_t)n;
    }
    if (at != used) fail(EXIT_USAGE, "%s: %zu bytes after the last element", path, used - at);
    t->data = blob;
    t->bytes = used;
}

/* A string output in the raw form: ORT's packed bytes and offsets, one byte count per element. */
static OrtStatus* take_strings(const OrtValue* v, Tensor* t, size_t count) {
    size_t total = 0;
    OrtStatus* st = ort->GetStringTensorDataLength(v, &total);
    if (st) return st;
    char* packed = malloc(total ? total : 1);
    size_t* offsets = malloc((count ? count : 1) * sizeof *offsets);
    t->bytes = total + count * sizeof(uint64_t);
    t->data = malloc(t->bytes ? t->bytes : 1);
    if (count && !(st = ort->GetStringTensorContent(v, packed, total, offsets, count))) {
        char* p = t->data;
        for (size_t k = 0; k < count; k++) {
            const uint64_t n = (k + 1 < count ? offsets[k + 1] : total) - offsets[k];
            memcpy(p, &n, sizeof n);
            memcpy(p + sizeof n, packed + offsets[k], (size_t)n);
            p += sizeof n + n;
        }
    }
    free(packed);
    free(offsets);
    return st;
}

static void read_raw(const char* path, Tensor* t) {
    FILE* f = fopen(path, "rb");
    if (!f) fail(EXIT_USAGE, "cannot open %s: %s", path, strerror(errno));
    char line[4096], name[32];
    int used = 0;
    long long rank;
    if (!fgets(line, sizeof line, f) || !strchr(line, '\n')
        || sscanf(line, "%31s %lld%n", name, &rank, &used) != 2)
        fail(EXIT_USAGE, "%s: bad header (want \"<dtype> <rank> <dims...>\\n\")", path);
    if (!(t->dtype = dtype_named(name))) fail(EXIT_USAGE, "%s: unknown dtype %s", path, name);
    if (rank < 0 || rank > MAX_RANK) fail(EXIT_USAGE, "%s: rank %lld out of range", path, rank);
    t->rank = (size_t)rank;
    size_t count = 1;
    const char* p = line + used;
    for (size_t i = 0; i < t->rank; i++) {
        long long d;
        int n = 0;
        if (sscanf(p, "%lld%n", &d, &n) != 1 || d < 0) fail(EXIT_USAGE, "%s: bad dimension %zu", path, i);
        t->dims[i] = d;
        count *= (size_t)d;
        p += n;
    }
    t->count = count;
    t->strings = NULL;
    if (t->dtype->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
        read_strings(path, f, t);
        return;
    }
    t->bytes = count * t->dtype->size;
    t->data = malloc(t->bytes ? t->bytes : 1);   /* never NULL: ORT wants a pointer even for 0 elements */
    if (!t->data) fail(EXIT_USAGE, "%s: out of memory", path);
    if (fread(t->data, 1, t->bytes, f) != t->bytes || fgetc(f) != EOF)
        fail(EXIT_USAGE, "%s: want exactly %zu data bytes after the header", path, t->bytes);
    fclose(f);
}

static void write_raw(const char* path, const Tensor* t) {
    FILE* f = fopen(path, "wb");
    if (!f) fail(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "%s %zu", t->dtype->name, t->rank);
    for (size_t i = 0; i < t->rank; i++) fprintf(f, " %lld", (long long)t->dims[i]);
    fputc('\n', f);
    if (fwrite(t->data, 1, t->bytes, f) != t->bytes || fclose(f) != 0)
        fail(EXIT_USAGE, "cannot write %s", path);
}

static int same_tensor(const Tensor* a, const Tensor* b) {
    return a->dtype == b->dtype && a->rank == b->rank
        && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0
        && a->bytes == b->bytes && memcmp(a->data, b->data, a->bytes) == 0;
}

static void free_tensors(Tensor* t, size_t n) {
    for (size_t i = 0; i < n; i++) free(t[i].data);
}

/* --------------------------------------------------------------------- runs */
/* Runs the session once and copies every output into `out` (ORT's values are released).
 * Returns NULL, or a malloc'ed message; never exits: it runs on worker threads. */
static char* run_once(const Job* job, Tensor* out) {
    OrtValue* values[MAX_ITEMS] = {0};
    char* err = NULL;
    OrtStatus* st = ort->Run(job->session, NULL, job->in_names, job->in_values, job->n_in,
                             job->out_names, job->n_out, values);
    if (st) return take_message(st);
    memset(out, 0, job->n_out * sizeof *out);
    for (size_t i = 0; i < job->n_out && !err; i++) {
        OrtTensorTypeAndShapeInfo* info = NULL;
        ONNXTensorElementDataType type;
        size_t count = 0;
        void* data = NULL;
        if ((st = ort->GetTensorTypeAndShape(values[i], &info))
            || (st = ort->GetTensorElementType(info, &type))
            || (st = ort->GetDimensionsCount(info, &out[i].rank))
            || (out[i].rank <= MAX_RANK && (st = ort->GetDimensions(info, out[i].dims, out[i].rank)))
            || (st = ort->GetTensorShapeElementCount(info, &count))
            || (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING && (st = take_strings(values[i], &out[i], count)))
            || (st = ort->GetTensorMutableData(values[i], &data))) {
            err = take_message(st);
        } else if (out[i].rank > MAX_RANK || !(out[i].dtype = dtype_of(type))) {
            char buf[256];
            snprintf(buf, sizeof buf, "output %s: rank %zu / element type %d not supported by oc_host",
                     job->out_names[i], out[i].rank, (int)type);
            err = strdup(buf);
        } else if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
            out[i].bytes = count * out[i].dtype->size;
            out[i].data = malloc(out[i].bytes ? out[i].bytes : 1);
            if (out[i].bytes) memcpy(out[i].data, data, out[i].bytes);
        }
        if (info) ort->ReleaseTensorTypeAndShapeInfo(info);
    }
    for (size_t i = 0; i < job->n_out; i++)
        if (values[i]) ort->ReleaseValue(values[i]);
    if (err) free_tensors(out, job->n_out);
    return err;
}

static void* worker(void* arg) {
    Job* job = arg;
    Tensor* again = calloc(job->n_out ? job->n_out : 1, sizeof *again);
    if (!(job->error = run_once(job, job->results))) {
        for (int r = 1; r < job->repeat && !job->error; r++) {
            if ((job->error = run_once(job, again))) break;
            for (size_t i = 0; i < job->n_out; i++)
                if (!same_tensor(&job->results[i], &again[i])) job->mismatch = 1;
            free_tensors(again, job->n_out);
        }
    }
    free(again);
    return NULL;
}

/* True if any mapping of this process comes from libpython (a custom-op library must not need it). */
static int libpython_mapped(void) {
    FILE* f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!f) fail(EXIT_USAGE, "cannot read /proc/self/maps");
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, "libpython") != NULL;
    fclose(f);
    return found;
}

static long parse_count(const char* s, const char* opt) {
    char* end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 4096) fail(EXIT_USAGE, "%s: bad number %s", opt, s);
    return v;
}

static long rss_bytes(void) {
    long pages = 0, resident = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2) fail(EXIT_USAGE, "cannot read /proc/self/statm");
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char** argv) {
    const char *ort_path = NULL, *model = NULL, *out_dir = NULL;
    const char* libraries[MAX_ITEMS];
    const char* in_names[MAX_ITEMS];
    const char* in_files[MAX_ITEMS];
    size_t n_lib = 0, n_in = 0;
    long threads = 1, repeat = 1, intra_op = -1, cycles = 0;

    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            if (!ort_path) ort_path = a;
            else if (!model) model = a;
            else fail(EXIT_USAGE, "unexpected argument %s", a);
            continue;
        }
        if (i + 1 >= argc) fail(EXIT_USAGE, "%s needs a value", a);
        const char* v = argv[++i];
        if (strcmp(a, "--library") == 0 && n_lib < MAX_ITEMS) libraries[n_lib++] = v;
        else if (strcmp(a, "--input") == 0 && n_in < MAX_ITEMS) {
            const char* eq = strchr(v, '=');
            if (!eq || eq == v) fail(EXIT_USAGE, "--input wants NAME=FILE, got %s", v);
            in_names[n_in] = strndup(v, (size_t)(eq - v));
            in_files[n_in++] = eq + 1;
        }
        else if (strcmp(a, "--out") == 0) out_dir = v;
        else if (strcmp(a, "--threads") == 0) threads = parse_count(v, a);
        else if (strcmp(a, "--repeat") == 0) repeat = parse_count(v, a);
        else if (strcmp(a, "--intra-op") == 0) intra_op = parse_count(v, a);
        else if (strcmp(a, "--cycles") == 0) cycles = parse_count(v, a);
        else fail(EXIT_USAGE, "unknown option %s (or too many)", a);
    }
    if (!model)
        fail(EXIT_USAGE, "usage: oc_host LIBONNXRUNTIME MODEL [--library PATH]... [--input NAME=FILE]... "
                         "[--out DIR] [--threads N] [--repeat K] [--intra-op N] [--cycles C]");
    if (threads < 1 || repeat < 1) fail(EXIT_USAGE, "--threads and --repeat must be at least 1");
    const uint16_t one = 1;
    if (*(const uint8_t*)&one != 1) fail(EXIT_USAGE, "raw files are little-endian; this machine is not");

    /* The runtime, as any C host gets it: the library's one exported entry point. RTLD_LOCAL
     * keeps ORT's symbols out of the global namespace, as in a host that loads it as a plugin. */
    void* lib = dlopen(ort_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) fail(EXIT_RUNTIME, "dlopen %s: %s", ort_path, dlerror());
    const OrtApiBase* (*get_api_base)(void) = (const OrtApiBase* (*)(void))dlsym(lib, "OrtGetApiBase");
    if (!get_api_base) fail(EXIT_RUNTIME, "%s has no OrtGetApiBase", ort_path);
    const OrtApiBase* base = get_api_base();
    ort = base->GetApi(ORTCUSTOM_ORT_API_VERSION);
    if (!ort)
        fail(EXIT_RUNTIME, "ONNX Runtime %s does not provide API version %d (ORT >= 1.%d needed)",
             base->GetVersionString(), ORTCUSTOM_ORT_API_VERSION, ORTCUSTOM_ORT_API_VERSION);
    printf("ORT: %s\n", base->GetVersionString());

    OrtEnv* env = NULL;
    OrtSessionOptions* options = NULL;
    OrtSession* session = NULL;
    OrtMemoryInfo* cpu = NULL;
    OrtAllocator* alloc = NULL;
    check(ort->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "oc_host", &env), EXIT_RUNTIME);
    for (long c = 1; c <= cycles; c++) {
        check(ort->CreateSessionOptions(&options), EXIT_RUNTIME);
        for (size_t i = 0; i < n_lib; i++)
            check(ort->RegisterCustomOpsLibrary_V2(options, libraries[i]), EXIT_REGISTER);
        check(ort->CreateSession(env, model, options, &session), EXIT_SESSION);
        ort->ReleaseSession(session);
        ort->ReleaseSessionOptions(options);
        if (c == 1 || c % (cycles / 8 ? cycles / 8 : 1) == 0) printf("RSS %ld %ld\n", c, rss_bytes());
    }
    check(ort->CreateSessionOptions(&options), EXIT_RUNTIME);
    if (intra_op >= 0) check(ort->SetIntraOpNumThreads(options, (int)intra_op), EXIT_USAGE);
    for (size_t i = 0; i < n_lib; i++)
        check(ort->RegisterCustomOpsLibrary_V2(options, libraries[i]), EXIT_REGISTER);
    check(ort->CreateSession(env, model, options, &session), EXIT_SESSION);

    /* Inputs: our buffers wrapped (not copied) as CPU tensors, shared read-only by all threads. */
    Tensor inputs[MAX_ITEMS];
    OrtValue* in_values[MAX_ITEMS];
    check(ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu), EXIT_RUNTIME);
    for (size_t i = 0; i < n_in; i++) {
        read_raw(in_files[i], &inputs[i]);
        if (inputs[i].strings) {  /* ORT owns a string tensor's elements: made, then filled */
            if (!alloc) check(ort->GetAllocatorWithDefaultOptions(&alloc), EXIT_RUNTIME);
            check(ort->CreateTensorAsOrtValue(alloc, inputs[i].dims, inputs[i].rank, inputs[i].dtype->type,
                                              &in_values[i]), EXIT_RUN);
            if (inputs[i].count)
                check(ort->FillStringTensor(in_values[i], (const char* const*)inputs[i].strings, inputs[i].count),
                      EXIT_RUN);
            continue;
        }
        check(ort->CreateTensorWithDataAsOrtValue(cpu, inputs[i].data, inputs[i].bytes, inputs[i].dims,
                                                  inputs[i].rank, inputs[i].dtype->type, &in_values[i]),
              EXIT_RUN);
    }

    /* Outputs: all of the model's, by the names the session reports. */
    size_t n_out = 0;
    char* out_names[MAX_ITEMS];
    if (!alloc) check(ort->GetAllocatorWithDefaultOptions(&alloc), EXIT_RUNTIME);
    check(ort->SessionGetOutputCount(session, &n_out), EXIT_SESSION);
    if (n_out > MAX_ITEMS) fail(EXIT_SESSION, "model has %zu outputs; oc_host takes %d", n_out, MAX_ITEMS);
    for (size_t i = 0; i < n_out; i++) check(ort->SessionGetOutputName(session, i, alloc, &out_names[i]), EXIT_SESSION);

    /* The runs: `threads` threads on the one session at once (ORT allows concurrent Run). */
    Job* jobs = calloc((size_t)threads, sizeof *jobs);
    pthread_t* tids = calloc((size_t)threads, sizeof *tids);
    for (long t = 0; t < threads; t++) {
        jobs[t] = (Job){session, n_in, n_out, (const char* const*)in_names, (const OrtValue* const*)in_values,
                        (const char* const*)out_names, (int)repeat,
                        calloc(n_out ? n_out : 1, sizeof(Tensor)), NULL, 0};
        if (pthread_create(&tids[t], NULL, worker, &jobs[t]) != 0) fail(EXIT_RUN, "pthread_create failed");
    }
    for (long t = 0; t < threads; t++) pthread_join(tids[t], NULL);
    for (long t = 0; t < threads; t++)
        if (jobs[t].error) fail(EXIT_RUN, "%s", jobs[t].error);
    for (long t = 0; t < threads; t++) {
        int differs = jobs[t].mismatch;
        for (size_t i = 0; i < n_out && !differs; i++) differs = !same_tensor(&jobs[0].results[i], &jobs[t].results[i]);
        if (differs) {
            printf("MISMATCH: thread %ld's outputs differ from %s\n", t,
                   jobs[t].mismatch ? "its own first run" : "thread 0's");
            return EXIT_MISMATCH;
        }
    }

    for (size_t i = 0; i < n_out; i++) {
        const Tensor* r = &jobs[0].results[i];
        printf("OUTPUT %s %s", out_names[i], r->dtype->name);
        for (size_t k = 0; k < r->rank; k++) printf(" %lld", (long long)r->dims[k]);
        putchar('\n');
        if (!out_dir) continue;
        char* path = malloc(strlen(out_dir) + strlen(out_names[i]) + 6);
        char* file = strcpy(path + strlen(out_dir) + 1, out_names[i]);
        for (char* c = file; *c; c++) if (*c == '/') *c = '_';
        memcpy(path, out_dir, strlen(out_dir));
        path[strlen(out_dir)] = '/';
        strcat(path, ".bin");
        if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) fail(EXIT_USAGE, "mkdir %s: %s", out_dir, strerror(errno));
        write_raw(path, r);
        free(path);
    }

    /* Asked while the session lives: ORT unloads the custom-op libraries (and what they pulled in)
     * with the last session that uses them. */
    printf("LIBPYTHON: %s\n", libpython_mapped() ? "yes" : "no");

    for (long t = 0; t < threads; t++) {
        free_tensors(jobs[t].results, n_out);
        free(jobs[t].results);
    }
    for (size_t i = 0; i < n_out; i++) check(ort->AllocatorFree(alloc, out_names[i]), EXIT_RUNTIME);
    for (size_t i = 0; i < n_in; i++) {
        ort->ReleaseValue(in_values[i]);
        for (size_t k = 0; inputs[i].strings && k < inputs[i].count; k++) free(inputs[i].strings[k]);
        free(inputs[i].strings);
        free(inputs[i].data);
        free((char*)in_names[i]);
    }
    free(jobs);
    free(tids);
    ort->ReleaseMemoryInfo(cpu);
    ort->ReleaseSession(session);
    ort->ReleaseSessionOptions(options);
    ort->ReleaseEnv(env);
    /* libonnxruntime stays loaded: unloading it runs its static destructors for nothing. */
    printf("OK\n");
    return 0;
}

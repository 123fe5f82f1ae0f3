/* The --wrap functions of alloc_fault.h. One mutex guards the count and the table of
 * live allocations (an open-addressing table with backward-shift deletion, so that it
 * never fills with tombstones). */
#include "tests/faults/alloc_fault.h"

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);

#define SLOTS (1u << 20) /* more than the loader keeps live at once (about 40k on f=12) */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool armed;
static long fail_at, count, live;
static size_t live_bytes;
static void *failed_site;
static void **rec_site;
static unsigned long *rec_stack;
static long rec_cap;
static struct slot {
    void *p;
    size_t n;
} table[SLOTS];

static size_t home(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 44) & (SLOTS - 1);
}

static void remember(void *p, size_t n)
{
    if (!p || live >= (long)SLOTS - 1) return;
    size_t i = home(p);
    while (table[i].p) i = (i + 1) & (SLOTS - 1);
    table[i] = (struct slot){p, n};
    live++;
    live_bytes += n;
}

static void forget(void *p)
{
    if (!p || !live) return;
    size_t i = home(p);
    while (table[i].p && table[i].p != p) i = (i + 1) & (SLOTS - 1);
    if (!table[i].p) return; /* not counted: made before arming, or by a shared library */
    live--;
    live_bytes -= table[i].n;
    table[i].p = NULL;
    /* backward shift: move later members of the probe run into the hole when their home allows */
    for (size_t j = (i + 1) & (SLOTS - 1); table[j].p; j = (j + 1) & (SLOTS - 1)) {
        size_t h = home(table[j].p);
        bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
        if (movable) {
            table[i] = table[j];
            table[j].p = NULL;
            i = j;
        }
    }
}

/* FNV-1a over the return addresses of up to 8 frames above the allocation function. */
__attribute__((noinline)) static unsigned long stack_hash(void)
{
    void *frames[11];
    int n = backtrace(frames, 11);
    unsigned long h = 1469598103934665603ul;
    for (int i = 3; i < n; i++) /* 0: stack_hash, 1: count_one, 2: the __wrap_ function */
        for (int b = 0; b < (int)sizeof(void *); b++) {
            h ^= ((uintptr_t)frames[i] >> (8 * b)) & 0xff;
            h *= 1099511628211ul;
        }
    return h;
}

/* Counts one allocation; true when it is the one to fail. */
__attribute__((noinline)) static bool count_one(void *site)
{
    if (!armed) return false;
    ++count;
    if (rec_site && count <= rec_cap) {
        rec_site[count - 1] = site;
        rec_stack[count - 1] = stack_hash();
    }
    if (count != fail_at) return false;
    failed_site = site;
    return true;
}

void alloc_fault_arm(long n)
{
    pthread_mutex_lock(&mu);
    if (live) memset(table, 0, sizeof table);
    armed = true;
    fail_at = n;
    count = live = 0;
    live_bytes = 0;
    failed_site = NULL;
    pthread_mutex_unlock(&mu);
}

void alloc_fault_record(void **site, unsigned long *stack, long cap)
{
    pthread_mutex_lock(&mu);
    rec_site = site;
    rec_stack = stack;
    rec_cap = site && stack ? cap : 0;
    pthread_mutex_unlock(&mu);
}

void alloc_fault_disarm(void)
{
    pthread_mutex_lock(&mu);
    armed = false;
    pthread_mutex_unlock(&mu);
}

long alloc_fault_count(void)
{
    pthread_mutex_lock(&mu);
    long c = count;
    pthread_mutex_unlock(&mu);
    return c;
}

bool alloc_fault_fired(void)
{
    return alloc_fault_site() != NULL;
}

void *alloc_fault_site(void)
{
    pthread_mutex_lock(&mu);
    void *s = failed_site;
    pthread_mutex_unlock(&mu);
    return s;
}

long alloc_fault_live(size_t *bytes)
{
    pthread_mutex_lock(&mu);
    long n = live;
    if (bytes) *bytes = live_bytes;
    pthread_mutex_unlock(&mu);
    return n;
}

/* The common body: fail or allocate with `call`, then remember the result. */
#define ALLOCATE(bytes, call)                                                 \
    do {                                                                      \
        pthread_mutex_lock(&mu);                                              \
        bool fail = count_one(__builtin_return_address(0));                   \
        pthread_mutex_unlock(&mu);                                            \
        if (fail) {                                                           \
            errno = ENOMEM;                                                   \
            return NULL;                                                      \
        }                                                                     \
        void *q = (call);                                                     \
        pthread_mutex_lock(&mu);                                              \
        if (armed) remember(q, (bytes));                                      \
        pthread_mutex_unlock(&mu);                                            \
        return q;                                                             \
    } while (0)

void *__wrap_malloc(size_t n)
{
    ALLOCATE(n, __real_malloc(n));
}

void *__wrap_calloc(size_t k, size_t n)
{
    ALLOCATE(k * n, __real_calloc(k, n));
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
    ALLOCATE(n, __real_aligned_alloc(a, n));
}

char *__wrap_strdup(const char *s)
{
    ALLOCATE(strlen(s) + 1, __real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n)
{
    ALLOCATE(strnlen(s, n) + 1, __real_strndup(s, n));
}

void *__wrap_realloc(void *p, size_t n)
{
    pthread_mutex_lock(&mu);
    bool fail = count_one(__builtin_return_address(0));
    pthread_mutex_unlock(&mu);
    if (fail) {
        errno = ENOMEM;
        return NULL; /* p stays valid, as with a real failure */
    }
    void *q = __real_realloc(p, n);
    pthread_mutex_lock(&mu);
    if (q) {
        forget(p);
        if (armed) remember(q, n);
    }
    pthread_mutex_unlock(&mu);
    return q;
}

int __wrap_posix_memalign(void **out, size_t a, size_t n)
{
    pthread_mutex_lock(&mu);
    bool fail = count_one(__builtin_return_address(0));
    pthread_mutex_unlock(&mu);
    if (fail) return ENOMEM;
    int rc = __real_posix_memalign(out, a, n);
    pthread_mutex_lock(&mu);
    if (!rc && armed) remember(*out, n);
    pthread_mutex_unlock(&mu);
    return rc;
}

void __wrap_free(void *p)
{
    pthread_mutex_lock(&mu);
    forget(p);
    pthread_mutex_unlock(&mu);
    __real_free(p);
}

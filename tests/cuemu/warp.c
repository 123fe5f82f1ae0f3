/* Results of the built-in warp collectives, computed by the last lane to arrive.
 * lanes[l] is lane l's posted argument for every l in mask, NULL otherwise. */
#include "tests/cuemu/sched.h"

/* Byte loops, not memcpy/memset/memcmp: under TSan those are intercepted and would
 * count as this lane touching the other lanes' stacks (tsan_model.h). volatile keeps
 * the compiler from turning the loops back into library calls. */
static void copy(void *dst, const void *src, unsigned n)
{
    volatile unsigned char *d = dst;
    const volatile unsigned char *s = src;
    for (unsigned i = 0; i < n; i++)
        d[i] = s[i];
}

static void fill(void *dst, unsigned char v, unsigned n)
{
    volatile unsigned char *d = dst;
    for (unsigned i = 0; i < n; i++)
        d[i] = v;
}

static int bytes_equal(const void *a, const void *b, unsigned n)
{
    const volatile unsigned char *x = a, *y = b;
    for (unsigned i = 0; i < n; i++)
        if (x[i] != y[i])
            return 0;
    return 1;
}

/* Source lane of a shuffle, following the CUDA Programming Guide: lanes are split into
 * segments of `width`; idx wraps inside the segment, up/down return the caller's own
 * value when the source would leave the segment, xor may read lower segments only. */
static unsigned shfl_source(enum cuemu_warp_kind kind, unsigned lane, unsigned param,
                            unsigned width)
{
    unsigned seg = lane & ~(width - 1);
    switch (kind) {
    case CUEMU_WARP_SHFL_IDX: return seg + (param & (width - 1));
    case CUEMU_WARP_SHFL_UP: return lane - seg >= param ? lane - param : lane;
    case CUEMU_WARP_SHFL_DOWN: return lane - seg + param < width ? lane + param : lane;
    default: {
        unsigned src = lane ^ param;
        return src >= seg + width ? lane : src;
    }
    }
}

static unsigned reduce(enum cuemu_reduce_op op, unsigned acc, unsigned v)
{
    switch (op) {
    case CUEMU_REDUCE_ADD: return acc + v;
    case CUEMU_REDUCE_MIN_U: return v < acc ? v : acc;
    case CUEMU_REDUCE_MAX_U: return v > acc ? v : acc;
    case CUEMU_REDUCE_MIN_S: return (int)v < (int)acc ? v : acc;
    case CUEMU_REDUCE_MAX_S: return (int)v > (int)acc ? v : acc;
    case CUEMU_REDUCE_AND: return acc & v;
    case CUEMU_REDUCE_OR: return acc | v;
    case CUEMU_REDUCE_XOR: return acc ^ v;
    }
    return acc;
}

static void set_u32(struct cuemu_warp_arg *a, unsigned v)
{
    copy(a->out.b, &v, sizeof v);
}

const char *cuemu_warp_compute(struct cuemu_warp_arg *const lanes[32], unsigned mask)
{
    unsigned first = (unsigned)__builtin_ctz(mask);
    const struct cuemu_warp_arg *a0 = lanes[first];
    unsigned votes = 0, acc = 0;
    for (unsigned l = 0; l < 32; l++)
        if (mask >> l & 1)
            votes |= (unsigned)(lanes[l]->param != 0) << l;
    switch (a0->kind) {
    case CUEMU_WARP_SYNC:
    case CUEMU_WARP_CUSTOM:
        break;
    case CUEMU_WARP_SHFL_IDX:
    case CUEMU_WARP_SHFL_UP:
    case CUEMU_WARP_SHFL_DOWN:
    case CUEMU_WARP_SHFL_XOR:
        for (unsigned l = 0; l < 32; l++) {
            if (!(mask >> l & 1))
                continue;
            unsigned src = shfl_source(a0->kind, l, (unsigned)lanes[l]->param,
                                       (unsigned)a0->width);
            /* Reading a lane that does not take part is undefined: poison it. */
            if (src < 32 && (mask >> src & 1))
                copy(lanes[l]->out.b, lanes[src]->in.b, a0->size);
            else
                fill(lanes[l]->out.b, 0xFF, a0->size);
        }
        break;
    case CUEMU_WARP_BALLOT:
    case CUEMU_WARP_ANY:
    case CUEMU_WARP_ALL:
        for (unsigned l = 0; l < 32; l++)
            if (mask >> l & 1)
                set_u32(lanes[l], a0->kind == CUEMU_WARP_BALLOT ? votes
                                  : a0->kind == CUEMU_WARP_ANY  ? votes != 0
                                                                : votes == mask);
        break;
    case CUEMU_WARP_MATCH_ANY:
    case CUEMU_WARP_MATCH_ALL: {
        unsigned all = mask;
        for (unsigned l = 0; l < 32; l++) {
            if (!(mask >> l & 1))
                continue;
            unsigned same = 0;
            for (unsigned o = 0; o < 32; o++)
                if ((mask >> o & 1) && bytes_equal(lanes[o]->in.b, lanes[l]->in.b, a0->size))
                    same |= 1u << o;
            set_u32(lanes[l], same);
            if (same != mask)
                all = 0;
        }
        if (a0->kind == CUEMU_WARP_MATCH_ALL) /* out = mask or 0; out.q[1] = predicate */
            for (unsigned l = 0; l < 32; l++)
                if (mask >> l & 1) {
                    set_u32(lanes[l], all);
                    lanes[l]->out.q[1] = all != 0;
                }
        break;
    }
    case CUEMU_WARP_REDUCE: {
        enum cuemu_reduce_op op = (enum cuemu_reduce_op)a0->param;
        copy(&acc, a0->in.b, sizeof acc);
        for (unsigned l = first + 1; l < 32; l++)
            if (mask >> l & 1) {
                unsigned v;
                copy(&v, lanes[l]->in.b, sizeof v);
                acc = reduce(op, acc, v);
            }
        for (unsigned l = 0; l < 32; l++)
            if (mask >> l & 1)
                set_u32(lanes[l], acc);
        break;
    }
    }
    return NULL;
}

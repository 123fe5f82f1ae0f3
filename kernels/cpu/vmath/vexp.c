/* swin_cpu_softmax_row: max-subtracted softmax of one attention row on 4-lane vectors, with
 * exp4_nonpos of cpu_vec.h (~1 ulp; its clamp at -87 gives 1.6e-38 instead of a smaller
 * number, which cannot matter in a softmax whose row sum is >= 1). No fast-math: the result
 * does not depend on build flags. */
#include "kernels/cpu/vmath/cpu_rowops.h"

#include "kernels/cpu/vmath/cpu_vec.h"

#include <math.h>

static inline v4f max4(v4f a, v4f b)
{
    const v4i gt = a > b;
    return (v4f)(((v4i)a & gt) | ((v4i)b & ~gt));
}

void swin_cpu_softmax_row(float *r, const float *bias, const int *label, int label_i, int n)
{
    const int n4 = n / 4 * 4;
    /* logits + bias (+ mask), stored back, and their max: 4 lanes, then across lanes and the tail */
    const v4f minus100 = {-100.0f, -100.0f, -100.0f, -100.0f};
    v4f vm = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int j = 0; j < n4; j += 4) {
        v4f v = load4(r + j) + load4(bias + j);
        if (label) {
            v4i lj;
            memcpy(&lj, label + j, sizeof lj);
            v += (v4f)((v4i)minus100 & (lj != label_i));
        }
        memcpy(r + j, &v, sizeof v);
        vm = max4(v, vm);
    }
    float mx = vm[0];
    for (int k = 1; k < 4; k++) mx = vm[k] > mx ? vm[k] : mx;
    for (int j = n4; j < n; j++) {
        r[j] += bias[j];
        if (label && label[j] != label_i) r[j] += -100.0f;
        mx = r[j] > mx ? r[j] : mx;
    }
    /* exp(r - max) and its sum; the tail goes through a zero-filled block whose padding
     * lanes are not added */
    v4f acc = {0};
    for (int j = 0; j < n4; j += 4) {
        const v4f v = exp4_nonpos(load4(r + j) - mx);
        memcpy(r + j, &v, sizeof v);
        acc += v;
    }
    float sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    if (n4 < n) {
        v4f v = {0};
        for (int k = 0; n4 + k < n; k++) v[k] = r[n4 + k];
        v = exp4_nonpos(v - mx);
        for (int k = 0; n4 + k < n; k++) {
            r[n4 + k] = v[k];
            sum += v[k];
        }
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < n; j++) r[j] *= inv;
}

/* swin_cpu_softmax_row with an exp written on GCC/Clang vector extensions (4 lanes, one SSE2
 * register), since the compiler will not if-convert a
 * scalar clamp under the default -ftrapping-math.
 * exp: Cephes expf (range reduction by ln 2 in two parts, degree-5 polynomial, exponent by
 * integer add), max error ~1 ulp on [-87, 0]; arguments below -87 are clamped to -87
 * (1.6e-38 instead of a smaller number, which cannot matter in a softmax whose row sum is
 * >= 1). No fast-math: the result does not depend on build flags. */
#include "kernels/cpu/cpu_rowops.h"

#include "kernels/cpu/cpu_vec.h"

/* exp(x) per lane for x <= 0 */
static inline v4f exp4_nonpos(v4f x)
{
    const v4f lo = {-87.0f, -87.0f, -87.0f, -87.0f};
    const v4i keep = x > lo;                                  /* all-ones lanes where x > -87 */
    const v4f cx = (v4f)(((v4i)x & keep) | ((v4i)lo & ~keep));
    /* n = round(x / ln 2) with the 1.5 * 2^23 trick (round to nearest in float) */
    const v4f fn = (cx * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    v4f r = cx - fn * 0.693359375f;                           /* ln 2 = 0.693359375 - 2.12194440e-4 */
    r = r - fn * -2.12194440e-4f;
    v4f p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* 2^n, n in [-126, 0], built in the exponent field */
    const v4i bits = (__builtin_convertvector(fn, v4i) + 127) << 23;
    return p * (v4f)bits;
}

static inline v4f max4(v4f a, v4f b)
{
    const v4i gt = a > b;
    return (v4f)(((v4i)a & gt) | ((v4i)b & ~gt));
}

void swin_cpu_softmax_row(float *r, int n)
{
    const int n4 = n / 4 * 4;
    /* max: 4 lanes, then across lanes and the tail */
    v4f vm = {r[0], r[0], r[0], r[0]};
    for (int j = 0; j < n4; j += 4) vm = max4(load4(r + j), vm);
    float mx = vm[0];
    for (int k = 1; k < 4; k++) mx = vm[k] > mx ? vm[k] : mx;
    for (int j = n4; j < n; j++) mx = r[j] > mx ? r[j] : mx;
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

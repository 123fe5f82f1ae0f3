/* The device's idle clock (kernels/ops.h device_idle): a cube's upload and download
 * (pack_input then unpack_output, a piece of the device's work), a read that starts the
 * clock afresh, then two more pieces with the host asleep 200 ms before the first and 50 ms
 * between them: the clock reads the 50 ms gap, not the time since the piece before the
 * read, then starts afresh again (a second read is 0). Emulated, an
 * event's time is the host's clock at the record; on a GPU, the moment the stream reaches
 * it, which is the same here because the stream is empty when the host records. */
#include "tests/kernels/cuda/cuda_op_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t)) {
    }
}

static void piece(ct_env *e, cvol *v, float *host)
{
    ct_rc("pack_input", swin_cuda_ops.pack_input(e->gpu, v->dev, host), &swin_cuda_ops, e->gpu);
    ct_rc("unpack_output", swin_cuda_ops.unpack_output(e->gpu, host, v->dev), &swin_cuda_ops, e->gpu);
}

int main(void)
{
    test_rng r = {0x9e3779b97f4a7c15ULL};
    ct_env e;
    ct_env_init(&e, 64);
    ct_env_upload(&e);
    const int d = 9, h = 8, w = 7, c = 3;
    cvol v = cvol_new(d, h, w, c, c, &r, 0.0f, 0.0f);
    float *host = calloc((size_t)d * h * w * c, sizeof(float));
    double idle = -1;
    long long missed = -1;
    bool ok = check_true("the CUDA backend has an idle clock", swin_cuda_ops.device_idle != NULL);
    piece(&e, &v, host); /* a piece before the clock starts afresh: its end must not count */
    ct_rc("device_idle", swin_cuda_ops.device_idle(e.gpu, &idle, &missed), &swin_cuda_ops, e.gpu);
    sleep_ms(200);
    piece(&e, &v, host);
    sleep_ms(50);
    piece(&e, &v, host);
    ct_rc("device_idle", swin_cuda_ops.device_idle(e.gpu, &idle, &missed), &swin_cuda_ops, e.gpu);
    printf("idle %.4f s, %lld gaps not timed\n", idle, missed);
    ok &= check_true("the 50 ms between the pieces read, not the 200 ms before the first",
                     idle >= 0.049 && idle < 0.2 && missed == 0);
    ct_rc("device_idle", swin_cuda_ops.device_idle(e.gpu, &idle, &missed), &swin_cuda_ops, e.gpu);
    ok &= check_true("read again with no work between: 0", idle == 0 && missed == 0);
    free(host);
    cvol_free(&v);
    ct_env_free(&e);
    return test_exit(ok);
}

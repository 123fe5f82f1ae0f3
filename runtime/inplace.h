/* Narrowing a tensor's channel count over its own bytes, plane by plane (channels-last, a
 * plane = one z slice of h x w voxels). With P = a plane's bytes at a pitch, the planes
 * [z0, z1) of the input occupy [z0 Pin, z1 Pin) and those of the output [z0 Pout, z1 Pout).
 * A chunk of planes may run as one ordinary op when what it writes misses what it reads and
 * every plane still unread; the few planes where that cannot hold go through a planned
 * scratch buffer of their own size. So a full-resolution map narrows without a second
 * full-resolution buffer (docs/memory-plan.md). */
#ifndef SWIN_INPLACE_H
#define SWIN_INPLACE_H

#include "runtime/exec.h"

/* t (cin channels, a whole tensor) becomes conv1x1(t) + bias with cout < cin channels; its
 * tensor shrinks to cout channels. Chunks run from z = 0 up: [z0, z1) writes below
 * z1 Pout <= z0 Pin, which the chunks before it have read. */
void swin_inplace_conv1x1_narrow(struct swin_exec *e, struct swin_activation *t, const float *w, const float *bias,
                                 int cout);

#endif

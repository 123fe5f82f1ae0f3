/* The CUDA backend behind the backend interface (kernels/backend.h), registry name "cuda". */
#ifndef SWIN_CUDA_IFACE_H
#define SWIN_CUDA_IFACE_H

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct swin_backend_iface swin_cuda_backend_iface;

#ifdef __cplusplus
}
#endif

#endif

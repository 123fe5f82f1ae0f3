/* The CPU backend behind the backend interface (kernels/backend.h), registry name "cpu". */
#ifndef SWIN_CPU_IFACE_H
#define SWIN_CPU_IFACE_H

#include "kernels/backend.h"

extern const struct swin_backend_iface swin_cpu_backend_iface;

#endif

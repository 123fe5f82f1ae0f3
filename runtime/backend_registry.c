/* The registry's table. The build compiles this file into each library variant with
 * SWIN_BACKEND_LIST naming the interfaces of the backends it links, as
 * X(swin_cpu_backend_iface)X(swin_cuda_backend_iface) (swin_backend_registry() in
 * cmake/backends.cmake): the variant's list of backends is the one place that says which
 * a build has. */
#include "runtime/backend_registry.h"

#include <string.h>

#define X(iface) extern const struct swin_backend_iface iface;
SWIN_BACKEND_LIST
#undef X

#define X(iface) &iface,
const struct swin_backend_iface *const swin_backend_registry[] = {SWIN_BACKEND_LIST NULL};
#undef X

const struct swin_backend_iface *swin_backend_find(const char *name)
{
    for (const struct swin_backend_iface *const *b = swin_backend_registry; *b; b++)
        if (!strcmp((*b)->name, name)) return *b;
    return NULL;
}

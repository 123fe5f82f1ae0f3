/* The backend registry: the interface (kernels/backend.h) of every backend this library
 * links, as the build lists them (cmake/backends.cmake), found by name. */
#ifndef SWIN_BACKEND_REGISTRY_H
#define SWIN_BACKEND_REGISTRY_H

#include "kernels/backend.h"

/* The backends, NULL-terminated, in the build's order. */
extern const struct swin_backend_iface *const swin_backend_registry[];

/* The backend whose name is `name`, or NULL when this build has none. */
const struct swin_backend_iface *swin_backend_find(const char *name);

#endif

/* A credential kept in a file of its own (a STOW-RS destination's password or bearer token),
 * so that the configuration holds no secret and an outside job can rotate a token: read at
 * start to check it and again at each delivery. */
#ifndef SWIN_NODE_SECRET_H
#define SWIN_NODE_SECRET_H

#include <stddef.h>

#include "core/status.h"

#define NODE_SECRET_MAX 8192 /* bytes of a secret and its NUL: a JSON Web Token fits */

/* The file's first line without its line end into out (size bytes); refused, naming key and
 * path but never the content, when the file cannot be read, the line is empty, does not fit,
 * or holds a control character. */
swin_status node_secret_read(const char *path, const char *key, char *out, size_t size, swin_error *err);

/* Overwrites a secret that is no longer needed. */
void node_secret_wipe(char *s, size_t size);

#endif

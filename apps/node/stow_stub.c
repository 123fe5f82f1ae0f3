/* STOW-RS delivery when the node was built without libcurl (stow.h). */
#include "apps/node/stow.h"

swin_status node_stow_init(swin_error *err)
{
    return swin_error_set(err, SWIN_ERR_ARG,
                          "destinations of kind stowrs need libcurl: this swinrun was built without it (install "
                          "libcurl4-openssl-dev and build again)");
}

swin_status node_stow(const struct node_dest *d, int timeout_s, const char *const *files, int nfiles, swin_error *err)
{
    (void)timeout_s, (void)files, (void)nfiles;
    return swin_error_set(err, SWIN_ERR_ARG, "%s: STOW-RS needs libcurl", d->name);
}

/* swinrun serve in a build without DCMTK (SWIN_DICOM=OFF): it says so. */
#include <stdio.h>

#include "apps/node/serve.h"

int node_serve_main(int argc, char **argv)
{
    fprintf(stderr, "swinrun serve: this swinrun was built without DICOM support (DCMTK): install libdcmtk-dev and "
                    "build again\n");
    return 2;
}

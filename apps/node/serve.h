/* swinrun serve CONFIG: the DICOM node (docs/node.md). */
#ifndef SWIN_NODE_SERVE_H
#define SWIN_NODE_SERVE_H

/* argv[0] "serve", then CONFIG and options; returns the exit status. */
int node_serve_main(int argc, char **argv);

#endif

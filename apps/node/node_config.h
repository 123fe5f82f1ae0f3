/* The DICOM node's configuration: one JSON file (docs/node.md), read whole and checked before
 * the node starts; every refusal is one line naming the key, what it takes and what it got.
 * Unknown keys are refused too (a misspelt limit must not fall back to its default). */
#ifndef SWIN_NODE_CONFIG_H
#define SWIN_NODE_CONFIG_H

#ifdef __cplusplus
extern "C" { /* core/status.h declares C functions without saying so */
#endif

#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "pipeline/swinrun.h"

#define NODE_CONFIG_MAX_BYTES (1u << 20)
#define NODE_MAX_CALLERS 64
#define NODE_MAX_DESTS 8
#define NODE_MAX_WORKERS 16
#define NODE_AE_MAX 17 /* 16 characters + NUL */
#define NODE_HOST_MAX 256
#define NODE_PATH_MAX 1024

/* DICOM TLS (PS3.15 B.1, DCMTK's dcmtls): PEM files. The node's listening side needs its
 * certificate and key; a destination needs them only when it asks the node for one. With
 * verify_peer the peer must present a certificate signed by one in ca. */
struct node_tls {
    bool on;
    char certificate[NODE_PATH_MAX];
    char private_key[NODE_PATH_MAX];
    char ca[NODE_PATH_MAX]; /* trusted certificates, one PEM file */
    char crl[NODE_PATH_MAX]; /* revoked certificates, one PEM file: the peer's is checked against it */
    /* a DIMSE destination's: the name its certificate must carry (DNS name or IP address; the
     * destination's host unless given) */
    char peer_name[NODE_HOST_MAX];
    bool verify_peer;
};

struct node_caller {
    char ae[NODE_AE_MAX];
    char host[NODE_HOST_MAX]; /* "" = any host */
};

enum node_dest_kind { NODE_DEST_DIMSE, NODE_DEST_STOWRS };

struct node_dest {
    char name[33]; /* [A-Za-z0-9_-]: it names the delivered markers on disk */
    enum node_dest_kind kind;
    char url[NODE_PATH_MAX]; /* stowrs: the DICOMweb base; the node POSTs to URL/studies */
    char ae[NODE_AE_MAX];
    char host[NODE_HOST_MAX];
    int port;
    struct node_tls tls; /* dimse: DICOM TLS; stowrs: https's client certificate and trusted CAs */
    /* stowrs credentials, read from their files at each delivery: HTTP Basic (user and the
     * password in password_file), an OAuth 2 bearer token (token_file), or one fetched with the
     * client credentials grant (oauth); one or none */
    char user[128];
    char password_file[NODE_PATH_MAX];
    char token_file[NODE_PATH_MAX];
    struct node_oauth {
        bool on;
        char token_url[NODE_PATH_MAX]; /* the authorization server's token endpoint */
        char client_id[256];
        char client_secret_file[NODE_PATH_MAX];
        char scope[512];              /* "" = none sent */
    } oauth;
};

enum node_backend { NODE_BACKEND_AUTO, NODE_BACKEND_CPU, NODE_BACKEND_CUDA };
enum node_precision { NODE_FP32, NODE_FP16, NODE_BF16 };
enum node_seg { NODE_SEG_BINARY, NODE_SEG_LABELMAP, NODE_SEG_NONE };

struct node_config {
    char ae[NODE_AE_MAX]; /* the node's own AE title */
    int port;
    struct node_tls tls; /* the listening side's */
    char spool[4096];    /* the node's folder: spool, journal, outbox, dead letters, status */
    char log[4096];      /* JSON lines of study events; "-" (the default): stderr */
    /* the model and its contexts */
    char model[4096];
    swin_model_load_params load; /* merge_order, normalize, norm_groups: what a checkpoint cannot say */
    int cube[3];                 /* 0 0 0: the export cube */
    enum node_backend backend;
    enum node_precision precision;
    int threads;      /* per worker; 0 = every core */
    size_t mem_limit; /* for all workers' contexts together; 0 = none */
    int workers;
    /* outputs */
    enum node_seg seg;
    bool rtstruct, report;
    /* receiving */
    double stable_age_s; /* a study is complete when nothing arrived for this long */
    struct node_caller callers[NODE_MAX_CALLERS];
    int ncallers;
    /* delivering */
    struct node_dest dests[NODE_MAX_DESTS];
    int ndests;
    int attempts;         /* per destination, the first included */
    double first_delay_s; /* before the second attempt; doubled each time */
    double max_delay_s;
    int timeout_s; /* network timeouts of one attempt */
    /* limits */
    int max_associations;
    size_t instance_bytes;
    int instances_per_study;
    size_t spool_bytes; /* 0 = the disk's free space only */
    int queued_studies;
};

/* Parses len bytes of JSON; name is the file's name for the messages. */
swin_status node_config_parse(const char *text, size_t len, const char *name, struct node_config *c, swin_error *err);
/* Reads and parses the file at path. */
swin_status node_config_load(const char *path, struct node_config *c, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif

#include "weights/onnx/provenance.h"

#include <stdio.h>
#include <string.h>

/* torch's two exporters name nodes differently: TorchScript after the module path
 * ("/swinViT/layers1.0/blocks.0/attn/MatMul"), dynamo after the aten op ("node_conv3d"). */
static const char *torch_exporter(const struct swin_onnx_file *f)
{
    int slash = 0, node_ = 0;
    for (int i = 0; i < f->n_nodes; i++) {
        const char *n = f->nodes[i]->name ? f->nodes[i]->name : "";
        slash += n[0] == '/';
        node_ += !strncmp(n, "node_", 5);
    }
    if (node_ > slash) return "torch.onnx dynamo exporter";
    if (slash > node_) return "torch.onnx TorchScript exporter (dynamo=False)";
    return "torch.onnx";
}

static void describe_exporter(const struct swin_onnx_file *f, struct swin_source *out)
{
    const char *v = f->producer_version;
    if (!strcmp(f->producer, "pytorch"))
        snprintf(out->exporter, sizeof out->exporter, "%s (pytorch %s)", torch_exporter(f), v[0] ? v : "?");
    else if (f->producer[0])
        snprintf(out->exporter, sizeof out->exporter, "%s %s", f->producer, v);
    else
        snprintf(out->exporter, sizeof out->exporter, "unknown (the file names no producer)");
    const char *sep = "";
    out->post[0] = 0;
    if (f->onnxsim_metadata) {
        snprintf(out->post, sizeof out->post, "onnx-simplifier");
        sep = ", ";
    }
    if (f->ort_domains)
        snprintf(out->post + strlen(out->post), sizeof out->post - strlen(out->post),
                 "%sONNX Runtime offline optimisation", sep);
}

static const char *type_name(int dtype)
{
    return dtype == ONNX_FLOAT16 ? "float16" : dtype == ONNX_BFLOAT16 ? "bfloat16" : "float32";
}

/* The bound weight tensors' storage type: float32, a 16-bit type cast back to float32
 * by Cast nodes, or a 16-bit graph (whose input is 16-bit too). */
static void describe_storage(const struct swin_onnx_index *g, const struct swin_walk_out *w, struct swin_source *out)
{
    int count[3] = {0, 0, 0};   /* float32, float16, bfloat16 */
    for (int i = 0; i < w->n_plans; i++) {
        const struct swin_onnx_tensor *t = w->plans[i].t;
        if (t) count[t->dtype == ONNX_FLOAT16 ? 1 : t->dtype == ONNX_BFLOAT16 ? 2 : 0]++;
    }
    int half = count[1] >= count[2] ? ONNX_FLOAT16 : ONNX_BFLOAT16;
    int n_half = count[1] + count[2];
    bool half_input = false;
    for (int i = 0; i < g->f->n_inputs; i++)
        if (!swin_onnx_index_tensor(g, g->f->inputs[i].name)) half_input = g->f->inputs[i].elem_type == half;
    if (!n_half)
        snprintf(out->weight_storage, sizeof out->weight_storage, "float32");
    else if (half_input)
        snprintf(out->weight_storage, sizeof out->weight_storage, "%s graph (%d of %d weight tensors %s; computed in float32 here)",
                 type_name(half), n_half, n_half + count[0], type_name(half));
    else
        snprintf(out->weight_storage, sizeof out->weight_storage, "%s (%d of %d weight tensors), cast to float32 in the graph",
                 type_name(half), n_half, n_half + count[0]);
}

void swin_provenance_detect(const struct swin_onnx_index *g, const struct swin_walk_out *w, struct swin_source *out)
{
    out->opset = (int)g->f->opset;
    describe_exporter(g->f, out);
    describe_storage(g, w, out);
}

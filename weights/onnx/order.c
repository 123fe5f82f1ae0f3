#include "weights/onnx/order.h"

#include <stdlib.h>
#include <string.h>

/* Input k of node n: its explicit inputs, then (for If) the inputs of its branches' nodes,
 * which may name values of the enclosing graph. NULL past the end. */
static const char *input_at(const SwinOnnx__NodeProto *n, size_t k)
{
    if (k < n->n_input) return n->input[k];
    k -= n->n_input;
    for (size_t a = 0; a < n->n_attribute; a++) {
        const SwinOnnx__GraphProto *sg = n->attribute[a]->g;
        if (!sg) continue;
        for (size_t i = 0; i < sg->n_node; i++) {
            if (k < sg->node[i]->n_input) return sg->node[i]->input[k];
            k -= sg->node[i]->n_input;
        }
    }
    return NULL;
}

swin_status swin_onnx_dataflow_order(const struct swin_onnx_index *g, int **order, int *n, swin_error *err)
{
    int nn = g->f->n_nodes;
    unsigned char *state = calloc((size_t)nn + 1, 1);   /* 0 new, 1 on the stack, 2 emitted */
    int *out = malloc(((size_t)nn + 1) * sizeof *out);
    struct frame { int node; size_t next; } *stack = malloc(((size_t)nn + 1) * sizeof *stack);
    if (!state || !out || !stack) {
        free(state);
        free(out);
        free(stack);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory ordering the graph", g->f->path);
    }
    int cnt = 0;
    for (int o = 0; o < g->f->n_outputs; o++) {
        int root = swin_onnx_index_producer(g, g->f->outputs[o].name);
        if (root < 0 || state[root]) continue;
        int sp = 0;
        stack[sp++] = (struct frame){root, 0};
        state[root] = 1;
        while (sp) {
            struct frame *fr = &stack[sp - 1];
            const char *in = input_at(g->f->nodes[fr->node], fr->next);
            if (in) {
                fr->next++;
                int p = swin_onnx_index_producer(g, in);
                if (p >= 0 && !state[p]) {   /* state 1 would be a cycle: not followed */
                    state[p] = 1;
                    stack[sp++] = (struct frame){p, 0};
                }
                continue;
            }
            state[fr->node] = 2;
            out[cnt++] = fr->node;
            sp--;
        }
    }
    free(state);
    free(stack);
    *order = out;
    *n = cnt;
    return SWIN_OK;
}

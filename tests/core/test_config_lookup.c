/* What a configuration's reader looks up in the trees of core/json.c and core/yaml.c: a
 * repeated key's last value (Python's dict, which MONAI's ConfigParser reads into), YAML's
 * merge keys below a mapping's own, the first of merged mappings winning, an alias a copy. */
#include <string.h>

#include "core/json.h"
#include "core/yaml.h"
#include "tests/common/check.h"

static json_node *parse(const char *text, bool yaml)
{
    char why[200];
    json_node *n = yaml ? swin_yaml_parse(text, strlen(text), why, sizeof why)
                        : swin_json_parse(text, strlen(text), why, sizeof why);
    return n;
}

/* The text of root's member path a.b (one or two keys). */
static const char *member(const json_node *root, const char *a, const char *b)
{
    const json_node *n = swin_json_get(root, a);
    if (b) n = swin_json_get(n, b);
    return n ? swin_json_text(n) : NULL;
}

static bool text_is(const char *what, const char *got, const char *want)
{
    bool ok = got && !strcmp(got, want);
    return check_true(what, ok);
}

int main(void)
{
    bool ok = true;
    json_node *j = parse("{\"feature_size\": 24, \"net\": {\"k\": 1}, \"feature_size\": 48}", false);
    ok &= text_is("JSON: a repeated key reads as its last", member(j, "feature_size", NULL), "48");
    swin_json_free(j);

    json_node *y = parse("feature_size: 24\nfeature_size: 48\n"
                         "base: &b {roi: 96, mode: constant}\n"
                         "over:\n  mode: gaussian\n  <<: *b\n"
                         "two:\n  <<: [{roi: 64}, {roi: 32, sw: 4}]\n"
                         "later:\n  <<: {roi: 1}\n  <<: {roi: 2}\n"
                         "copy: *b\n",
                         true);
    ok &= check_true("YAML parsed", y != NULL);
    ok &= text_is("YAML: a repeated key reads as its last", member(y, "feature_size", NULL), "48");
    ok &= text_is("<<: the mapping's own key wins over the merged one", member(y, "over", "mode"), "gaussian");
    ok &= text_is("<<: a key only merged is there", member(y, "over", "roi"), "96");
    ok &= text_is("<<: [a, b]: the first mapping wins", member(y, "two", "roi"), "64");
    ok &= text_is("<<: [a, b]: the second's other keys are there", member(y, "two", "sw"), "4");
    ok &= text_is("two <<: the later wins", member(y, "later", "roi"), "2");
    ok &= text_is("an alias reads as the anchored mapping", member(y, "copy", "mode"), "constant");
    swin_json_free(y);
    return test_exit(ok);
}

/* yaml_dump FILE...: core/yaml.c's reading of each FILE, one line each: "ok " and the value as
 * JSON, every member as read (a repeated key twice, merged members first), numbers as Python's
 * json writes them (an integer's digits, a float with '.', "Infinity", "NaN"); or "error " and
 * the reason. The conformance test (yaml_conformance.py) compares it with PyYAML. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/yaml.h"

static void write_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void write_number(const char *t)
{
    const char *digits = t + (*t == '-');
    if (*digits && !digits[strspn(digits, "0123456789")]) {
        fputs(t, stdout);
        return;
    }
    double v = strtod(t, NULL);
    if (isnan(v)) {
        fputs("NaN", stdout);
    } else if (isinf(v)) {
        fputs(v < 0 ? "-Infinity" : "Infinity", stdout);
    } else {
        char b[40];
        snprintf(b, sizeof b, "%.17g", v);
        printf("%s%s", b, strpbrk(b, ".e") ? "" : ".0");
    }
}

static void write_node(const json_node *n)
{
    switch (n->kind) {
    case JSON_NULL: fputs("null", stdout); break;
    case JSON_BOOL: fputs(n->text, stdout); break;
    case JSON_NUMBER: write_number(n->text); break;
    case JSON_STRING: write_string(n->text); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        putchar(n->kind == JSON_ARRAY ? '[' : '{');
        for (const json_node *c = n->child; c; c = c->next) {
            if (n->kind == JSON_OBJECT) {
                write_string(c->key);
                putchar(':');
            }
            write_node(c);
            if (c->next) putchar(',');
        }
        putchar(n->kind == JSON_ARRAY ? ']' : '}');
        break;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: yaml_dump FILE...\n");
        return 1;
    }
    static char text[16 << 20];
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        size_t len = fread(text, 1, sizeof text, f);
        fclose(f);
        char why[256];
        json_node *root = swin_yaml_parse(text, len, why, sizeof why);
        if (!root) {
            printf("error %s\n", why);
            continue;
        }
        fputs("ok ", stdout);
        write_node(root);
        putchar('\n');
        swin_json_free(root);
    }
    return 0;
}

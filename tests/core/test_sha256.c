/* core/sha256 against the FIPS 180-4 example digests, and fed in uneven pieces. */
#include <string.h>

#include "core/sha256.h"
#include "tests/common/check.h"

static bool digest_is(const char *what, const void *data, size_t n, const char *want)
{
    char hex[65];
    swin_sha256_hex(data, n, hex);
    return check_true(what, !strcmp(hex, want));
}

int main(void)
{
    bool ok = true;
    ok &= digest_is("empty", "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ok &= digest_is("abc", "abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ok &= digest_is("448 bits", two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    static char million[1000000];
    memset(million, 'a', sizeof million);
    ok &= digest_is("a million a", million, sizeof million,
                    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* the same million bytes in pieces of 1..97 bytes: the block boundaries fall everywhere */
    struct swin_sha256 s;
    unsigned char d1[32], d2[32];
    swin_sha256_init(&s);
    for (size_t at = 0, step = 1; at < sizeof million; at += step, step = step % 97 + 1)
        swin_sha256_update(&s, million + at, at + step > sizeof million ? sizeof million - at : step);
    swin_sha256_final(&s, d1);
    swin_sha256_init(&s);
    swin_sha256_update(&s, million, sizeof million);
    swin_sha256_final(&s, d2);
    ok &= check_true("pieces = one update", !memcmp(d1, d2, 32));
    return test_exit(ok);
}
